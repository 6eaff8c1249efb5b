"""Errors with a message a user can act on.

`NeoError` is printed by the CLI as ``fatal: <message>`` plus ``hint: <hint>``
and exits 1. Anything else that escapes a command is our bug: exit 3, with the
traceback saved under ``.git/neo/``.
"""
from __future__ import annotations


class NeoError(Exception):
    """A problem the user can fix; carries a one-line message and an optional hint."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


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
