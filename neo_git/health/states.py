"""The whole-snapshot *state* stored per tree, and the helpers that read and build it.

A state is plain JSON (cached by tree id in `cache.py`):
    files:      path -> [blob, language, lines, functions, max_nesting, nesting_line, has_errors, package]
    skipped:    path -> reason
    families:   resolver family -> {"edges", "tc", "lang", "reads"} (reads: path -> blob or None)
    components: import cycles (SCCs of size >= 2), or None until computed
"""
from __future__ import annotations

from typing import NamedTuple

from neo_git.health.model import FileMetrics, ImportGraph

STATE_FORMAT = "state-1"   # bump with any change to the layout above


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


def family_of(language: str) -> str:
    """The resolver family of a language (typescript and tsx resolve with javascript)."""
    from neo_git.health.import_graph import FAMILY_OF

    return FAMILY_OF.get(language, language)


def by_family(files: dict[str, FileMetrics]) -> dict[str, dict[str, FileMetrics]]:
    """*files* grouped by resolver family."""
    groups: dict[str, dict[str, FileMetrics]] = {}
    for path, m in files.items():
        groups.setdefault(family_of(m.language), {})[path] = m
    return groups


def same_import_edges(old: dict, new: dict) -> bool:
    """Equal import edges (target lists are unordered); the common case: an edit kept its imports."""
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
    for name in sorted(state["families"]):
        part = state["families"][name]
        edges.update((n, frozenset(t)) for n, t in part["edges"].items())
        type_checking.update((n, frozenset(t)) for n, t in part["tc"].items())
        language_of.update(part["lang"])
    return ImportGraph(edges=edges, type_checking_edges=type_checking, language_of=language_of)
