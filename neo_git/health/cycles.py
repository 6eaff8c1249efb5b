"""One import cycle shown the way a person reads it: a → b → c → a, following the edges.

A strongly connected component says *which* modules are tangled; to fix it one needs
a loop through them in import order, with the line of each import. `cycle_steps`
finds a shortest such loop (breadth-first, inside the component), and for a cycle
that exists only because of deferred imports, a loop through one of them that uses
as few deferred imports as possible. `format_cycle` prints a bounded number of steps:
a 3,000-module cycle is a line, not 60 KB.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from neo_git.health.model import ImportGraph

SHOWN_STEPS = 6   # edges printed per cycle; the rest is "… N more modules"


class Step(NamedTuple):
    """One edge of a cycle: *source* imports *target* at *at* ("path:line")."""

    source: str
    target: str
    at: str
    deferred: bool

    def to_dict(self) -> dict:
        """JSON form."""
        return {"from": self.source, "to": self.target, "at": self.at, "deferred": self.deferred}


def cycle_steps(graph: ImportGraph, component: Sequence[str], *, import_time: bool,
                start: str | None = None) -> list[Step]:
    """A loop through *component* in import order.

    *import_time*: only import-time edges, starting at *start* (default: the component's
    first module). Otherwise the loop goes through a deferred edge of the component (the
    first in sorted order) and back with as few other deferred edges as possible."""
    members = set(component)
    late = graph.deferred_edges
    if import_time:
        first = start if start in members else component[0]
        nodes = _shortest_loop(first, lambda n: _targets(graph.edges, n, members) - late.get(n, frozenset()))
    else:
        entry = next(((u, v) for u in sorted(members) for v in sorted(late.get(u, ()))
                      if v in members), None)
        if entry is None:   # no deferred edge inside: the component is an import-time cycle
            return cycle_steps(graph, component, import_time=True, start=start)
        u, v = entry
        back = _fewest_deferred_path(v, u, lambda n: _targets(graph.edges, n, members), late)
        nodes = [u] + back if back else [u, v, u]
    return [Step(a, b, graph.site(a, b), b in late.get(a, ())) for a, b in zip(nodes, nodes[1:])]


def _targets(edges: Mapping[str, Iterable[str]], node: str, members: set[str]) -> frozenset[str]:
    return frozenset(t for t in edges.get(node, ()) if t in members)


def _shortest_loop(start: str, successors) -> list[str]:
    """[start, …, start] with the fewest edges (breadth-first); [start] alone if there is none."""
    parent: dict[str, str] = {}
    queue: deque[str] = deque()
    for target in sorted(successors(start)):
        if target != start and target not in parent:
            parent[target] = start
            queue.append(target)
    while queue:
        node = queue.popleft()
        following = sorted(successors(node))
        if start in following:
            path = [node]
            while path[-1] != start:
                path.append(parent[path[-1]])
            return path[::-1] + [start]
        for target in following:
            if target not in parent:
                parent[target] = node
                queue.append(target)
    return [start]


def _fewest_deferred_path(source: str, goal: str, successors, late: Mapping[str, frozenset[str]]) -> list[str]:
    """Nodes from *source* to *goal* (both included) crossing as few deferred edges as
    possible (a 0-1 breadth-first search: an import-time edge costs 0, a deferred one 1);
    [] if *goal* is unreachable."""
    parent: dict[str, str | None] = {source: None}
    distance = {source: 0}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for target in sorted(successors(node)):
            step = 1 if target in late.get(node, ()) else 0
            total = distance[node] + step
            if target in distance and distance[target] <= total:
                continue
            distance[target] = total
            parent[target] = node
            if step:
                queue.append(target)
            else:
                queue.appendleft(target)
    if goal not in parent:
        return []
    path = [goal]
    while path[-1] != source:
        path.append(parent[path[-1]])   # type: ignore[arg-type]
    return path[::-1]


def format_cycle(steps: Sequence[Step], limit: int = SHOWN_STEPS) -> str:
    """`a.py:3 → b.py:7 (deferred) → a.py`: each module with the line that imports the next;
    past *limit* edges, "… N more modules" and the way back to the start."""
    if not steps:
        return ""
    shown = [f"{step.at}{' (deferred)' if step.deferred else ''}" for step in steps[:limit]]
    hidden = len(steps) - limit
    if hidden > 0:
        shown.append(f"… {hidden} more module{'s' if hidden != 1 else ''}")
    shown.append(steps[0].source)
    return " → ".join(shown)


def deferred_sites(steps: Sequence[Step]) -> list[str]:
    """Where the deferred imports of a loop are written."""
    return [step.at for step in steps if step.deferred]
