"""Per-language import resolvers: raw `ImportRef`s -> edges between repository nodes.

Each module exposes `resolve(files, read) -> ImportGraph` for the files of its
language family; `neo_git.health.import_graph` dispatches and merges. Helpers here are
shared path arithmetic on repository-relative '/' paths (never the work tree).
"""
from __future__ import annotations

import posixpath
from typing import Callable, Iterator, Mapping

from neo_git.health.model import ImportGraph

Reader = Callable[[str], "bytes | None"]


def parent_dir(path: str) -> str:
    """Directory of a repository path; '' is the repository root."""
    return posixpath.dirname(path)


def join(directory: str, *parts: str) -> str | None:
    """Join and normalise; None when the result escapes the repository root."""
    joined = posixpath.normpath(posixpath.join(directory or ".", *parts))
    if joined == ".":
        return ""
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return joined


def ancestors(directory: str) -> Iterator[str]:
    """`directory` and every directory above it, ending with '' (the root)."""
    while directory:
        yield directory
        directory = parent_dir(directory)
    yield ""


def read_text(read: Reader, path: str) -> str | None:
    """Decoded contents of a snapshot file, None if absent or unreadable."""
    try:
        data = read(path)
    except (KeyError, OSError, ValueError):
        return None
    if data is None:
        return None
    return data.decode("utf-8", errors="replace")


def make_graph(
    edges: Mapping[str, set[str]],
    language_of: Mapping[str, str],
    type_checking_edges: Mapping[str, set[str]] | None = None,
) -> ImportGraph:
    """Freeze edge sets, dropping self-loops; every node gets an entry in `edges`."""
    def freeze(raw: Mapping[str, set[str]]) -> dict[str, frozenset[str]]:
        return {node: frozenset(t for t in targets if t != node) for node, targets in raw.items()}

    frozen = freeze(edges)
    for node in language_of:
        frozen.setdefault(node, frozenset())
    return ImportGraph(
        edges=frozen,
        type_checking_edges={k: v for k, v in freeze(type_checking_edges or {}).items() if v},
        language_of=dict(language_of),
    )
