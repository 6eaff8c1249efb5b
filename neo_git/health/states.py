"""The whole-snapshot *state* stored per tree, and the helpers that read and build it.

A state is plain JSON (cached by tree id in `cache.py`):
    files:      path -> [blob, language, lines, functions, max_nesting, nesting_line, has_errors, package]
    skipped:    path -> reason
    families:   resolver family -> {"edges", "late", "tc", "lang", "reads"}: edges node -> {target: where}
                (where: the line in the node's file, or "path:line"), late node -> targets reached only
                by deferred imports, tc node -> TYPE_CHECKING-only targets, reads path -> blob or None
    components: every-edge import cycles (SCCs of size >= 2), or None until computed
    import_time: the cycles of import-time edges alone, or None until computed
"""
from __future__ import annotations

from typing import NamedTuple

from neo_git.health.model import FileMetrics, ImportGraph

STATE_FORMAT = "state-2"   # bump with any change to the layout above


class FileRow(NamedTuple):
    """One file of a state; stored as a JSON array in this field order (json writes a
    NamedTuple as an array, so the stored layout is STATE_FORMAT's)."""

    blob: str               # hex id of the measured blob
    language: str
    lines: int
    functions: int
    max_nesting: int
    nesting_line: int
    has_errors: bool
    package: str | None     # Java/Go package, else None


def typed_rows(state: dict) -> dict:
    """*state* (as loaded from JSON) with its file rows as FileRow; TypeError on a damaged row."""
    state["files"] = {path: FileRow(*row) for path, row in state["files"].items()}
    return state


def store_files(state: dict, measured: dict[str, FileMetrics], sources: list) -> None:
    """Write the rows of the *measured* files (their blobs from *sources*) into *state*."""
    blobs = {path: oid for path, oid, _language in sources}
    for path, m in measured.items():
        state["files"][path] = FileRow(str(blobs[path]), m.language, m.lines, m.functions, m.max_nesting,
                                       m.nesting_line, m.has_errors, m.package)


def metrics_from_row(path: str, row: FileRow) -> FileMetrics:
    """The FileMetrics of one stored row (without imports: those are in the families)."""
    return FileMetrics(path, row.language, row.lines, row.functions, row.max_nesting, (), row.package,
                       row.has_errors, row.nesting_line)


_FAMILIES: dict[str, str] = {}


def family_of(language: str) -> str:
    """The resolver family of a language (typescript and tsx resolve with javascript)."""
    if not _FAMILIES:
        from neo_git.health.import_graph import FAMILY_OF  # the resolvers load on first use

        _FAMILIES.update(FAMILY_OF)
    return _FAMILIES.get(language, language)


def by_family(files: dict[str, FileMetrics]) -> dict[str, dict[str, FileMetrics]]:
    """*files* grouped by resolver family."""
    groups: dict[str, dict[str, FileMetrics]] = {}
    for path, m in files.items():
        groups.setdefault(family_of(m.language), {})[path] = m
    return groups


def same_import_edges(old: dict, new: dict) -> bool:
    """Two families' import edges are equal, deferred ones included (sites may differ: an edit
    that moved an import down a line keeps the cycles); the common case: an edit kept its imports."""
    return _same_targets(old["edges"], new["edges"]) and _same_targets(old.get("late", {}), new.get("late", {}))


def _same_targets(old: dict, new: dict) -> bool:
    if old is new:
        return True
    if old.keys() != new.keys():
        return False
    return all(old[node] is targets or set(old[node]) == set(targets) for node, targets in new.items())


def state_graph(state: dict) -> ImportGraph:
    """The import graph of all families of a state."""
    edges: dict[str, frozenset[str]] = {}
    type_checking: dict[str, frozenset[str]] = {}
    language_of: dict[str, str] = {}
    late: dict[str, frozenset[str]] = {}
    sites: dict[str, dict] = {}
    for name in sorted(state["families"]):
        part = state["families"][name]
        edges.update((n, frozenset(t)) for n, t in part["edges"].items())
        sites.update(part["edges"])
        type_checking.update((n, frozenset(t)) for n, t in part["tc"].items())
        late.update((n, frozenset(t)) for n, t in part["late"].items())
        language_of.update(part["lang"])
    return ImportGraph(edges=edges, type_checking_edges=type_checking, language_of=language_of,
                       deferred_edges=late, sites=sites)


def cycles_of(state: dict) -> None:
    """Fill in the state's every-edge and import-time cycles where they are not known yet."""
    from neo_git.health.graph import strongly_connected_components

    if state["components"] is not None and state.get("import_time") is not None:
        return
    graph = state_graph(state)
    if state["components"] is None:
        state["components"] = strongly_connected_components(graph.edges)
    if state.get("import_time") is None:
        # A graph without deferred edges has the same cycles either way.
        state["import_time"] = (strongly_connected_components(graph.import_time_edges())
                                if graph.deferred_edges else state["components"])
