"""Scanning a tree or the index into a *state* (see states.py), as cheaply as the cache allows.

A scan produces a state: per-file summaries, skipped paths, and per resolver
family the import edges plus every path the resolver read (go.mod, tsconfig...).
States are stored per tree; a new tree starts from a stored one (its parent's,
HEAD's, or the last used) and redoes only what `git diff` says changed. Files are
measured from the blob-keyed cache when the same bytes were measured before.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from neo_git.health.cache import MetricsCache, StoredState
from neo_git.health.model import FileMetrics
from neo_git.health.skips import content_skip_reason, path_skip_reason
from neo_git.health.sources import MODE_GITLINK, MODE_SYMLINK, MODE_TREE, Change, Entry, Source, file_reader
from neo_git.health.states import (
    FileRow,
    by_family,
    cycles_of,
    family_of,
    metrics_from_row,
    same_import_edges,
    store_files,
)
from neo_git.health.versions import analyzer_version, state_version

_EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # `git add -N` entries point here


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


class Scan:
    """Measures one Source into a state, starting from the cache's per-file results and states."""

    def __init__(self, cache_file: Path | None, source: Source, *, progress: bool, workers: int,
                 cache: MetricsCache | None = None, rows: dict | None = None,
                 base: StoredState | None = None, store: bool = True) -> None:
        from neo_git.health import metrics

        self.cache_file = cache_file                  # opened here when no *cache* is given
        self.source = source
        self.progress = progress
        self.workers = max(1, workers)
        self.metrics = metrics
        self._shared_cache = cache                    # open and closed by the caller
        # path -> (row, metrics rebuilt from it); shared by the scans of one comparison, whose
        # trees have most rows in common
        self._stripped: dict[str, tuple[FileRow, FileMetrics]] = rows if rows is not None else {}
        self.base = base     # a state the caller holds in memory (a walk over commits): tried first
        self.store = store   # False: the caller keeps the state; only per-file results are cached

    def row_metrics(self, path: str, row: FileRow) -> FileMetrics:
        """The FileMetrics of a stored row, built once per path and scan."""
        found = self._stripped.get(path)
        if found is None or found[0] != row:
            found = self._stripped[path] = (row, metrics_from_row(path, row))
        return found[1]

    def state(self) -> dict:
        """The state of the source: stored, derived from a stored one, or scanned in full."""
        if self._shared_cache is not None:
            self.cache = self._shared_cache
            state = self._state()
            self.cache.flush()
            return state
        self.cache = MetricsCache(self.cache_file, analyzer_version(), state_version())
        try:
            return self._state()
        finally:
            self.cache.close()

    def _state(self) -> dict:
        tree = self.source.tree_id
        candidates = ([tree] if tree is not None else []) + self.source.base_ids
        held = self.base is not None and self.base.tree in candidates
        found = self.base if held else self.cache.load_state(candidates)
        if found is not None and tree is not None and found.tree == tree:
            self.cache.touch_state(found.tree)
            return found.state
        changes = self._changes(found.tree) if found is not None else None
        if found is None:
            latest = self.cache.latest_state_tree()
            changes = self._changes(latest) if latest is not None else None
            found = self.cache.load_state([latest]) if latest is not None and changes is not None else None
        state = None
        if found is not None and changes is not None:
            try:
                state = self._incremental(found.state, changes)
            except (KeyError, TypeError, ValueError, IndexError):  # a damaged stored state: start over
                state = None
        if state is None:
            state = self._full()
        cycles_of(state)
        if tree is not None and self.store:
            self.cache.save_state(tree, state)
        return state

    # -- what changed since a stored tree ------------------------------------------

    def _changes(self, base_raw: bytes) -> list[Change] | None:
        """[(old path or None, new Entry or None)] from the stored tree to the source; None: rescan."""
        return self.source.changes_since(base_raw, _INCREMENTAL_MAX_CHANGES)

    # -- full and incremental scans -------------------------------------------------

    def _full(self) -> dict:
        entries = self.source.entries()
        state: dict[str, Any] = {"files": {}, "skipped": {}, "families": {}, "components": None, "import_time": None}
        sources = self._classify(entries, state["skipped"])
        measured = self._measure(sources, state["skipped"])
        store_files(state, measured, sources)
        for family, files in by_family(measured).items():
            state["families"][family] = self._resolve(files)
        return state

    def _incremental(self, base: dict, changes: list) -> dict:
        state: dict[str, Any] = {"files": dict(base["files"]), "skipped": dict(base["skipped"]),
                 "families": {}, "components": None, "import_time": None}
        removed: dict[str, FileRow] = {}
        for old_path, _new in changes:
            if old_path is not None:
                row = state["files"].pop(old_path, None)
                if row is not None:
                    removed[old_path] = row
                state["skipped"].pop(old_path, None)
        sources = self._classify((new for _old, new in changes if new is not None), state["skipped"])
        measured = self._measure(sources, state["skipped"])
        store_files(state, measured, sources)

        touched: set[str] = set()
        reshaped: set[str] = set()   # families whose set of files (or Java packages) changed
        for path in set(removed) | set(measured):
            before, after = removed.get(path), measured.get(path)   # a stored row / FileMetrics
            families = set()
            if before is not None:
                families.add(family_of(before.language))
            if after is not None:
                families.add(family_of(after.language))
            touched |= families
            if before is None or after is None or (before.language, before.package) != (after.language, after.package):
                reshaped |= families
        names = set(base["families"]) | {family_of(row.language) for row in state["files"].values()}
        same_edges = True   # then the import cycles are the base's too
        for family in sorted(names):
            old = base["families"].get(family)
            stale_reads = old is not None and any(
                self._blob_hex(path) != blob for path, blob in old["reads"].items())
            if old is not None and family not in touched and not stale_reads:
                state["families"][family] = old
                continue
            files = {p: row for p, row in state["files"].items() if family_of(row.language) == family}
            if not files:
                same_edges = False
                continue
            node_of = _LOCAL_FAMILIES.get(family)
            if old is not None and node_of is not None and family not in reshaped and not stale_reads:
                new = state["families"][family] = self._update(old, files, measured, node_of)
            else:
                new = state["families"][family] = self._resolve(self._with_imports(files, measured, set(files)))
            same_edges = same_edges and old is not None and same_import_edges(old, new)
        if same_edges:
            state["components"], state["import_time"] = base["components"], base["import_time"]
        return state

    def _update(self, old: dict, files: dict, measured: dict, node_of) -> dict:
        """Re-resolve only the graph nodes of changed files (see _LOCAL_FAMILIES)."""
        changed = {node_of(p) for p in files if p in measured} - {None}
        expanded = {p for p in files if node_of(p) in changed}
        fresh = self._resolve(self._with_imports(files, measured, expanded))
        edges, tc, late = dict(old["edges"]), dict(old["tc"]), dict(old["late"])
        for node in changed:
            if node in fresh["edges"]:
                edges[node] = fresh["edges"][node]
            for part, new in ((tc, fresh["tc"]), (late, fresh["late"])):
                if node in new:
                    part[node] = new[node]
                else:
                    part.pop(node, None)
        return {"edges": edges, "late": late, "tc": tc, "lang": old["lang"],
                "reads": {**old["reads"], **fresh["reads"]}}

    def _with_imports(self, files: dict, measured: dict, wanted: set) -> dict[str, FileMetrics]:
        """FileMetrics for *files*, with raw imports for the *wanted* paths (from the cache)."""
        result = {p: self.row_metrics(p, row) for p, row in files.items()}
        result.update((p, m) for p, m in measured.items() if p in files)
        missing = [(p, files[p].blob, files[p].language) for p in wanted if p not in measured]
        result.update(self._measure(missing, {}, show_progress=False))
        return result

    # -- per-file work ----------------------------------------------------------------

    def _classify(self, entries: Iterable[Entry], skipped: dict) -> list[tuple[str, str, str]]:
        """Source files to measure; skipped ones go into *skipped* (path -> reason)."""
        language_for_path = self.metrics.language_for_path
        sources = []
        for path, oid, mode in entries:
            if mode == MODE_GITLINK:
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
        cached = self.cache.get_many((bytes.fromhex(oid), language) for _, oid, language in sources)
        measured: dict[str, FileMetrics] = {}
        misses: dict[tuple[bytes, str], list[str]] = {}
        oids = {}
        for path, oid, language in sources:
            key = (bytes.fromhex(oid), language)
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
                outcome, data = _read_blob(self.source, oid)
                yield key, outcome or _outcome(path, data, analyze)
            return
        import multiprocessing

        def payloads():
            for key, path, oid in jobs:
                outcome, data = _read_blob(self.source, oid)
                yield key, path, data, outcome

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        with multiprocessing.get_context(method).Pool(self.workers) as pool:
            yield from pool.imap_unordered(_pool_outcome, payloads(), chunksize=8)

    def _resolve(self, files: dict[str, FileMetrics]) -> dict:
        """One family's import graph, plus every path the resolver read and its blob."""
        from neo_git.health import import_graph

        reads: dict[str, str | None] = {}
        serve = file_reader(self.source)

        def read(path: str) -> bytes | None:
            reads[path] = self._blob_hex(path)
            return serve(path) if reads[path] is not None else None

        graph = import_graph.build_import_graph(files, read)
        return {"edges": graph.sites | {n: {} for n in graph.edges if n not in graph.sites},
                "late": {n: sorted(t) for n, t in graph.deferred_edges.items()},
                "tc": {n: list(t) for n, t in graph.type_checking_edges.items()},
                "lang": dict(graph.language_of), "reads": reads}

    def _blob_hex(self, path: str) -> str | None:
        found = self.source.lookup(path)
        if found is None or found[1] in (MODE_GITLINK, MODE_SYMLINK, MODE_TREE):
            return None
        return found[0]


def _progress(total: int, enabled: bool):
    from neo_git.health.progress import Progress

    return Progress(total, enabled=enabled)


def _read_blob(source: Source, oid: str) -> tuple[dict | None, bytes]:
    """(a skip outcome, b"") when the blob is too large or missing, else (None, its bytes).
    A blob over the size limit is rare enough to be read and dropped."""
    if oid == _EMPTY_BLOB:
        return None, b""
    data = source.blob(oid)
    if data is None:
        return {"skip": "missing_object"}, b""   # or a corrupt tree: no blob under this path
    reason = content_skip_reason(size=len(data))
    if reason:
        return {"skip": reason}, b""
    return None, data


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
