"""Blob-keyed cache of per-file health results in `.git/neo/health.sqlite`.

A file's metrics depend only on its bytes and on how they are parsed, so the
key is (blob id, language, analyzer version): the language because it comes
from the extension (the same blob as `a.ts` and `a.tsx` parses differently);
the version so that a change to the metrics code or a grammar upgrade
invalidates old rows. The path is *not* part of the key: a cached result is
re-labelled with the path it is found at, so a rename or a copy costs nothing.

Next to the per-file rows sit a few whole-snapshot *states* keyed by tree id
(per-file summaries, the per-family import graphs and what they read): a rescan
of the same tree loads one row, and a new commit starts from its parent's state
and re-measures only the paths `git diff` names.

The cache is an accelerator, never a requirement. A corrupt file is moved
aside and recreated, a locked one is skipped after a short busy timeout (hooks
must not wait on another process), and any SQLite error turns the cache off
for the rest of the scan: results are then simply recomputed. A reader that
must not write (`cached_summary`) opens it read-only: a missing, corrupt or
locked file is then just a miss, and nothing is created, pruned or moved.
"""
from __future__ import annotations

import json
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from neo_git.health.cache_file import CACHE_FILE
from neo_git.health.states import typed_rows

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

BUSY_TIMEOUT_SECONDS = 0.2   # a hook must never hang on a lock held by another scan
BATCH_SIZE = 256             # rows written per transaction
_SELECT_CHUNK = 500          # keys per `IN (...)` query (below every SQLite variable limit)
MAX_STATES = 8               # whole-snapshot states kept (the most recently used)


class StoredState(NamedTuple):
    """A whole-snapshot state found in the cache, and the tree it belongs to."""

    tree: bytes   # raw tree id
    state: dict   # see states.py; file rows are FileRow

