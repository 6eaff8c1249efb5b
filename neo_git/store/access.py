"""Access bookkeeping, kept local: `.git/neo/access.json` plus an append-only `access.log`.

Recall counts every fact it returns once per request. Writing those counts to
the shared ref would add a commit (and a merge conflict for teammates) per
question, so they live beside the repository instead and are laid over the
stored facts when read: {fact id: [access count, last accessed]}.

A recall does not rewrite a file: it appends one line (`<time> <id> <id> …`) to
`access.log` with a single `O_APPEND` write (no lock, no fsync: a line is a few
hundred bytes, and counts are derived data). Readers add the log's lines to
`access.json`. Once the log passes FOLD_BYTES the appender that noticed folds it
into `access.json` under the lock (rename the log aside, read it, replace the
JSON atomically, delete it). Appenders hold a shared `flock` on the log while they
write and the fold an exclusive one while it renames, so no count is lost in between. Without a path (an in-memory store) the
counts live only in this object.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from neo_git import safejson
from neo_git.facts import Fact, FactMetadata, now_iso
from neo_git.fileio import LOCK_WAIT_SECONDS, LockTimeout, atomic_write, locked

ACCESS_LOCK_WAIT = 0.2   # seconds a recall waits for a lock on the counts before skipping them

FOLD_BYTES = 64 * 1024
_LINE = re.compile(r"^(\S+)((?: [0-9a-f]{16})+)$")


class AccessLog:
    """Per-repository access counts, safe for concurrent processes."""

    def __init__(self, path: Path | None) -> None:
        self.path = None if path is None else Path(path)
        self._lock = None if self.path is None else self.path.with_name(self.path.name + ".lock")
        self._log = None if self.path is None else self.path.with_name("access.log")
        self._cache: dict[str, list] | None = None
        self._last: dict[str, str | None] | None = None

    def _read_base(self) -> dict[str, list]:
        assert self.path is not None
        try:
            data = safejson.loads(self.path.read_bytes())
        except (OSError, ValueError, UnicodeDecodeError):
            return {}  # derived, local data: a broken file just restarts the counts
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, list) and len(v) == 2 and isinstance(v[0], int)}

    def _read(self) -> dict[str, list]:
        if self.path is None:
            return dict(self._cache or {})
        data = self._read_base()
        assert self._log is not None
        try:
            self._fold_lines(data, self._log.read_bytes())
        except OSError:
            pass
        return data

    @staticmethod
    def _fold_lines(data: dict[str, list], raw: bytes) -> None:
        """Add the requests in log bytes *raw* to *data* (a torn or garbled line is skipped)."""
        for line in raw.decode("utf-8", "replace").split("\n")[:-1]:  # the last piece has no newline yet
            match = _LINE.match(line)
            if match:
                AccessLog._counted(data, set(match.group(2).split()), match.group(1))

    def counts(self) -> dict[str, list]:
        """{fact id: [count, last_accessed]} (read once per process, then kept up to date by record)."""
        if self._cache is None:
            self._cache = self._read()
            self._last = None
        return self._cache

    def last_accessed(self) -> dict[str, str | None]:
        """{fact id: last accessed} for the counted facts (kept, not rebuilt per call)."""
        if self._last is None:
            self._last = {i: v[1] for i, v in self.counts().items()}
        return self._last

    def record(self, fact_ids: Iterable[str]) -> None:
        """Count one access for each id (duplicates in one request count once)."""
        ids = set(fact_ids)
        if not ids:
            return
        stamp = now_iso()
        counts = self.counts()
        if self.path is not None:
            try:
                self._append(ids, stamp)
            except (OSError, LockTimeout):
                return  # read-only .git/neo, a folder in the way, a held lock: the answer matters, the count does not
        self._counted(counts, ids, stamp)
        if self._last is not None:
            self._last.update((i, stamp) for i in ids)

    def _append(self, ids: set[str], stamp: str) -> None:
        log = self._log
        assert log is not None
        line = (stamp + "".join(" " + i for i in sorted(ids) if len(i) == 16) + "\n").encode("utf-8")
        for _attempt in range(8):
            try:
                fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            except FileNotFoundError:  # no .git/neo yet
                log.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                # Shared with other appenders, exclusive against a fold: once we hold it, the file
                # is either still the log (write) or was folded away meanwhile (open the new one).
                _flock(fd, fcntl.LOCK_SH, log, ACCESS_LOCK_WAIT)
                try:
                    if os.fstat(fd).st_ino != os.stat(log).st_ino:
                        continue
                except FileNotFoundError:
                    continue
                os.write(fd, line)  # one write: O_APPEND places it whole at the end
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)  # also releases the flock
            if size >= FOLD_BYTES:
                try:
                    self.fold(timeout=ACCESS_LOCK_WAIT)
                except LockTimeout:
                    pass   # another process is folding (or stuck): the next appender folds
            return

    def fold(self, timeout: float | None = None) -> None:
        """Move the log's lines into `access.json` (under the lock; a no-op without a log); waits
        at most *timeout* seconds for each lock (default: a command's), then `LockTimeout`."""
        if self.path is None:
            return
        log, lock = self._log, self._lock
        assert log is not None and lock is not None
        wait = LOCK_WAIT_SECONDS if timeout is None else timeout
        with locked(lock, timeout=wait):
            aside = log.with_name(f"access.log.folding-{os.getpid()}")
            try:
                fd = os.open(log, os.O_RDONLY)
            except FileNotFoundError:
                fd = None
            if fd is not None:
                try:
                    _flock(fd, fcntl.LOCK_EX, log, wait)  # waits for appends in flight; later ones see the rename
                    os.replace(log, aside)
                finally:
                    os.close(fd)
            # Also what a fold that died half-way left behind.
            pieces = sorted(log.parent.glob("access.log.folding-*"))
            if not pieces:
                return
            data = self._read_base()
            for piece in pieces:
                self._fold_lines(data, piece.read_bytes())
            # Atomic (readers never see half a file), not fsynced: derived, local data.
            atomic_write(self.path, (json.dumps(data, sort_keys=True) + "\n").encode("utf-8"), durable=False)
            for piece in pieces:
                piece.unlink()

    @staticmethod
    def _counted(data: dict[str, list], ids: set[str], stamp: str) -> dict[str, list]:
        for fact_id in ids:
            entry = data.get(fact_id)
            last = stamp if entry is None or not entry[1] or entry[1] <= stamp else entry[1]
            data[fact_id] = [(entry[0] if entry else 0) + 1, last]
        return data

    def apply(self, fact: Fact) -> Fact:
        """*fact* with the local access count added to the stored one."""
        entry = self.counts().get(fact.id)
        if not entry:
            return fact
        meta = fact.metadata
        last = max(filter(None, (meta.last_accessed, entry[1])), default=None)
        # Two plain copies instead of dataclasses.replace (which runs both frozen __init__s): a
        # recall lays counts over every fact it returns, hundreds when a store has many constraints.
        # Valid because neither class derives anything at init (parse_cache asserts it).
        counted = _new(FactMetadata)
        _set(counted, "__dict__", {**meta.__dict__, "access_count": meta.access_count + entry[0],
                                   "last_accessed": last})
        copy = _new(Fact)
        _set(copy, "__dict__", {**fact.__dict__, "metadata": counted})
        return copy


_new = object.__new__
_set = object.__setattr__


def _flock(fd: int, kind: int, path: Path, timeout: float) -> None:
    """`flock(fd, kind)` waiting at most *timeout* seconds (then `LockTimeout`): appenders and a
    fold hold the log's lock for a write or a rename, so a longer wait is a stuck process."""
    import errno
    import time

    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            if time.monotonic() > deadline:
                raise LockTimeout(path, timeout) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.02)

