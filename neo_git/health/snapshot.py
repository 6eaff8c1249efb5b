"""Health snapshots of a commit's tree or of the index, read from git objects only.

The work tree is never looked at: a snapshot of HEAD is what was committed, a
snapshot of the index is what `git commit` would record. Per-file results come
from the blob-keyed cache (`cache.py`) when the same bytes were measured
before, so a new commit costs only its changed files.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

import pygit2

from neo_git.errors import NeoError
from neo_git.health.model import FileMetrics, ImportGraph

DEFAULT_GOD_FILE_LINES = 800
DEFAULT_GOD_FILE_FUNCTIONS = 30

_MODE_TREE = 0o040000
_MODE_GITLINK = 0o160000
_MODE_SYMLINK = 0o120000
_EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # `git add -N` entries point here

# --- skip rules: files that are not hand-written source, counted by reason -------
# (bump SKIP_RULES_VERSION when they change: skip decisions are cached per blob)
SKIP_RULES_VERSION = "skip-1"
MAX_FILE_BYTES = 1_000_000
BINARY_SNIFF_BYTES = 8000          # git's own binary heuristic looks at the first 8000 bytes
VENDORED_DIRS = frozenset({"node_modules", "vendor", "third_party", "dist", "build"})
MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".min.cjs", ".min.css", "-min.js")
MINIFIED_MIN_BYTES = 4096           # long-line check only for files big enough to matter
MINIFIED_AVG_LINE = 300             # average characters per line above which code is generated


def path_skip_reason(path: str, mode: int) -> str | None:
    """Why a source-language file is skipped judging by its path and mode alone."""
    if mode == _MODE_SYMLINK:
        return "symlink"
    *directories, name = path.split("/")
    if VENDORED_DIRS.intersection(directories):
        return "vendored"
    if name.lower().endswith(MINIFIED_SUFFIXES):
        return "minified"
    return None


def content_skip_reason(*, size: int | None = None, data: bytes | None = None) -> str | None:
    """Why a blob is skipped judging by its size, or by its bytes."""
    if size is not None and size > MAX_FILE_BYTES:
        return "too_large"
    if data is not None:
        if len(data) > MAX_FILE_BYTES:
            return "too_large"
        if b"\0" in data[:BINARY_SNIFF_BYTES]:
            return "binary"
        if len(data) >= MINIFIED_MIN_BYTES and len(data) / (data.count(b"\n") + 1) > MINIFIED_AVG_LINE:
            return "minified"
    return None


class Entry(NamedTuple):
    """One file of a tree or index: repository path, blob id, git file mode."""

    path: str
    id: pygit2.Oid
    mode: int


@dataclass(frozen=True)
class HealthSnapshot:
    """The measured health of one tree (a commit, or the index)."""

    rev: str                                   # commit id, tree id, or "index"
    file_metrics: dict[str, FileMetrics]       # path -> metrics of every analysed file
    graph: ImportGraph = field(default_factory=ImportGraph)
    components: tuple[tuple[str, ...], ...] = ()  # import cycles: SCCs of size >= 2
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> number of files
    god_file_lines: int = DEFAULT_GOD_FILE_LINES
    god_file_functions: int = DEFAULT_GOD_FILE_FUNCTIONS

    def is_god_file(self, metrics: FileMetrics) -> bool:
        """More than the configured lines or functions."""
        return metrics.lines > self.god_file_lines or metrics.functions > self.god_file_functions

    @property
    def god_files(self) -> list[FileMetrics]:
        """God files, sorted by path."""
        return [m for _, m in sorted(self.file_metrics.items()) if self.is_god_file(m)]

    @property
    def max_nesting(self) -> int:
        """Deepest control-flow nesting in any function of any file (0 if none)."""
        return max((m.max_nesting for m in self.file_metrics.values()), default=0)

    @property
    def modules_in_cycles(self) -> list[str]:
        """Every module that is part of an import cycle, sorted."""
        return sorted({node for component in self.components for node in component})

    def to_dict(self) -> dict:
        """JSON form: the DESIGN.md §10 keys of `git neo health --json` and more."""
        files = self.file_metrics
        deepest = self.max_nesting
        return {
            "rev": self.rev,
            "files": len(files),
            "lines": sum(m.lines for m in files.values()),
            "functions": sum(m.functions for m in files.values()),
            "cycles": len(self.components),
            "modules_in_cycles": self.modules_in_cycles,
            "cycle_components": [list(c) for c in self.components],
            "god_files": [
                {"path": m.path, "lines": m.lines, "functions": m.functions, "language": m.language}
                for m in self.god_files
            ],
            "max_nesting": deepest,
            "max_nesting_files": [
                {"path": m.path, "line": m.nesting_line, "language": m.language}
                for _, m in sorted(files.items()) if deepest and m.max_nesting == deepest
            ],
            "per_language": self._per_language(),
            "skipped": dict(sorted(self.skipped.items())),
            "files_with_parse_errors": sorted(p for p, m in files.items() if m.has_errors),
            "thresholds": {"god_file_lines": self.god_file_lines,
                           "god_file_functions": self.god_file_functions},
        }

    def _per_language(self) -> dict[str, dict]:
        table: dict[str, dict] = {}
        for _, m in sorted(self.file_metrics.items()):
            row = table.setdefault(m.language, {"files": 0, "lines": 0, "functions": 0,
                                                "cycles": 0, "god_files": 0, "max_nesting": 0})
            row["files"] += 1
            row["lines"] += m.lines
            row["functions"] += m.functions
            row["god_files"] += self.is_god_file(m)
            row["max_nesting"] = max(row["max_nesting"], m.max_nesting)
        for component in self.components:
            for language in {self.graph.language_of.get(node) for node in component}:
                if language in table:
                    table[language]["cycles"] += 1
        return dict(sorted(table.items()))


# --- public entry points ------------------------------------------------------

def snapshot_commit(repo: pygit2.Repository, rev: str = "HEAD", *, progress: bool = False,
                    include_type_checking: bool = False) -> HealthSnapshot:
    """Measure the tree of commit *rev* (any revision git understands; a tree id works too)."""
    rev_id, tree = resolve_tree(repo, rev)
    return build_snapshot(repo, tree_entries(tree), rev_id, progress=progress,
                          include_type_checking=include_type_checking)


def snapshot_index(repo: pygit2.Repository, *, progress: bool = False,
                   include_type_checking: bool = False) -> HealthSnapshot:
    """Measure the staged content: the index git would commit now.

    Honours GIT_INDEX_FILE, which git sets for hooks and during `git commit -a`
    / `git commit <paths>` (a temporary index); like git, a relative value is
    taken relative to the current directory.
    """
    index = _open_index(repo)
    return build_snapshot(repo, index_entries(index), "index", progress=progress,
                          include_type_checking=include_type_checking)


def resolve_tree(repo: pygit2.Repository, rev: str) -> tuple[str, pygit2.Tree]:
    """(commit id or tree id, tree) for a revision; NeoError if it names nothing usable."""
    rev = str(rev)
    if rev == "HEAD" and repo.head_is_unborn:
        raise NeoError("HEAD has no commits yet, so there is nothing to measure",
                       "make a first commit, or measure the staged files with `git neo health --staged`")
    try:
        obj = repo.revparse_single(rev)
    except (KeyError, ValueError, pygit2.GitError):
        raise NeoError(f"unknown revision '{rev}'",
                       "use a commit id, branch or tag; `git log --oneline` lists commits") from None
    try:
        commit = obj.peel(pygit2.Commit)
        return str(commit.id), commit.tree
    except (ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        pass
    try:
        tree = obj.peel(pygit2.Tree)
        return str(tree.id), tree
    except (ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise NeoError(f"'{rev}' is not a commit", "name a commit, branch or tag") from None


def tree_entries(tree: pygit2.Tree) -> Iterator[Entry]:
    """Every non-tree entry under *tree*, with its full path (depth first)."""
    stack: list[tuple[str, pygit2.Tree]] = [("", tree)]
    while stack:
        prefix, current = stack.pop()
        for obj in current:
            mode = obj.filemode
            if mode == _MODE_TREE:
                stack.append((f"{prefix}{obj.name}/", obj))
            else:
                yield Entry(prefix + obj.name, obj.id, mode)


def index_entries(index: pygit2.Index) -> Iterator[Entry]:
    """Stage-0 entries of an index; for a conflicted path, "ours" (what HEAD had)."""
    conflicted: dict[str, Entry | None] = {}
    if index.conflicts is not None:
        for _ancestor, ours, theirs in index.conflicts:
            path = (ours or theirs or _ancestor).path
            conflicted[path] = Entry(ours.path, ours.id, int(ours.mode)) if ours is not None else None
    for entry in index:
        path = entry.path
        if path in conflicted:
            replacement = conflicted.pop(path)
            if replacement is not None:
                yield replacement
            continue
        if int(entry.mode) == _MODE_TREE:  # sparse-index directory entry: not expanded here
            continue
        yield Entry(path, entry.id, int(entry.mode))


def _open_index(repo: pygit2.Repository) -> pygit2.Index:
    named = os.environ.get("GIT_INDEX_FILE")
    if named:
        return pygit2.Index(os.path.abspath(named))  # a missing file is an empty index, as in git
    if repo.is_bare:
        raise NeoError("a bare repository has no index", "measure a commit instead: `git neo health REV`")
    index = repo.index
    index.read(True)  # the Repository object may be older than the last `git add`
    return index


# --- building -------------------------------------------------------------------

def god_file_thresholds(repo: pygit2.Repository) -> tuple[int, int]:
    """(lines, functions) from `git config neo.godFileLines/neo.godFileFunctions`; bad values -> defaults."""
    values = []
    for key, default in (("neo.godFileLines", DEFAULT_GOD_FILE_LINES),
                         ("neo.godFileFunctions", DEFAULT_GOD_FILE_FUNCTIONS)):
        try:
            value = repo.config.get_int(key)
        except (KeyError, ValueError, TypeError, pygit2.GitError):
            value = default
        values.append(value if value > 0 else default)
    return values[0], values[1]


def build_snapshot(repo: pygit2.Repository, entries: Iterable[Entry], rev: str, *,
                   progress: bool = False, include_type_checking: bool = False,
                   cache=None) -> HealthSnapshot:
    """Measure *entries* (from a tree or an index) into a HealthSnapshot."""
    from neo_git.health import graph as graph_module
    from neo_git.health import metrics, resolve
    from neo_git.health.cache import MetricsCache
    from neo_git.health.progress import Progress

    skipped: Counter[str] = Counter()
    blob_of: dict[str, pygit2.Oid] = {}        # every readable file, for go.mod / tsconfig.json
    sources: list[tuple[str, pygit2.Oid, str]] = []
    language_for_path = metrics.language_for_path
    for path, oid, mode in entries:
        if mode == _MODE_GITLINK:
            skipped["submodule"] += 1
            continue
        if mode != _MODE_SYMLINK:
            blob_of[path] = oid
        language = language_for_path(path)
        if language is None:
            continue  # not source code: neither analysed nor "skipped"
        reason = path_skip_reason(path, mode)
        if reason:
            skipped[reason] += 1
        else:
            sources.append((path, oid, language))

    own_cache = cache is None
    if own_cache:
        cache = MetricsCache(_cache_path(repo), analyzer_version())
    try:
        cached = cache.get_many((oid.raw, language) for _, oid, language in sources)
        file_metrics: dict[str, FileMetrics] = {}
        misses = []
        for path, oid, language in sources:
            result = cached.get((oid.raw, language))
            if result is None:
                misses.append((path, oid, language))
            else:
                _record(json.loads(result), path, file_metrics, skipped)
        with Progress(len(misses), enabled=progress) as bar:
            for path, oid, language in misses:
                outcome = _analyze_blob(repo, path, oid, metrics.analyze_source)
                cache.put((oid.raw, language), json.dumps(outcome, separators=(",", ":")))
                _record(outcome, path, file_metrics, skipped)
                bar.advance()
    finally:
        if own_cache:
            cache.close()

    def read(path: str) -> bytes | None:
        oid = blob_of.get(path)
        if oid is None:
            return None
        try:
            return repo[oid].data
        except (KeyError, ValueError, pygit2.GitError):
            return None

    import_graph = resolve.build_import_graph(file_metrics, read)
    edges = import_graph.edges
    if include_type_checking:
        edges = {node: edges.get(node, frozenset()) | import_graph.type_checking_edges.get(node, frozenset())
                 for node in set(edges) | set(import_graph.type_checking_edges)}
    components = tuple(tuple(c) for c in graph_module.strongly_connected_components(edges))
    lines, functions = god_file_thresholds(repo)
    return HealthSnapshot(rev=rev, file_metrics=file_metrics, graph=import_graph,
                          components=components, skipped=dict(skipped),
                          god_file_lines=lines, god_file_functions=functions)


def _analyze_blob(repo: pygit2.Repository, path: str, oid: pygit2.Oid, analyze) -> dict:
    """The cacheable outcome for one blob: {"metrics": {...}} or {"skip": reason}."""
    try:
        if str(oid) == _EMPTY_BLOB:
            data = b""
        else:
            _type, size = repo.odb.read_header(oid)
            reason = content_skip_reason(size=size)
            if reason:
                return {"skip": reason}
            data = repo[oid].data
    except (KeyError, ValueError, pygit2.GitError):
        return {"skip": "missing_object"}
    reason = content_skip_reason(data=data)
    if reason:
        return {"skip": reason}
    result = analyze(path, data)
    if result is None:
        return {"skip": "unsupported"}
    return {"metrics": result.to_dict()}


def _record(outcome: dict, path: str, file_metrics: dict, skipped: Counter) -> None:
    data = outcome.get("metrics")
    if data is None:
        skipped[outcome.get("skip", "unsupported")] += 1
        return
    data["path"] = path  # the same blob may sit at several paths: label it with this one
    file_metrics[path] = FileMetrics.from_dict(data)


def _cache_path(repo: pygit2.Repository) -> Path | None:
    from neo_git.identity import repository_paths

    try:
        return repository_paths(repo).neo_dir / "health.sqlite"
    except (OSError, ValueError):
        return None


_VERSION: str | None = None


def analyzer_version() -> str:
    """Fingerprint of everything that shapes a per-file result: the metrics code,
    the language tables, the skip rules and the tree-sitter grammar versions."""
    global _VERSION
    if _VERSION is None:
        import importlib.metadata as metadata

        digest = hashlib.sha256(SKIP_RULES_VERSION.encode())
        here = Path(__file__).resolve().parent
        sources = [here / "metrics.py", here / "model.py", here / "parsing.py"]
        sources += sorted(p for p in (here / "languages").rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for source in sources:
            try:
                digest.update(source.name.encode() + b"\0" + source.read_bytes())
            except OSError:
                continue
        for dist in ("tree-sitter", "tree-sitter-python", "tree-sitter-javascript", "tree-sitter-typescript",
                     "tree-sitter-go", "tree-sitter-rust", "tree-sitter-java"):
            try:
                digest.update(f"{dist}={metadata.version(dist)}".encode())
            except metadata.PackageNotFoundError:
                pass
        _VERSION = digest.hexdigest()[:16]
    return _VERSION