_SCHEMA = """
CREATE TABLE IF NOT EXISTS file_results (
    blob BLOB NOT NULL,
    language TEXT NOT NULL,
    version TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (blob, language, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS snapshot_states (
    tree BLOB NOT NULL,
    version TEXT NOT NULL,
    data BLOB NOT NULL,
    used REAL NOT NULL,
    PRIMARY KEY (tree, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

Key = tuple[bytes, str]  # (raw 20-byte blob id, language)


class MetricsCache:
    """Per-file results (JSON text) keyed by (blob id, language) for one analyzer version."""

    def __init__(self, path: Path | None, version: str, state_version: str = "", *,
                 read_only: bool = False, keep_writes: bool = False) -> None:
        self.path = path
        self.version = version
        self.state_version = state_version or version
        self._conn: sqlite3.Connection | None = None
        self._pending: list[tuple[bytes, str, str, str]] = []
        self._states: dict[bytes, StoredState] = {}   # loaded this session: one decode per tree
        self._writable = not read_only
        # keep_writes (with read_only): what would have been written is kept for `write_kept`
        # later, in another process (the pre-commit guard writes nothing before the commit returns)
        self.kept = KeptWrites(path, version, self.state_version) if keep_writes else None
        if path is not None:
            self._conn = self._connect_read_only(path) if read_only else self._connect(path)

    # -- opening ------------------------------------------------------------

    def _connect_read_only(self, path: Path) -> sqlite3.Connection | None:
        """An existing file, opened without creating, pruning or repairing anything:
        a corrupt or foreign file then fails at the first query, which disables the cache."""
        if not path.is_file():
            return None
        try:
            return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                   timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        except (sqlite3.Error, OSError, ValueError):
            return None

    def _connect(self, path: Path) -> sqlite3.Connection | None:
        for attempt in (1, 2):
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
                self._prepare(conn)
                return conn
            except sqlite3.DatabaseError as exc:
                if attempt == 1 and _looks_corrupt(exc):
                    _move_aside(path)
                    continue
                return None
            except OSError:
                return None
        return None

    def _prepare(self, conn: sqlite3.Connection) -> None:
        try:
            # WAL lets a hook read while an interactive scan writes. Switching needs
            # a moment of exclusive access; if someone holds the file, stay as is.
            conn.execute("PRAGMA journal_mode=WAL")
            # No fsync: this is derived data, and a file that a power cut damaged is moved
            # aside and rebuilt (see _looks_corrupt). With NORMAL, the checkpoint when the
            # last connection closes synced the file: 5-15 ms of every guard run.
            conn.execute("PRAGMA synchronous=OFF")
        except sqlite3.OperationalError:
            pass
        conn.executescript(_SCHEMA)
        row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if row is None or row[0] != self.version + "/" + self.state_version:
            # A new analyzer: old rows can never be hit again, drop them.
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("DELETE FROM file_results WHERE version != ?", (self.version,))
                conn.execute("DELETE FROM snapshot_states WHERE version != ?", (self.state_version,))
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)",
                             (self.version + "/" + self.state_version,))
                conn.execute("COMMIT")
            except sqlite3.OperationalError:  # locked: prune another time
                _rollback(conn)

    @property
    def enabled(self) -> bool:
        """False when the cache could not be opened or failed during this scan."""
        return self._conn is not None

    # -- reading and writing ------------------------------------------------

    def get_many(self, keys: Iterable[Key]) -> dict[Key, str]:
        """The cached results among *keys* (a few `IN` queries, not one per file)."""
        found: dict[Key, str] = {}
        if self._conn is None:
            return found
        blobs = sorted({blob for blob, _language in keys})
        try:
            for start in range(0, len(blobs), _SELECT_CHUNK):
                chunk = blobs[start:start + _SELECT_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT blob, language, result FROM file_results "
                    f"WHERE version = ? AND blob IN ({marks})",
                    (self.version, *chunk),
                )
                for blob, language, result in rows:
                    found[(bytes(blob), language)] = result
        except sqlite3.Error:
            self._disable()
        return found

    def put(self, key: Key, result: str) -> None:
        """Remember one result; written in batches."""
        if self.kept is not None:
            self.kept.rows.append((key[0], key[1], self.version, result))
            return
        if self._conn is None or not self._writable:
            return
        self._pending.append((key[0], key[1], self.version, result))
        if len(self._pending) >= BATCH_SIZE:
            self.flush()

    def flush(self) -> None:
        """Write the pending results in one transaction (dropped if the file is locked)."""
        if self._conn is None or not self._pending:
            return
        rows, self._pending = self._pending, []
        self._write(lambda conn: conn.executemany("INSERT OR REPLACE INTO file_results VALUES (?, ?, ?, ?)", rows))

    def _write(self, statements: Callable[[sqlite3.Connection], object]) -> None:
        """Run *statements* in one transaction; a lock or an error costs the write, never the scan."""
        conn = self._conn
        assert conn is not None   # writes are asked for only while the cache is open
        try:
            conn.execute("BEGIN")
            statements(conn)
            conn.execute("COMMIT")
        except sqlite3.OperationalError:
            # Locked by another writer past the busy timeout: what was not written is
            # just recomputed next time. Keep reading, but stop waiting on writes.
            _rollback(conn)
            self._writable = False
        except sqlite3.Error:
            self._disable()

    # -- whole-snapshot states ----------------------------------------------

    def load_state(self, trees: Iterable[bytes]) -> StoredState | None:
        """The stored state of the first of *trees* that has one, else None."""
        if self._conn is None:
            return None
        try:
            for tree in trees:
                if tree in self._states:
                    return self._states[tree]
                row = self._conn.execute(
                    "SELECT data FROM snapshot_states WHERE tree = ? AND version = ?",
                    (tree, self.state_version)).fetchone()
                if row is not None:
                    try:
                        state = json.loads(zlib.decompress(row[0]))
                        if _looks_like_state(state):
                            found = self._states[tree] = StoredState(tree, typed_rows(state))
                            return found
                    except (zlib.error, ValueError, TypeError):  # a damaged row: as if absent
                        continue
        except sqlite3.Error:
            self._disable()
        return None

    def latest_state_tree(self) -> bytes | None:
        """The tree of the most recently used state (a fallback base for a new scan)."""
        if self._conn is None:
            return None
        try:
            row = self._conn.execute(
                "SELECT tree FROM snapshot_states WHERE version = ? ORDER BY used DESC LIMIT 1",
                (self.state_version,)).fetchone()
        except sqlite3.Error:
            self._disable()
            return None
        return bytes(row[0]) if row else None

    def save_state(self, tree: bytes, state: dict) -> None:
        """Store the state of *tree*, keeping the MAX_STATES most recent ones."""
        if self.kept is not None:
            self.kept.states[tree] = state
            return
        if self._conn is None or not self._writable:
            return
        data = zlib.compress(json.dumps(state, separators=(",", ":")).encode(), 1)

        def statements(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT OR REPLACE INTO snapshot_states VALUES (?, ?, ?, ?)",
                         (tree, self.state_version, data, time.time()))
            conn.execute("DELETE FROM snapshot_states WHERE tree NOT IN "
                         "(SELECT tree FROM snapshot_states ORDER BY used DESC LIMIT ?)", (MAX_STATES,))

        self._write(statements)

    def touch_state(self, tree: bytes) -> None:
        """Mark a state as just used (so pruning keeps it)."""
        if self._conn is None or not self._writable:
            return
        try:
            self._conn.execute("UPDATE snapshot_states SET used = ? WHERE tree = ? AND version = ?",
                               (time.time(), tree, self.state_version))
        except sqlite3.Error:
            pass

    def close(self) -> None:
        """Flush and close."""
        self.flush()
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

    def __enter__(self) -> MetricsCache:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _disable(self) -> None:
        conn, self._conn = self._conn, None
        self._pending = []
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass


class KeptWrites:
    """Per-file results and states a read-only cache was asked to write (`keep_writes`), to be
    written by `write` later: the pre-commit hook writes them after it has answered, from a
    detached process."""

    def __init__(self, path: Path | None, version: str, state_version: str) -> None:
        self.path, self.version, self.state_version = path, version, state_version
        self.rows: list[tuple[bytes, str, str, str]] = []
        self.states: dict[bytes, dict] = {}

    def write(self) -> None:
        """Write them, through a cache opened for writing now (a lock or an error costs the write)."""
        with MetricsCache(self.path, self.version, self.state_version) as cache:
            for blob, language, _version, result in self.rows:
                cache.put((blob, language), result)
            cache.flush()
            for tree, state in self.states.items():
                cache.save_state(tree, state)


def cache_path(repo: pygit2.Repository) -> Path | None:
    """Where a repository's health cache lives (`.git/neo/health.sqlite`); None if unknown."""
    from neo_git.identity import repository_paths

    try:
        return repository_paths(repo).neo_dir / CACHE_FILE
    except (OSError, ValueError):
        return None


def _looks_like_state(state: object) -> bool:
    """The top-level shape written by scan.py (the version key covers the rest)."""
    return (isinstance(state, dict) and isinstance(state.get("files"), dict)
            and isinstance(state.get("skipped"), dict) and isinstance(state.get("families"), dict)
            and isinstance(state.get("components"), list) and isinstance(state.get("import_time"), list))


def _looks_corrupt(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text or "corrupt" in text


def _move_aside(path: Path) -> None:
    """Keep a corrupt cache file (and its WAL files) for inspection instead of deleting it."""
    from neo_git.fileio import move_aside  # tempfile and friends: only for a corrupt cache

    try:
        move_aside(path, suffixes=("", "-wal", "-shm"))
    except OSError:
        pass


def _rollback(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass
