"""Where the import cycles are now: the files of each current cycle and the import line
behind each edge between them.

The health snapshot knows the edges (module -> module) but not which line made them:
the resolvers turn a file's imports into edges all at once. To label an edge, the
imports of the modules in cycles are resolved one *slot* at a time: in round k every
such module keeps only its k-th import (a Go package: one file's import; all other
files keep none), so an edge that appears from a module in that round comes from
exactly that import. Rounds = the most imports any module in a cycle has, whatever
the number of modules. The label is the source line
itself, read from the blob (what a person would grep for).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.health.measure import HealthSnapshot
    from neo_git.health.model import FileMetrics

LINE_CHARS = 160        # an import line longer than this is cut (minified code)
MAX_NODES = 40          # a cycle with more modules is listed, and drawn only in part


@dataclass(frozen=True)
class CycleEdge:
    """One import between two modules of the same cycle."""

    source: str       # importing module (a file; Go: a package folder)
    target: str       # imported module
    file: str         # the file holding the import
    line: int         # 1-based, 0 when unknown
    text: str         # the import line as written (stripped), "" when unknown
    kind: str         # ImportRef.kind ("from", "import", "require", …)


@dataclass(frozen=True)
class Cycle:
    """One strongly connected component of the import graph, with labelled edges."""

    nodes: tuple[str, ...]
    edges: tuple[CycleEdge, ...]
    languages: dict[str, str]
    import_time: bool | None = None   # also a cycle of import-time edges (None: not known)


def current_cycles(repo: pygit2.Repository, snapshot: HealthSnapshot, tree: pygit2.Tree) -> list[Cycle]:
    """The cycles of *snapshot* (taken of *tree*), biggest first, each edge with its import line."""
    components = [tuple(c) for c in snapshot.components]
    if not components:
        return []
    graph = snapshot.graph
    in_cycle = {node: number for number, component in enumerate(components) for node in component}
    import_time = _import_time_nodes(snapshot)
    labelled = _labelled_edges(repo, snapshot, tree, in_cycle)
    cycles = []
    for _number, component in enumerate(components):
        members = set(component)
        edges = []
        for source in component:
            for target in sorted(graph.edges.get(source, ())):
                if target not in members:
                    continue
                found = labelled.get((source, target)) or [CycleEdge(source, target, source, 0, "", "")]
                edges.extend(found)
        cycles.append(Cycle(component, tuple(edges), {n: graph.language_of.get(n, "") for n in component},
                            None if import_time is None else bool(members & import_time)))
    return sorted(cycles, key=lambda c: (-len(c.nodes), c.nodes))


def _import_time_nodes(snapshot: HealthSnapshot) -> set[str] | None:
    """Modules in import-time cycles, when the health engine reports them (docs/architecture.md §6), else None."""
    components = getattr(snapshot, "import_time_components", None)
    if components is None:
        return None
    return {node for component in components for node in component}


def _labelled_edges(repo: pygit2.Repository, snapshot: HealthSnapshot, tree: pygit2.Tree,
                    in_cycle: dict[str, int]) -> dict[tuple[str, str], list[CycleEdge]]:
    """(source, target) -> the imports behind that edge, for edges inside a cycle."""
    from neo_git.health.import_graph import FAMILY_OF, RESOLVERS
    from neo_git.health.metrics import analyze_source
    from neo_git.health.resolvers.go import package_of

    def node_of(path: str, language: str) -> str | None:
        return package_of(path) if language == "go" else path

    def read(path: str) -> bytes | None:
        try:
            return cast("pygit2.Blob", repo[tree[path].id]).data
        except (KeyError, ValueError, TypeError, AttributeError):
            return None

    families: dict[str, dict[str, FileMetrics]] = {}
    for path, metrics in snapshot.file_metrics.items():
        family = FAMILY_OF.get(metrics.language)
        if family is not None:
            families.setdefault(family, {})[path] = metrics
    found: dict[tuple[str, str], list[CycleEdge]] = {}
    for family, files in sorted(families.items()):
        # node -> its (file, metrics with imports, source lines, import index), one per import:
        # a Go package is several files, and each round may keep only one import per node.
        slots: dict[str, list[tuple[str, FileMetrics, list[str], int]]] = {}
        for path, metrics in sorted(files.items()):
            node = node_of(path, metrics.language)
            if node not in in_cycle:
                continue
            data = read(path)
            full = analyze_source(path, data) if data is not None else None
            if data is None or full is None or not full.imports:
                continue
            lines = data.decode("utf-8", "replace").splitlines()
            slots.setdefault(node, []).extend((path, full, lines, i) for i in range(len(full.imports)))
        bare = {path: dataclasses.replace(m, imports=()) for path, m in files.items()}
        for round_number in range(max(map(len, slots.values()), default=0)):
            trial = dict(bare)
            chosen = {}
            for node, entries in slots.items():
                if round_number < len(entries):
                    path, full, lines, index = chosen[node] = entries[round_number]
                    trial[path] = dataclasses.replace(full, imports=(full.imports[index],))
            graph = RESOLVERS[family](trial, read)
            for node, (path, full, lines, index) in chosen.items():
                ref = full.imports[index]
                for target in sorted(graph.edges.get(node, ())):
                    if target == node or in_cycle.get(target) != in_cycle[node]:
                        continue
                    text = lines[ref.line - 1].strip()[:LINE_CHARS] if 0 < ref.line <= len(lines) else ""
                    edge = CycleEdge(node, target, path, ref.line, text, ref.kind)
                    bucket = found.setdefault((node, target), [])
                    if edge not in bucket:
                        bucket.append(edge)
    return found
