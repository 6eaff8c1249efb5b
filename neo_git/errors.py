"""Errors with a message a user can act on.

`NeoError` is printed by the CLI as ``fatal: <message>`` plus ``hint: <hint>``
and exits 1. Anything else that escapes a command is our bug: exit 3, with the
traceback saved under ``.git/neo/``.
"""
from __future__ import annotations

import errno


class NeoError(Exception):
    """A problem the user can fix; carries a one-line message and an optional hint."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


_OS_HINTS: dict[int | None, str] = {
    errno.EACCES: "check that you may write there (permissions, or a read-only file system)",
    errno.EPERM: "check that you may write there (permissions, the immutable flag: `lsattr`)",
    errno.EROFS: "the file system is mounted read-only",
    errno.ENOSPC: "the disk is full; free some space and try again",
    errno.EDQUOT: "your disk quota is used up; free some space and try again",
    errno.ENOTDIR: "a file is where a folder should be; move it aside (check NEO_HOME too)",
    errno.EISDIR: "a folder is where a file should be; move it aside",
    errno.EBUSY: "the path is in use (a mount point or the current folder); choose another",
}


def os_error(exc: OSError) -> NeoError:
    """A NeoError for an error the operating system reported (a read-only folder, a full disk,
    a folder where a file should be): the file, what went wrong, and what to check."""
    what = exc.strerror or str(exc)
    where = exc.filename if exc.filename is not None else None
    message = f"{where}: {what}" if where is not None else f"{what}"
    code = exc.errno
    if code is None:  # libgit2 (pygit2) raises OSError with only a message
        text = what.lower()
        code = next((c for c, words in ((errno.EPERM, "operation not permitted"), (errno.EACCES, "permission denied"),
                                        (errno.EROFS, "read-only"), (errno.ENOSPC, "no space"))
                     if words in text), None)
    return NeoError(message, _OS_HINTS.get(code, "check the file and its folder, then try again"))


class FactNotFound(NeoError, LookupError):
    """No fact has the given id (or id prefix)."""

    def __init__(self, fact_id: str) -> None:
        super().__init__(f"no fact with id '{fact_id}'", "`git neo list --all` shows every id")
        self.fact_id = fact_id


class InvalidFact(NeoError, ValueError):
    """A fact (from the user, a file or a teammate's push) fails validation."""


class NotARepository(NeoError):
    """The path is not inside a git repository."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"not a git repository (or any parent up to the filesystem root): {path}",
            "run this inside a git repository, or `git init` one first",
        )


class CorruptStore(NeoError):
    """A facts file or the facts ref cannot be read; nothing was overwritten."""
