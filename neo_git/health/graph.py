"""Strongly connected components of an import graph (the import cycles)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping


def strongly_connected_components(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Components of size >= 2, each sorted, the list sorted: deterministic output.

    Iterative Tarjan (an explicit stack, so 10k-module chains do not hit Python's
    recursion limit). Targets that are not keys are nodes too; self-loops are ignored.
    """
    successors: dict[str, list[str]] = {}
    for node, targets in edges.items():
        successors.setdefault(node, [])
        for target in targets:
            successors.setdefault(target, [])
            if target != node:
                successors[node].append(target)
    for node in successors:
        successors[node] = sorted(set(successors[node]))

    index_of: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(successors):
        if start in index_of:
            continue
        work = [(start, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index_of[node] = lowlink[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            recurse = False
            targets = successors[node]
            while position < len(targets):
                target = targets[position]
                position += 1
                if target not in index_of:
                    work.append((node, position))
                    work.append((target, 0))
                    recurse = True
                    break
                if target in on_stack:
                    lowlink[node] = min(lowlink[node], index_of[target])
            if recurse:
                continue
            if lowlink[node] == index_of[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) >= 2:
                    components.append(sorted(component))
            if work:
                parent = work[-1][0]
                lowlink[parent] = min(lowlink[parent], lowlink[node])
    return sorted(components)
