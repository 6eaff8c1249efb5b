"""What a small record file says, read again only when the file changes.

Trust asks the same records (verdicts, decisions, pins, bound keys) on every recall; each is read
once per (mtime, size) and handed back as the same object while it is unchanged, so that callers
can memoise on identity (`store/trust.py`). Standard library only: the records sit on recall's path.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


class FileMemo(Generic[T]):
    """One value per file path, kept while the file's (mtime_ns, size) stays the same."""

    def __init__(self, empty: T) -> None:
        self.empty = empty   # for a missing or unreadable file: the same object every time
        self._memo: dict[str, tuple[tuple[int, int], T]] = {}

    def get(self, path: Path, load: Callable[[Path], T]) -> T:
        """*load*(path), or what it gave while the file is unchanged; `empty` when the file cannot
        be read (an OSError from *load* included)."""
        try:
            info = path.stat()
        except OSError:
            return self.empty
        stamp = (info.st_mtime_ns, info.st_size)
        memo = self._memo.get(str(path))
        if memo is not None and memo[0] == stamp:
            return memo[1]
        try:
            value = load(path)
        except OSError:
            return self.empty
        self._memo[str(path)] = (stamp, value)
        return value

    def forget(self, path: Path | None = None) -> None:
        """Drop what was read of *path* (None: of every file), after this process wrote it or in
        tests that rewrite a file within one mtime tick."""
        if path is None:
            self._memo.clear()
        else:
            self._memo.pop(str(path), None)
