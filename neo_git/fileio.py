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
from pathlib import Path
from typing import Iterator

from neo_git.errors import NeoError


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace *path* with *data* atomically; with *durable* (the default) also fsync
    the file and its folder, so the new content survives a power cut. Derived, local
    data (access counts) skips the fsyncs: losing the last update costs nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
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


@contextlib.contextmanager
def locked(path: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold an exclusive `flock` on *path* (created if needed) for the block.

    flock locks die with their process, so a killed writer never leaves a
    stale lock behind (unlike git's `.lock` files, which we do not need here).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() > deadline:
                    raise NeoError(f"timed out waiting for the lock {path}",
                                   "another git-neo process is writing; try again") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        yield
    finally:
        os.close(fd)  # closing releases the lock
