"""What every scope backend offers the FactStore: load, and transact with retry or lock."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Protocol

from neo_git.facts import Fact


@dataclass(frozen=True)
class Change:
    """Facts to write (new or updated, whole) and a one-line summary for the log."""

    facts: tuple[Fact, ...]
    message: str
    details: tuple[str, ...] = ()   # extra lines for the commit message


@dataclass
class LoadedScope:
    """The facts of one backend plus what could not be read (kept, never overwritten)."""

    facts: dict[str, Fact]
    warnings: list[str] = field(default_factory=list)


# A transaction body: gets the current facts (read-only), returns a Change or None (nothing to do).
Transaction = Callable[[Mapping[str, Fact]], "Change | None"]


class Backend(Protocol):
    """Storage for one scope (and, for org, one org)."""

    description: str

    def load(self) -> LoadedScope: ...

    def transact(self, body: Transaction) -> Change | None: ...
