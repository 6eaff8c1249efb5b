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
STATE_FORMAT = "state-1"
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
    file_metrics: dict[str, FileMetrics]       # path -> metrics of every analysed file (imports=():
                                               # the resolved imports are in `graph`)
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
                    include_type_checking: bool = False, workers: int = 1) -> HealthSnapshot:
    """Measure the tree of commit *rev* (any revision git understands; a tree id works too).

    *workers* > 1 lets a cold scan parse in that many processes (never in hooks). The
    CLI stays at 1: the pool splits the CPU time well (stdlib benchmark: ~1.1 s in the
    parent, the rest across the workers) but on a busy 2-core machine it did not
    clearly beat one process; `benchmarks/health_bench.py` measures both.
    """
    rev_id, tree = resolve_tree(repo, rev)
    bases = []
    try:
        bases = [parent.tree for parent in repo[rev_id].parents]
    except (AttributeError, KeyError, ValueError, pygit2.GitError):  # a tree id: no parents
        pass
    source = _Source(rev_id, tree, None, bases + _head_tree(repo))
    return _Scan(repo, source, progress=progress, workers=workers).snapshot(include_type_checking)


def snapshot_index(repo: pygit2.Repository, *, progress: bool = False,
                   include_type_checking: bool = False, workers: int = 1) -> HealthSnapshot:
    """Measure the staged content: the index git would commit now.

    Honours GIT_INDEX_FILE, which git sets for hooks and during `git commit -a`
    / `git commit <paths>` (a temporary index); like git, a relative value is
    taken relative to the current directory.
    """
    source = _Source("index", None, _open_index(repo), _head_tree(repo))
    return _Scan(repo, source, progress=progress, workers=workers).snapshot(include_type_checking)


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
    for kind in (pygit2.Commit, pygit2.Tree):
        try:
            target = obj.peel(kind)
        except (ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            continue
        return str(target.id), target.tree if kind is pygit2.Commit else target
    raise NeoError(f"'{rev}' is not a commit", "name a commit, branch or tag")


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
        for ancestor, ours, theirs in index.conflicts:
            path = (ours or theirs or ancestor).path
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


def _open_index(repo: pygit2.Repository) -> pygit2.Index:
    named = os.environ.get("GIT_INDEX_FILE")
    if named:
        return pygit2.Index(os.path.abspath(named))  # a missing file is an empty index, as in git
    if repo.is_bare:
        raise NeoError("a bare repository has no index", "measure a commit instead: `git neo health REV`")
    index = repo.index
    index.read(True)  # the Repository object may be older than the last `git add`
    return index


def _head_tree(repo: pygit2.Repository) -> list[pygit2.Tree]:
    try:
        return [] if repo.head_is_unborn else [repo.head.peel(pygit2.Commit).tree]
    except (KeyError, ValueError, pygit2.GitError):
        return []


# --- scanning -------------------------------------------------------------------
#
# A scan produces a *state*: per-file summaries, skipped paths, and per resolver
# family the import edges plus every path the resolver read (go.mod, tsconfig...).
# States are stored per tree; a new tree starts from a stored one (its parent's,
# HEAD's, or the last used) and redoes only what `git diff` says changed.

class _Source(NamedTuple):
    rev: str
    tree: pygit2.Tree | None       # a commit's tree, or None for the index
    index: pygit2.Index | None
    bases: list[pygit2.Tree]       # trees whose stored state is a good starting point


def _file_node(path: str) -> str:
    return path


def _package_node(path: str) -> str | None:
    from neo_git.health.resolvers.go import package_of

    return package_of(path)


# Families whose resolver derives a node's edges from that node's own imports plus the
# set of paths (Java: and packages) and the config files it reads: for them a
# content-only change re-resolves just the changed nodes. The value maps a file to
# its graph node. Rust is absent: its module tree comes from other files' `mod` items.
_LOCAL_FAMILIES = {"python": _file_node, "javascript": _file_node, "java": _file_node, "go": _package_node}
_INCREMENTAL_MAX_CHANGES = 400   # beyond this, a full scan is as cheap and simpler
_POOL_MIN_FILES = 64             # a process pool pays off only for many uncached files


class _Scan:
    def __init__(self, repo: pygit2.Repository, source: _Source, *, progress: bool, workers: int) -> None:
        from neo_git.health import metrics

        self.repo = repo
        self.source = source
        self.progress = progress
        self.workers = max(1, workers)
        self.metrics = metrics
        self._stripped: dict[str, FileMetrics] = {}   # path -> metrics rebuilt from a state row

    def _row_metrics(self, path: str, row: list) -> FileMetrics:
        found = self._stripped.get(path)
        if found is None:
            found = self._stripped[path] = _metrics_from_row(path, row)
        return found

    def snapshot(self, include_type_checking: bool) -> HealthSnapshot:
        from neo_git.health.cache import MetricsCache

        self.cache = MetricsCache(_cache_path(self.repo), analyzer_version(), state_version())
        try:
            state = self._state()
        finally:
            self.cache.close()
        return _snapshot_from_state(self.repo, self.source.rev, state, include_type_checking,
                                    self._row_metrics)

    def _state(self) -> dict:
        tree = self.source.tree
        candidates = ([tree.id.raw] if tree is not None else []) + [b.id.raw for b in self.source.bases]
        found = self.cache.load_state(candidates)
        if found is not None and tree is not None and found[0] == tree.id.raw:
            self.cache.touch_state(found[0])
            return found[1]
        changes = self._changes(found[0]) if found is not None else None
        if found is None:
            latest = self.cache.latest_state_tree()
            changes = self._changes(latest) if latest is not None else None
            found = self.cache.load_state([latest]) if changes is not None else None
        state = None
        if found is not None and changes is not None:
            try:
                state = self._incremental(found[1], changes)
            except (KeyError, TypeError, ValueError, IndexError):  # a damaged stored state: start over
                state = None
        if state is None:
            state = self._full()
        if state["components"] is None:
            from neo_git.health.graph import strongly_connected_components

            state["components"] = strongly_connected_components(_graph(state).edges)
        if tree is not None:
            self.cache.save_state(tree.id.raw, state)
        return state

    # -- what changed since a stored tree ------------------------------------------

    def _changes(self, base_raw: bytes) -> list | None:
        """[(old path or None, new Entry or None)] from the stored tree to the source; None: rescan."""
        try:
            base = self.repo[pygit2.Oid(raw=base_raw)]
            if self.source.tree is not None:
                diff = base.diff_to_tree(self.source.tree)
            else:
                diff = self.source.index.diff_to_tree(base)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        if len(diff) > _INCREMENTAL_MAX_CHANGES:
            return None
        changes = []
        for delta in diff.deltas:
            status = delta.status_char()
            if status not in "ADMT":   # conflicts and the unexpected: measure everything
                return None
            old = delta.old_file.path if status != "A" else None
            new = None
            if status != "D":
                new = Entry(delta.new_file.path, delta.new_file.id, delta.new_file.mode)
            changes.append((old, new))
        return changes

    # -- full and incremental scans -------------------------------------------------

    def _full(self) -> dict:
        source = self.source
        entries = tree_entries(source.tree) if source.tree is not None else index_entries(source.index)
        state = {"files": {}, "skipped": {}, "families": {}, "components": None}
        sources = self._classify(entries, state["skipped"])
        measured = self._measure(sources, state["skipped"])
        _store_files(state, measured, sources)
        for family, files in _by_family(measured).items():
            state["families"][family] = self._resolve(files)
        return state

    def _incremental(self, base: dict, changes: list) -> dict:
        state = {"files": dict(base["files"]), "skipped": dict(base["skipped"]),
                 "families": {}, "components": None}
        removed = {}
        for old_path, _new in changes:
            if old_path is not None:
                row = state["files"].pop(old_path, None)
                if row is not None:
                    removed[old_path] = row
                state["skipped"].pop(old_path, None)
        sources = self._classify((new for _old, new in changes if new is not None), state["skipped"])
        measured = self._measure(sources, state["skipped"])
        _store_files(state, measured, sources)

        touched: set[str] = set()
        reshaped: set[str] = set()   # families whose set of files (or Java packages) changed
        for path in set(removed) | set(measured):
            before, after = removed.get(path), measured.get(path)   # a stored row / FileMetrics
            families = set()
            if before is not None:
                families.add(_family(before[1]))
            if after is not None:
                families.add(_family(after.language))
            touched |= families
            if before is None or after is None or (before[1], before[7]) != (after.language, after.package):
                reshaped |= families
        names = set(base["families"]) | {_family(row[1]) for row in state["files"].values()}
        same_edges = True   # then the import cycles are the base's too
        for family in sorted(names):
            old = base["families"].get(family)
            stale_reads = old is not None and any(
                self._blob_hex(path) != blob for path, blob in old["reads"].items())
            if old is not None and family not in touched and not stale_reads:
                state["families"][family] = old
                continue
            files = {p: row for p, row in state["files"].items() if _family(row[1]) == family}
            if not files:
                same_edges = False
                continue
            node_of = _LOCAL_FAMILIES.get(family)
            if old is not None and node_of is not None and family not in reshaped and not stale_reads:
                new = state["families"][family] = self._update(old, files, measured, node_of)
            else:
                new = state["families"][family] = self._resolve(self._with_imports(files, measured, set(files)))
            same_edges = same_edges and old is not None and _same_edges(old["edges"], new["edges"])
        if same_edges:
            state["components"] = base["components"]
        return state

    def _update(self, old: dict, files: dict, measured: dict, node_of) -> dict:
        """Re-resolve only the graph nodes of changed files (see _LOCAL_FAMILIES)."""
        changed = {node_of(p) for p in files if p in measured} - {None}
        expanded = {p for p in files if node_of(p) in changed}
        fresh = self._resolve(self._with_imports(files, measured, expanded))
        edges, tc = dict(old["edges"]), dict(old["tc"])
        for node in changed:
            if node in fresh["edges"]:
                edges[node] = fresh["edges"][node]
            if node in fresh["tc"]:
                tc[node] = fresh["tc"][node]
            else:
                tc.pop(node, None)
        return {"edges": edges, "tc": tc, "lang": old["lang"], "reads": {**old["reads"], **fresh["reads"]}}

    def _with_imports(self, files: dict, measured: dict, wanted: set) -> dict[str, FileMetrics]:
        """FileMetrics for *files*, with raw imports for the *wanted* paths (from the cache)."""
        result = {p: self._row_metrics(p, row) for p, row in files.items()}
        result.update((p, m) for p, m in measured.items() if p in files)
        missing = [(p, pygit2.Oid(hex=files[p][0]), files[p][1]) for p in wanted if p not in measured]
        result.update(self._measure(missing, {}, show_progress=False))
        return result

    # -- per-file work ----------------------------------------------------------------

    def _classify(self, entries: Iterable[Entry], skipped: dict) -> list[tuple[str, pygit2.Oid, str]]:
        """Source files to measure; skipped ones go into *skipped* (path -> reason)."""
        language_for_path = self.metrics.language_for_path
        sources = []
        for path, oid, mode in entries:
            if mode == _MODE_GITLINK:
                skipped[path] = "submodule"
                continue
            language = language_for_path(path)
            if language is None:
                continue  # not source code: neither analysed nor "skipped"
            reason = path_skip_reason(path, mode)
            if reason:
                skipped[path] = reason
            else:
                sources.append((path, oid, language))
        return sources

    def _measure(self, sources: list, skipped: dict, *, show_progress: bool = True) -> dict[str, FileMetrics]:
        """Metrics (with raw imports) of *sources*: from the cache, else by parsing each blob once."""
        cached = self.cache.get_many((oid.raw, language) for _, oid, language in sources)
        measured: dict[str, FileMetrics] = {}
        misses: dict[tuple[bytes, str], list[str]] = {}
        oids = {}
        for path, oid, language in sources:
            key = (oid.raw, language)
            result = cached.get(key)
            if result is None:
                misses.setdefault(key, []).append(path)
                oids[key] = oid
            else:
                _record(json.loads(result), path, measured, skipped)
        if not misses:
            return measured
        jobs = [(key, paths[0], oids[key]) for key, paths in misses.items()]
        with _progress(len(jobs), self.progress and show_progress) as bar:
            for key, outcome in self._analyze(jobs):
                self.cache.put(key, json.dumps(outcome, separators=(",", ":")))
                for path in misses[key]:
                    _record(outcome, path, measured, skipped)
                bar.advance()
        return measured

    def _analyze(self, jobs: list) -> Iterator[tuple[tuple[bytes, str], dict]]:
        analyze = self.metrics.analyze_source
        if self.workers < 2 or len(jobs) < _POOL_MIN_FILES:
            for key, path, oid in jobs:
                outcome, data = _read_blob(self.repo, oid)
                yield key, outcome or _outcome(path, data, analyze)
            return
        import multiprocessing

        def payloads():
            for key, path, oid in jobs:
                outcome, data = _read_blob(self.repo, oid)
                yield key, path, data, outcome

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        with multiprocessing.get_context(method).Pool(self.workers) as pool:
            yield from pool.imap_unordered(_pool_outcome, payloads(), chunksize=8)

    def _resolve(self, files: dict[str, FileMetrics]) -> dict:
        """One family's import graph, plus every path the resolver read and its blob."""
        from neo_git.health import resolve

        reads: dict[str, str | None] = {}

        def read(path: str) -> bytes | None:
            found = self._lookup(path)
            usable = found is not None and found[1] not in (_MODE_GITLINK, _MODE_SYMLINK, _MODE_TREE)
            reads[path] = str(found[0]) if usable else None
            if not usable:
                return None
            try:
                return self.repo[found[0]].data
            except (KeyError, ValueError, pygit2.GitError):
                return None

        graph = resolve.build_import_graph(files, read)
        return {"edges": {n: list(t) for n, t in graph.edges.items()},
                "tc": {n: list(t) for n, t in graph.type_checking_edges.items()},
                "lang": dict(graph.language_of), "reads": reads}

    def _lookup(self, path: str) -> tuple[pygit2.Oid, int] | None:
        try:
            if self.source.tree is not None:
                entry = self.source.tree[path]
                return entry.id, entry.filemode
            entry = self.source.index[path]
            return entry.id, int(entry.mode)
        except (KeyError, ValueError, pygit2.GitError):
            return None

    def _blob_hex(self, path: str) -> str | None:
        found = self._lookup(path)
        if found is None or found[1] in (_MODE_GITLINK, _MODE_SYMLINK, _MODE_TREE):
            return None
        return str(found[0])


def _progress(total: int, enabled: bool):
    from neo_git.health.progress import Progress

    return Progress(total, enabled=enabled)


def _read_blob(repo: pygit2.Repository, oid: pygit2.Oid) -> tuple[dict | None, bytes]:
    """(a skip outcome, b"") when the blob is too large or missing, else (None, its bytes)."""
    if str(oid) == _EMPTY_BLOB:
        return None, b""
    try:
        _type, size = repo.odb.read_header(oid)  # the size without inflating the blob
        reason = content_skip_reason(size=size)
        if reason:
            return {"skip": reason}, b""
        return None, repo[oid].data
    except (KeyError, ValueError, pygit2.GitError):
        return {"skip": "missing_object"}, b""


def _outcome(path: str, data: bytes, analyze) -> dict:
    """The cacheable result for one blob: {"metrics": {...}} or {"skip": reason}."""
    reason = content_skip_reason(data=data)
    if reason:
        return {"skip": reason}
    result = analyze(path, data)
    if result is None:
        return {"skip": "unsupported"}
    return {"metrics": result.to_dict()}


def _pool_outcome(job: tuple) -> tuple[tuple[bytes, str], dict]:
    from neo_git.health.metrics import analyze_source

    key, path, data, outcome = job
    return key, outcome or _outcome(path, data, analyze_source)


def _record(outcome: dict, path: str, measured: dict, skipped: dict) -> None:
    data = outcome.get("metrics")
    if data is None:
        skipped[path] = outcome.get("skip", "unsupported")
        return
    data = dict(data, path=path)  # the same blob may sit at several paths: label it with this one
    measured[path] = FileMetrics.from_dict(data)


# --- states: what is stored per tree -------------------------------------------------
# files: path -> [blob, language, lines, functions, max_nesting, nesting_line, has_errors, package]

def _store_files(state: dict, measured: dict[str, FileMetrics], sources: list) -> None:
    blobs = {path: oid for path, oid, _language in sources}
    for path, m in measured.items():
        state["files"][path] = [str(blobs[path]), m.language, m.lines, m.functions, m.max_nesting,
                                m.nesting_line, m.has_errors, m.package]


def _metrics_from_row(path: str, row: list) -> FileMetrics:
    _blob, language, lines, functions, max_nesting, nesting_line, has_errors, package = row
    return FileMetrics(path, language, lines, functions, max_nesting, (), package, has_errors, nesting_line)


def _family(language: str) -> str:
    from neo_git.health.resolve import FAMILY_OF

    return FAMILY_OF.get(language, language)


def _by_family(files: dict[str, FileMetrics]) -> dict[str, dict[str, FileMetrics]]:
    groups: dict[str, dict[str, FileMetrics]] = {}
    for path, m in files.items():
        groups.setdefault(_family(m.language), {})[path] = m
    return groups


def _same_edges(old: dict, new: dict) -> bool:
    """Equal import edges (target lists are unordered); the common case: an edit kept its imports."""
    if old is new:
        return True
    if old.keys() != new.keys():
        return False
    return all(old[node] is targets or set(old[node]) == set(targets) for node, targets in new.items())


def _graph(state: dict) -> ImportGraph:
    edges: dict[str, frozenset[str]] = {}
    type_checking: dict[str, frozenset[str]] = {}
    language_of: dict[str, str] = {}
    for family in sorted(state["families"]):
        part = state["families"][family]
        edges.update((n, frozenset(t)) for n, t in part["edges"].items())
        type_checking.update((n, frozenset(t)) for n, t in part["tc"].items())
        language_of.update(part["lang"])
    return ImportGraph(edges=edges, type_checking_edges=type_checking, language_of=language_of)


def _snapshot_from_state(repo: pygit2.Repository, rev: str, state: dict,
                         include_type_checking: bool, row_metrics=_metrics_from_row) -> HealthSnapshot:
    from neo_git.health.graph import strongly_connected_components

    graph = _graph(state)
    components = state["components"]
    if include_type_checking:
        edges, hints = graph.edges, graph.type_checking_edges
        components = strongly_connected_components(
            {n: edges.get(n, frozenset()) | hints.get(n, frozenset()) for n in set(edges) | set(hints)})
    lines, functions = god_file_thresholds(repo)
    return HealthSnapshot(
        rev=rev,
        file_metrics={p: row_metrics(p, row) for p, row in state["files"].items()},
        graph=graph, components=tuple(tuple(c) for c in components),
        skipped=dict(Counter(state["skipped"].values())),
        god_file_lines=lines, god_file_functions=functions,
    )


def _cache_path(repo: pygit2.Repository) -> Path | None:
    from neo_git.identity import repository_paths

    try:
        return repository_paths(repo).neo_dir / "health.sqlite"
    except (OSError, ValueError):
        return None


_VERSIONS: dict[str, str] = {}


def analyzer_version() -> str:
    """Fingerprint of everything that shapes a per-file result: the metrics code,
    the language tables, the skip rules and the installed tree-sitter packages."""
    if "analyzer" not in _VERSIONS:
        here = Path(__file__).resolve().parent
        files = [here / "metrics.py", here / "model.py", here / "parsing.py"]
        files += sorted(p for p in (here / "languages").rglob("*") if p.suffix in (".py", ".scm", ".json"))
        _VERSIONS["analyzer"] = _fingerprint(files, [SKIP_RULES_VERSION, *_grammar_versions()])
    return _VERSIONS["analyzer"]


_GRAMMAR_MODULES = ("tree_sitter", "tree_sitter_python", "tree_sitter_javascript", "tree_sitter_typescript",
                    "tree_sitter_go", "tree_sitter_rust", "tree_sitter_java")


def _grammar_versions() -> list[str]:
    """`tree_sitter_python-0.25.0.dist-info`-style names: the installed versions, found with
    one directory listing (importlib.metadata costs ~40 ms, a fifth of a warm CLI run)."""
    import importlib.util

    found: list[str] = []
    listings: dict[Path, list[str]] = {}
    for module in _GRAMMAR_MODULES:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.origin:
            found.append(f"{module}=missing")
            continue
        site = Path(spec.origin).resolve().parent.parent
        if site not in listings:
            try:
                listings[site] = sorted(os.listdir(site))
            except OSError:
                listings[site] = []
        found += [name for name in listings[site]
                  if name.startswith(module + "-") and name.endswith((".dist-info", ".egg-info"))]
    return found


def state_version() -> str:
    """Fingerprint for stored snapshot states: the analyzer plus import resolution."""
    if "state" not in _VERSIONS:
        here = Path(__file__).resolve().parent
        files = [here / "resolve.py", here / "graph.py", Path(__file__).resolve()]
        files += sorted((here / "resolvers").glob("*.py"))
        _VERSIONS["state"] = _fingerprint(files, [analyzer_version(), STATE_FORMAT])
    return _VERSIONS["state"]


def _fingerprint(files: list[Path], extra: list[str]) -> str:
    digest = hashlib.sha256("\0".join(extra).encode())
    for path in files:
        try:
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        except OSError:
            continue
    return digest.hexdigest()[:16]
