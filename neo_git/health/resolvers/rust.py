"""Rust: the module tree of each crate (`mod foo;`) and `use` paths walked through it.

Crate roots come from Cargo.toml directories (src/lib.rs, src/main.rs,
src/bin/*.rs, examples/tests/benches, and `[lib]`/`[[bin]]` paths); a lib.rs or
main.rs that no `mod` declares is a root too (Cargo-less code). Rust 2018 rules:
`mod foo;` in lib.rs/main.rs/mod.rs looks in the same directory, in a.rs in a/.
`mod foo;` is an edge parent -> child, so a cycle needs a `use` back up
(child `use crate::parent::Thing`), which is what a user calls a module cycle.
A `use` path edges to the longest prefix that is a module file; the rest are items.
`#[path = ...]` attributes are not seen (the parser does not report them).
"""
from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from neo_git.health.model import FileMetrics, ImportGraph
from neo_git.health.resolvers import EdgeSet, Reader, ancestors, join, parent_dir, read_text

Module = tuple[str, ...]
TARGET_DIRS = ("src/bin", "examples", "tests", "benches")


def resolve(files: Mapping[str, FileMetrics], read: Reader) -> ImportGraph:
    """Edges between the Rust files of one snapshot."""
    tree = _ModuleTree(set(files), read)
    for root in tree.roots:
        tree.walk(root, files)
    for path in sorted(files):
        if path not in tree.context and posixpath.basename(path) in ("lib.rs", "main.rs"):
            tree.walk(path, files)
    edges = EdgeSet()
    for path, metrics in files.items():
        edges.node(path)
        for ref in metrics.imports:
            if ref.kind == "mod":
                target = tree.child_file(path, ref.target)
            else:
                target = tree.resolve_use(path, ref.target)
            if target is not None:
                edges.add(path, target, ref)
    return edges.graph({p: files[p].language for p in files})


class _ModuleTree:
    """Crate roots, and for every reached file its (crate root, module path)."""

    def __init__(self, paths: set[str], read: Reader) -> None:
        self.paths = paths
        self.context: dict[str, tuple[str, Module]] = {}
        self.modules: dict[str, dict[Module, str]] = {}
        self.crate_names: dict[str, str] = {}            # lib crate name -> its root file
        roots: list[str] = []
        seen: set[str] = set()
        for path in sorted(paths):
            for directory in ancestors(parent_dir(path)):
                if directory in seen:
                    continue
                seen.add(directory)
                roots.extend(self._cargo_roots(directory, read))
        self.roots = list(dict.fromkeys(roots))
        self.root_set = set(self.roots)

    def _cargo_roots(self, directory: str, read: Reader) -> list[str]:
        text = read_text(read, join(directory, "Cargo.toml") or "Cargo.toml")
        if text is None:
            return []
        import tomllib  # only for Rust crates: imported when one has a Cargo.toml

        try:
            manifest = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            manifest = {}
        raw_package, raw_lib, raw_bins = manifest.get("package"), manifest.get("lib"), manifest.get("bin")
        package: dict[str, Any] = raw_package if isinstance(raw_package, dict) else {}
        lib: dict[str, Any] = raw_lib if isinstance(raw_lib, dict) else {}
        lib_path = lib.get("path")
        lib_root = join(directory, lib_path if isinstance(lib_path, str) else "src/lib.rs")
        found: list[str | None] = []
        if lib_root in self.paths:
            found.append(lib_root)
            name = lib.get("name") or package.get("name")
            if isinstance(name, str):
                self.crate_names.setdefault(name.replace("-", "_"), lib_root)
        found.append(join(directory, "src/main.rs"))
        bins: list[Any] = raw_bins if isinstance(raw_bins, list) else []
        found += [join(directory, b["path"]) for b in bins
                  if isinstance(b, dict) and isinstance(b.get("path"), str)]
        for sub in TARGET_DIRS:
            joined = join(directory, sub)
            assert joined is not None   # a folder of the crate stays inside the repository
            prefix = joined + "/"
            prefix = prefix.lstrip("/")
            for path in sorted(self.paths):
                rest = path[len(prefix):] if path.startswith(prefix) else None
                if rest and (rest.count("/") == 0 or (rest.count("/") == 1 and rest.endswith("/main.rs"))):
                    found.append(path)
        return [f for f in found if f is not None and f in self.paths]

    def children_dir(self, path: str) -> str:
        """Where `mod foo;` in `path` looks for foo.rs / foo/mod.rs (Rust 2018)."""
        directory = parent_dir(path)
        base = posixpath.basename(path)
        if path in self.root_set or base in ("mod.rs", "lib.rs", "main.rs"):
            return directory
        return join(directory, base[:-3]) or ""

    def child_file(self, path: str, name: str) -> str | None:
        """The file a `mod name;` declaration in `path` refers to."""
        directory = self.children_dir(path)
        for candidate in (f"{name}.rs", f"{name}/mod.rs"):
            full = join(directory, candidate)
            if full in self.paths:
                return full
        return None

    def walk(self, root: str, files: Mapping[str, FileMetrics]) -> None:
        """Map the module tree of the crate rooted at `root` through its `mod` items.

        A file reached from two crates (lib.rs and main.rs both `mod util;`) is in
        both module maps; its own `use` paths resolve in the first crate that reached it.
        """
        if root in self.modules:
            return
        modules = self.modules[root] = {(): root}
        self.context.setdefault(root, (root, ()))
        queue: list[tuple[str, tuple[str, ...]]] = [(root, ())]
        seen = {root}
        while queue:
            current, module = queue.pop(0)
            for ref in files[current].imports:
                if ref.kind != "mod":
                    continue
                child = self.child_file(current, ref.target)
                if child is not None and child not in seen:
                    seen.add(child)
                    modules[module + (ref.target,)] = child
                    self.context.setdefault(child, (root, module + (ref.target,)))
                    queue.append((child, module + (ref.target,)))

    def resolve_use(self, path: str, target: str) -> str | None:
        """The module file a `use` path lands in (longest module prefix), or None."""
        if path not in self.context:
            return None
        crate, module = self.context[path]
        segments = [s for s in target.split("::") if s]
        if not segments:
            return None
        first = segments[0]
        base: tuple[str, ...]
        if first in ("crate", "$crate"):
            base, rest = (), segments[1:]
        elif first == "self":
            base, rest = module, segments[1:]
        elif first == "super":
            base, rest = module, segments
            while rest and rest[0] == "super":
                if not base:
                    return None
                base, rest = base[:-1], rest[1:]
        elif module + (first,) in self.modules[crate]:
            base, rest = module, segments          # 2018 uniform path to a child module
        elif first in self.crate_names:
            crate, base, rest = self.crate_names[first], (), segments[1:]
            if crate not in self.modules:
                return None
        else:
            return None                            # std, external crates, local items
        modules = self.modules[crate]
        current: tuple[str, ...] = base
        for segment in rest:
            if segment == "self":
                continue
            if current + (segment,) not in modules:
                break
            current = current + (segment,)
        return modules.get(current)
