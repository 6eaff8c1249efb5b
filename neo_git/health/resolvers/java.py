"""Java: `import a.b.C` -> the file declaring class C in package a.b.

A file's class is its stem (Java requires the public top-level class to match
the file name). `a.b.*` imports every file of package a.b; `a.b.C.Inner` and
static `a.b.C.member` land in C's file (longest known prefix). References
within one package need no import and are not seen, so they are not edges.
"""
from __future__ import annotations

import posixpath
from collections.abc import Mapping

from neo_git.health.model import FileMetrics, ImportGraph
from neo_git.health.resolvers import EdgeSet, Reader


def resolve(files: Mapping[str, FileMetrics], read: Reader) -> ImportGraph:
    """Edges between the Java files of one snapshot."""
    classes: dict[str, str] = {}            # fully-qualified class name -> file
    packages: dict[str, set[str]] = {}      # package -> its files
    for path in sorted(files):
        package = files[path].package or ""
        stem = posixpath.basename(path).rsplit(".", 1)[0]
        classes.setdefault(f"{package}.{stem}" if package else stem, path)
        packages.setdefault(package, set()).add(path)
    edges = EdgeSet()
    for path, metrics in files.items():
        edges.node(path)
        for ref in metrics.imports:
            for target in sorted(_resolve_name(ref.target, classes, packages)):
                edges.add(path, target, ref)
    return edges.graph({p: files[p].language for p in files})


def _resolve_name(name: str, classes: Mapping[str, str], packages: Mapping[str, set[str]]) -> set[str]:
    wildcard = name.endswith(".*")
    parts = name.removesuffix(".*").split(".")
    if wildcard and ".".join(parts) in packages:
        return set(packages[".".join(parts)])
    for end in range(len(parts), 1, -1):   # default-package classes cannot be imported
        hit = classes.get(".".join(parts[:end]))
        if hit is not None:
            return {hit}
    return set()
