"""Crash-safe file writes and inter-process locks (POSIX).

A write goes to a temp file in the same folder, is fsynced, then `os.replace`d
over the target, and the folder is fsynced: a reader sees the old file or the
new one, never half of either, even if the writer is killed mid-write.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from neo_git import safejson
from neo_git.errors import NeoError


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace *path* with *data* atomically; with *durable* (the default) also fsync
    the file and its folder, so the new content survives a power cut. Derived, local
    data (access counts) skips the fsyncs: losing the last update costs nothing."""
    atomic_write_parts(path, (data,), durable=durable)


def atomic_write_parts(path: Path, parts: Iterable[bytes | memoryview], *, durable: bool = True) -> None:
    """`atomic_write` of the concatenation of *parts*, written one after another (a 30 MB
    cache is never joined into one more copy in memory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            for part in parts:
                handle.write(part)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# A command that waits longer than this for one holder of a lock fails with a clear message:
# locks are held for milliseconds, so a longer wait means a stuck or stopped process, not a
# busy one. While the lock keeps changing hands (many writers at once) the wait goes on, up to
# LOCK_WAIT_LIMIT in all.
LOCK_WAIT_SECONDS = 5.0
LOCK_WAIT_LIMIT = 60.0


@contextlib.contextmanager
def locked(path: Path, timeout: float | None = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold an exclusive `flock` on *path* (created if needed) for the block; wait at most
    *timeout* seconds for one holder (None: as long as it takes; nothing in git-neo passes it),
    then `LockTimeout`.

    flock locks die with their process, so a killed writer never leaves a
    stale lock behind (unlike git's `.lock` files, which we do not need here).
    Each holder writes its pid and a stamp into the file, so a waiter can tell a lock that
    changes hands (wait on) from one held by the same process all along (give up).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        start = time.monotonic()
        deadline = start + (timeout or 0.0)
        holder = _holder(fd)
        delay = 0.001
        while timeout is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                now = time.monotonic()
                if now > deadline:
                    current = _holder(fd)
                    if timeout == 0 or current == holder or now - start > LOCK_WAIT_LIMIT:
                        raise LockTimeout(path, timeout) from None
                    holder, deadline = current, now + timeout   # it changed hands: others are progressing
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        _claim(fd)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _holder(fd: int) -> bytes:
    try:
        return os.pread(fd, 64, 0)
    except OSError:
        return b""


def _claim(fd: int) -> None:
    """Say who holds the lock now (the waiters' sign of progress); best effort."""
    try:
        os.pwrite(fd, f"{os.getpid()} {time.time_ns()}\n".ljust(40).encode(), 0)
    except OSError:
        pass


class LockTimeout(NeoError):
    """A lock was not free within the time allowed."""

    def __init__(self, path: Path, waited: float) -> None:
        super().__init__(f"timed out after {waited:g} s waiting for the lock {path}",
                         "another git-neo process holds it (a stopped one releases it when it exits: "
                         "`fuser -v " + str(path) + "` names it); try again")
        self.path = path


def move_aside(path: Path, *, suffixes: tuple[str, ...] = ("",), expected: bytes | None = None) -> Path:
    """Rename an unreadable file to `<name>.corrupt-<time>-<pid>[-n]` (and its companions
    with *suffixes*, e.g. SQLite's "-wal"), keeping it for inspection; returns the new path.

    With *expected*, the file is moved only if it still holds those bytes (someone may
    have replaced it meanwhile); a file already gone is not an error."""
    stem = f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    aside = path.with_name(stem)
    counter = 1
    while aside.exists():  # a second corrupt file within the same second: keep both copies
        counter += 1
        aside = path.with_name(f"{stem}-{counter}")
    try:
        if expected is not None and path.read_bytes() != expected:
            return aside
        for suffix in suffixes:
            source = Path(str(path) + suffix)
            if suffix == "" or source.exists():
                os.replace(source, Path(str(aside) + suffix))
    except FileNotFoundError:
        pass  # another process moved it aside first
    return aside


def publish_once(path: Path, text: str) -> str:
    """The text of *path*, writing *text* there first if the file does not exist yet.

    Concurrent first writers agree: each writes its own temporary file and publishes it
    with `link()`, which fails when another process got there first (then theirs wins);
    the file is never seen half-written."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    candidate = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    candidate.write_text(text, encoding="utf-8")
    try:
        os.link(candidate, path)
    except FileExistsError:
        pass
    finally:
        candidate.unlink()
    return path.read_text(encoding="utf-8")


def read_json_list(path: Path, key: str, *, have_lock: bool, what: str, hint: str) -> list | None:
    """The list under *key* in a local JSON file `{"version": …, key: [...]}`; None when the
    file does not exist. A file that does not parse is moved aside (under its lock file,
    `<name>.lock`, unless the caller holds it) and CorruptStore is raised: never overwritten."""
    from neo_git.errors import CorruptStore

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise CorruptStore(f"{path} is a directory, not a {what}") from None
    try:
        envelope = safejson.loads(data)
        rows = envelope.get(key) if isinstance(envelope, dict) else None
        if not isinstance(rows, list):
            raise ValueError(f'expected {{"version": 1, "{key}": [...]}}')
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        if have_lock:
            aside = move_aside(path, expected=data)
        else:
            with locked(path.with_name(path.name + ".lock")):
                aside = move_aside(path, expected=data)
        raise CorruptStore(f"{path} is not a valid {what} ({str(exc)[:80]}); moved it to {aside}", hint) from None
    return rows


def read_record(path: Path, key: str) -> object | None:
    """The member *key* of a clone-local record `{"format": 1, key: …}` (a cache or a queue under
    `.git/neo`, never pushed); None when the file is missing or unreadable: such a record only
    saves work or holds what can be asked again, so a damaged one is read as empty."""
    try:
        data = safejson.loads(path.read_bytes())
        return data.get(key) if isinstance(data, dict) else None
    except (OSError, ValueError, RecursionError):
        return None


def read_table(path: Path, key: str) -> dict[str, dict]:
    """A record whose *key* maps names to objects ({} when missing or unreadable; a member that is
    not an object is dropped)."""
    value = read_record(path, key)
    return {str(k): v for k, v in value.items() if isinstance(v, dict)} if isinstance(value, dict) else {}


def rewrite_record(path: Path, key: str, change, *, read=read_record, lock: Path | None = None,
                   indent: int | None = None) -> None:
    """Under the record's lock (*lock*, default `<path without suffix>.lock`), write
    `{"format": 1, key: change(current)}`, *current* as *read* reads it: two processes that add to
    one record at once both keep what they added."""
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(lock or path.with_suffix(".lock"), timeout=5.0):
        value = change(read(path, key))
        atomic_write(path, json.dumps({"format": 1, key: value}, sort_keys=True, indent=indent).encode("utf-8"))


def add_to_table(path: Path, key: str, rows: Mapping[str, Mapping], *, keep_first: bool = False) -> None:
    """Add *rows* to the table record at *path* (`read_table`), under its lock; a name already
    there keeps its row when *keep_first*, else takes the new one."""
    new = {str(k): dict(v) for k, v in rows.items()}
    rewrite_record(path, key, lambda table: {**new, **table} if keep_first else {**table, **new}, read=read_table)
