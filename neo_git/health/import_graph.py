"""Resolve the raw imports of a snapshot's files into one repository import graph.

Each language family has a resolver module in `neo_git.health.resolvers`; this
module groups files by family, runs each resolver and merges the graphs. Config
files (go.mod, tsconfig.json/jsconfig.json, Cargo.toml) are read through `read`,
which serves the same snapshot (git objects), never the work tree.

Nodes are repository-relative file paths, except Go, whose nodes are package
directories ("." for the repository root) because Go cycles are between packages.
Imports that leave the repository (stdlib, third-party) are not edges. The
per-language semantics (Python follows grimp; Go leaves out _test.go files; Rust
`mod` items are parent -> child edges) are documented in each resolver module.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from neo_git.health.model import FileMetrics, ImportGraph
from neo_git.health.resolvers import go, java, javascript, python, rust

Resolver = Callable[[Mapping[str, FileMetrics], Callable[[str], "bytes | None"]], ImportGraph]

# language (FileMetrics.language) -> family; one resolver per family.
FAMILY_OF: dict[str, str] = {
    "python": "python",
    "javascript": "javascript", "typescript": "javascript", "tsx": "javascript",
    "go": "go",
    "rust": "rust",
    "java": "java",
}
RESOLVERS: dict[str, Resolver] = {
    "python": python.resolve,
    "javascript": javascript.resolve,
    "go": go.resolve,
    "rust": rust.resolve,
    "java": java.resolve,
}


def build_import_graph(
    files: Mapping[str, FileMetrics], read: Callable[[str], bytes | None]
) -> ImportGraph:
    """The import graph of one snapshot: nodes are files (Go: package directories).

    Every node appears in `edges` (possibly with no targets) and in `language_of`.
    Files of a language without a resolver are nodes without edges.
    """
    groups: dict[str, dict[str, FileMetrics]] = {}
    edges: dict[str, frozenset[str]] = {}
    type_checking: dict[str, frozenset[str]] = {}
    language_of: dict[str, str] = {}
    deferred: dict[str, frozenset[str]] = {}
    sites: dict[str, dict[str, int | str]] = {}
    for path, metrics in files.items():
        family = FAMILY_OF.get(metrics.language)
        if family is None:
            edges[path] = frozenset()
            language_of[path] = metrics.language
        else:
            groups.setdefault(family, {})[path] = metrics
    for family in sorted(groups):
        graph = RESOLVERS[family](groups[family], read)
        edges.update(graph.edges)
        type_checking.update(graph.type_checking_edges)
        language_of.update(graph.language_of)
        deferred.update(graph.deferred_edges)
        sites.update(graph.sites)
    return ImportGraph(edges=edges, type_checking_edges=type_checking, language_of=language_of,
                       deferred_edges=deferred, sites=sites)
