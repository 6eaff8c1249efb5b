"""What every scope backend offers the FactStore: load, and transact with retry or lock."""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from neo_git.facts import Fact, FactScope


class ScopeCap(int):
    """A scope's cap (an int wherever one is expected) that may name facts the writer does not
    own (*others*: never counted against this writer's cap and never evicted by its writes;
    in project scope, facts whose author is someone else) and facts to evict first (the
    claims among the rest: a forger using our address is evicted before our own facts)."""

    evict_first: Callable[[], frozenset[str]] | None = None
    others: Callable[[], Collection[str]] | None = None

    @classmethod
    def of(cls, limit: int, evict_first: Callable[[], frozenset[str]] | None = None,
           others: Callable[[], Collection[str]] | None = None) -> ScopeCap:
        """A cap of *limit* on the facts not in *others()*, evicting *evict_first()* before any other."""
        cap = cls(limit)
        cap.evict_first = evict_first
        cap.others = others
        return cap


# How many valid facts of its own each author keeps in a scope: the write policy evicts the
# writer's least useful facts beyond it (never someone else's; see design notes, issue 35).
SCOPE_CAPS = {FactScope.GLOBAL: 200, FactScope.ORG: 100, FactScope.PROJECT: 500, FactScope.SESSION: 50}


@dataclass(frozen=True)
class Change:
    """One write to one scope: facts to put (new or updated, whole), ids to remove, and a
    one-line summary for the log.

    `removed` takes facts off the current state (upkeep's purge; on the ref their history
    stays in `git log`). `parents` are extra parent commits for the ref store (a sync merge
    names the other side's tip); file-backed scopes have no history and ignore them.
    A change with no facts, no removals and no parents writes nothing.
    """

    facts: tuple[Fact, ...] = ()
    message: str = ""
    details: tuple[str, ...] = ()   # extra lines for the commit message
    removed: tuple[str, ...] = ()   # fact ids to delete from the current state
    parents: tuple[str, ...] = ()   # extra parent commit ids (hex), ref store only

    @property
    def is_empty(self) -> bool:
        """True when applying it would change nothing."""
        return not (self.facts or self.removed or self.parents)


@dataclass
class LoadedScope:
    """The facts of one backend plus what could not be read (kept, never overwritten)."""

    facts: dict[str, Fact]
    warnings: list[str] = field(default_factory=list)


# A transaction body: gets the current facts (read-only), returns a Change or None (nothing to do).
# It may run several times (a ref store retries when another writer moved the ref first), so it
# must plan from what it is given, without side effects.
Transaction = Callable[[Mapping[str, Fact]], "Change | None"]


class Backend(Protocol):
    """Storage for one scope (and, for org, one org)."""

    description: str

    def load(self) -> LoadedScope: ...

    def transact(self, body: Transaction) -> Change | None: ...
