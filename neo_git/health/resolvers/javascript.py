"""JavaScript / TypeScript / TSX: relative specifiers and tsconfig `baseUrl`/`paths`.

Bare package names ("react", "node:fs") are external. Resolution mirrors
TypeScript's "bundler"/node16 behaviour closely enough for cycle detection:
exact file, `.js`-style specifier naming a `.ts` source (TS ESM), extension
probing, then `index.*` in a directory. package.json "exports" is not consulted.
"""
from __future__ import annotations

from collections.abc import Mapping

from neo_git.health.model import FileMetrics, ImportGraph
from neo_git.health.resolvers import EdgeSet, Reader, ancestors, join, parent_dir
from neo_git.health.resolvers.tsconfig import CONFIG_NAMES, PathConfig, load_path_config, match_paths

EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.mts", ".d.cts")
# A specifier written with a JS extension may name the TypeScript source (TS ESM style).
JS_TO_TS = {".js": (".ts", ".tsx", ".d.ts"), ".jsx": (".tsx",), ".mjs": (".mts", ".d.mts"),
            ".cjs": (".cts", ".d.cts")}


def resolve(files: Mapping[str, FileMetrics], read: Reader) -> ImportGraph:
    """Edges between the JS/TS files of one snapshot."""
    paths = set(files)
    configs = _ConfigFinder(read)
    edges = EdgeSet()
    for path, metrics in files.items():
        edges.node(path)
        for ref in metrics.imports:
            hit = resolve_specifier(path, ref.target, paths, configs.for_file(path))
            if hit is not None:
                edges.add(path, hit, ref)
    return edges.graph({p: files[p].language for p in files})


def resolve_specifier(importer: str, specifier: str, paths: set[str],
                      config: PathConfig | None) -> str | None:
    """The repository file a specifier names, or None when external or missing."""
    specifier = specifier.split("?", 1)[0].split("#", 1)[0] if specifier[:1] != "#" else specifier
    if not specifier:
        return None
    if specifier.startswith("./") or specifier.startswith("../") or specifier in (".", ".."):
        return _probe(join(parent_dir(importer), specifier), paths)
    if specifier.startswith("/"):
        return None   # absolute file-system paths are not repository-relative
    if config is None:
        return None
    for candidate in match_paths(config, specifier):
        hit = _probe(candidate, paths)
        if hit is not None:
            return hit
    if config.base_url is not None:
        return _probe(join(config.base_url, specifier), paths)
    return None


def _probe(base: str | None, paths: set[str]) -> str | None:
    """Try `base` as a file, with TS-for-JS extension swaps, appended extensions, index.*."""
    if base is None:
        return None
    if base in paths:
        return base
    stem, dot, ext = base.rpartition(".")
    if dot and "/" not in ext:
        for swapped in JS_TO_TS.get("." + ext, ()):
            if stem + swapped in paths:
                return stem + swapped
    for extension in EXTENSIONS:
        if base + extension in paths:
            return base + extension
    prefix = base + "/" if base else ""
    for extension in EXTENSIONS:
        if prefix + "index" + extension in paths:
            return prefix + "index" + extension
    return None


class _ConfigFinder:
    """The nearest tsconfig.json/jsconfig.json above a file, parsed once per directory."""

    def __init__(self, read: Reader) -> None:
        self.read = read
        self.by_dir: dict[str, PathConfig | None] = {}

    def for_file(self, path: str) -> PathConfig | None:
        """The config governing `path` (None when no ancestor directory has one)."""
        visited: list[str] = []
        found: PathConfig | None = None
        for directory in ancestors(parent_dir(path)):
            if directory in self.by_dir:
                found = self.by_dir[directory]
                break
            visited.append(directory)
            found = self._config_in(directory)
            if found is not None:
                break
        for directory in visited:
            self.by_dir[directory] = found
        return found

    def _config_in(self, directory: str) -> PathConfig | None:
        for name in CONFIG_NAMES:
            config_path = f"{directory}/{name}" if directory else name
            try:
                present = self.read(config_path) is not None
            except (KeyError, OSError, ValueError):
                present = False
            if present:
                return load_path_config(config_path, self.read)
        return None
