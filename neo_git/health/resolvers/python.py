"""Python: dotted module names and relative imports -> repository .py/.pyi files.

Semantics follow grimp (the reference for "does this package have a cycle"):
`import a.b.c` is an edge to a/b/c only, not to the parent packages a/__init__.py
and a/b/__init__.py that Python also executes - counting those would put every
`__init__` that imports its own submodules into a cycle with each of them. A name
that is not a module falls back one level (`from a.b import Thing` -> a/b;
`import a.b.missing` -> a/b), again as grimp does.
"""
from __future__ import annotations

from collections.abc import Mapping

from neo_git.health.model import FileMetrics, ImportGraph, ImportRef
from neo_git.health.resolvers import EdgeSet, Reader, ancestors, join, parent_dir

INIT_NAMES = ("__init__.py", "__init__.pyi")


def resolve(files: Mapping[str, FileMetrics], read: Reader) -> ImportGraph:
    """Edges between the Python files of one snapshot (TYPE_CHECKING ones kept apart)."""
    index = _ModuleIndex(set(files))
    edges = EdgeSet()
    for path, metrics in files.items():
        edges.node(path)
        for ref in metrics.imports:
            for target in index.resolve(path, ref):
                edges.add(path, target, ref)
    return edges.graph({p: files[p].language for p in files})


class _ModuleIndex:
    """Which dotted names exist as files, under which source roots."""

    def __init__(self, paths: set[str]) -> None:
        packages = {parent_dir(p) for p in paths if p.rsplit("/", 1)[-1] in INIT_NAMES}
        roots = {""}
        for package in packages:
            if package and parent_dir(package) not in packages:
                roots.add(parent_dir(package))       # parent of a top-level package
        seen: set[str] = set()
        for folder in {parent_dir(p) for p in paths}:
            for directory in ancestors(folder):
                if directory in seen:
                    break                            # and so were all folders above it
                seen.add(directory)
                if directory.rsplit("/", 1)[-1] == "src":
                    roots.add(directory)             # src/ layout, even for namespace packages
        self.packages = packages
        self._roots_cache: dict[str, list[str]] = {}
        self.roots = sorted(roots, key=lambda r: (r.count("/") + bool(r), r))
        self.modules, self.inits = _module_tables(paths)
        self._plain: dict[str, bool] = {}   # directory -> joining needs no normalising

    def module_file(self, directory: str | None, parts: list[str]) -> str | None:
        """The file for module `parts` under `directory`: .py, .pyi, or package __init__."""
        if directory is None or not all(parts):
            return None
        if not parts:
            return self.inits.get(directory)
        tail = "/".join(parts)
        if "." not in tail and tail.count("/") == len(parts) - 1 and self._is_plain(directory):
            base = directory + "/" + tail if directory else tail   # what join() would return
        else:
            joined = join(directory, *parts)
            if joined is None:
                return None
            base = joined
        return self.modules.get(base) or self.inits.get(base)

    def _is_plain(self, directory: str) -> bool:
        """Whether `join(directory, *parts)` is plain concatenation (for parts without '/'
        or '.'): true of every directory of a normal repository path, checked once each."""
        plain = self._plain.get(directory)
        if plain is None:
            plain = self._plain[directory] = join(directory) == directory   # not '..', './x', '/x'...
        return plain

    def roots_for(self, importer: str) -> list[str]:
        """Source roots in lookup order: the script's own directory, then enclosing roots."""
        own = parent_dir(importer)
        if own not in self._roots_cache:
            self._roots_cache[own] = self._roots_for_dir(own)
        return self._roots_cache[own]

    def _roots_for_dir(self, own: str) -> list[str]:
        enclosing = set(ancestors(own))
        ordered = [own] if own not in self.packages else []
        ordered += sorted((r for r in self.roots if r in enclosing), key=len, reverse=True)
        ordered += [r for r in self.roots if r not in enclosing]
        return list(dict.fromkeys(ordered))

    def resolve(self, importer: str, ref: ImportRef) -> set[str]:
        """Repository files that one import statement refers to."""
        parts = ref.target.split(".") if ref.target else []
        if ref.level > 0:
            base: str | None = parent_dir(importer)
            for _ in range(ref.level - 1):
                base = join(base, "..") if base else None
            bases = [base] if base is not None else []
        else:
            bases = self.roots_for(importer)
        if ref.names:
            groups = [
                [parts] if name == "*" else [parts + name.split("."), parts]
                for name in ref.names
            ]
        elif ref.kind == "from":
            groups = [[parts]]                      # `from x import *` as parsed: names ()
        else:
            groups = [[parts, parts[:-1]]] if parts else []
        found: set[str] = set()
        for candidates in groups:
            hit = self._first(bases, candidates, relative=ref.level > 0)
            if hit is not None:
                found.add(hit)
        return found

    def _first(self, bases: list, candidates: list[list[str]], relative: bool) -> str | None:
        for parts in candidates:
            if not parts and not relative:
                continue                          # `import a` never falls back to a root
            for base in bases:
                hit = self.module_file(base, parts)
                if hit is not None:
                    return hit
        return None


def _module_tables(paths: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Lookup tables that replace probing the four candidate files of a module `base`:
    base -> `base.py` (else `base.pyi`), and base -> `base/__init__.py` (else `.pyi`;
    the root's `__init__` under '')."""
    modules: dict[str, str] = {}
    inits: dict[str, str] = {}
    for path in sorted(paths, key=lambda p: p.endswith("i")):   # .py before .pyi: the first wins
        if path.endswith(".py"):
            modules.setdefault(path[:-3], path)
        elif path.endswith(".pyi"):
            modules.setdefault(path[:-4], path)
        name = path.rsplit("/", 1)[-1]
        if name in INIT_NAMES:
            inits.setdefault(path[:-len(name) - 1] if path != name else "", path)
    return modules, inits
