"""Go: import paths -> package directories, via the module paths of go.mod files.

Nodes are package directories ("." for the repository root), because Go forbids
and detects cycles between packages, not files. `_test.go` files are left out of
the package graph: an external test package (`package foo_test`) may import
packages that import `foo`, which is legal Go and not a cycle. Files under
`testdata/`, `vendor/`, or a name starting with "." or "_" are not packages of
this repository either (the go tool skips them).
Nested modules are honoured: the longest module path that prefixes an import wins.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from neo_git.health.model import FileMetrics, ImportGraph
from neo_git.health.resolvers import EdgeSet, Reader, ancestors, parent_dir, read_text

_MODULE_LINE = re.compile(r'^\s*module\s+"?([^\s"/][^\s"]*)"?\s*(?://.*)?$', re.M)


def package_of(path: str) -> str | None:
    """The package node a .go file belongs to, or None if it is outside the graph."""
    parts = path.split("/")
    if path.endswith("_test.go") or any(
        part in ("testdata", "vendor") or part[:1] in (".", "_") for part in parts
    ):
        return None   # the go tool ignores testdata/, vendored code, and ./_ prefixed names
    return parent_dir(path) or "."


def resolve(files: Mapping[str, FileMetrics], read: Reader) -> ImportGraph:
    """Edges between the Go package directories of one snapshot."""
    imports_of: dict[str, list] = {}        # package -> [(file, ImportRef)], files in path order
    for path in sorted(files):
        node = package_of(path)
        if node is not None:
            imports_of.setdefault(node, []).extend((path, ref) for ref in files[path].imports)
    modules = _find_modules(imports_of, read)      # module path -> module dir
    by_length = sorted(modules.items(), key=lambda item: len(item[0]), reverse=True)
    edges = EdgeSet()
    for node, imports in imports_of.items():
        edges.node(node)
        for path, ref in imports:
            target = _directory_for(ref.target, by_length)
            if target is not None and target in imports_of:
                edges.add(node, target, ref, path)
    return edges.graph({node: "go" for node in imports_of})


def module_path(go_mod: str) -> str | None:
    """The `module` directive of a go.mod file."""
    match = _MODULE_LINE.search(go_mod)
    return match.group(1) if match else None


def _find_modules(packages: Mapping[str, object], read: Reader) -> dict[str, str]:
    checked: set[str] = set()
    modules: dict[str, str] = {}
    for node in packages:
        for directory in ancestors("" if node == "." else node):
            if directory in checked:
                continue
            checked.add(directory)
            text = read_text(read, f"{directory}/go.mod" if directory else "go.mod")
            name = module_path(text) if text is not None else None
            if name is not None:
                modules.setdefault(name, directory)
    return modules


def _directory_for(import_path: str, modules: list[tuple[str, str]]) -> str | None:
    for name, directory in modules:
        if import_path == name or import_path.startswith(name + "/"):
            rest = import_path[len(name):].strip("/")
            target = "/".join(p for p in (directory, rest) if p)
            # A directory inside a nested module belongs to that module, not this one.
            if _owning_module_dir(target, modules) != directory:
                return None
            return target or "."
    return None


def _owning_module_dir(target: str, modules: list[tuple[str, str]]) -> str | None:
    owners = [d for _, d in modules if d == "" or target == d or target.startswith(d + "/")]
    return max(owners, key=len, default=None)
