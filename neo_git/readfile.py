"""Reading a file named from outside (a path typed by the user, an instruction file in the work
tree) without hanging or running out of memory: only a regular file is read, and only up to a
limit. A FIFO would block the open until a writer came (`git neo init` with CLAUDE.md a FIFO);
/dev/zero never ends (`git neo import /dev/zero`)."""
from __future__ import annotations

import os
import stat

from neo_git.errors import NeoError

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


class NotARegularFile(NeoError):
    """The path is a FIFO, device, socket or directory: refused before anything is read."""


class FileTooLarge(NeoError):
    """The file holds more than the caller's limit."""

    def __init__(self, path: str, limit: int, size: int | None) -> None:
        shown = f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB"
        super().__init__(f"{path} is larger than {shown}" + (f" ({size:,} bytes)" if size is not None else ""),
                         "split it, or pass a smaller file")
        self.size = size


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words ("a FIFO (named pipe)", …)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_regular(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of the regular file at *path* (symlinks followed), at most *limit* of them.

    Opened with O_NONBLOCK (a FIFO opens at once instead of waiting for a writer) and checked
    with fstat on the open descriptor (no race with a rename): anything but a regular file is a
    `NotARegularFile`, more than *limit* bytes (by size, or by what a read returns: a file can
    grow) a `FileTooLarge`. OSError (missing, permission) passes through."""
    name = os.fspath(path)
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(f"{name} is {kind_of(info.st_mode)}, not a regular file",
                                  "save the content to a file first")
        if info.st_size > limit:
            raise FileTooLarge(name, limit, info.st_size)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise FileTooLarge(name, limit, None)
        return b"".join(chunks)
    finally:
        os.close(fd)
