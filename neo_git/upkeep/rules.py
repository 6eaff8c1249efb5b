"""What every upkeep step shares: thresholds, the clock, and the shape of a plan.

Each step is a pure function over one scope's facts that returns a `StepPlan`:
the actions it decided (with the reason a person reads) and the `Change` that
writes them. The runner hands it to `FactStore.transact`, so a step that races
another writer is simply planned again against the newer facts.
"""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import NamedTuple

from neo_git.facts import Fact
from neo_git.store.base import Change

STALE_AFTER = timedelta(days=14)   # unproven facts older than this ...
STALE_CONFIDENCE = 0.4             # ... and below this confidence are pruned ...
CONSULTED_WINDOW = STALE_AFTER     # ... unless someone consulted them this recently (never evicted either)
DEMOTE_STEP = 0.1                  # what a fact whose cited code is all gone loses, once per loss
DEMOTE_FLOOR = 0.1
SYNTHESIS_SIMILARITY = 0.80        # pairwise cosine a cluster must exceed
SYNTHESIS_MIN_CLUSTER = 3
PURGE_AFTER = timedelta(days=30)   # retired facts older than this leave the tip
SYNTHESIZED_TAG = "synthesized"



class Action(NamedTuple):
    """One thing upkeep did (or would do) to one fact, and why."""

    step: str                     # evict | prune | demote | synthesize | purge
    scope: str
    fact_id: str
    subject: str
    why: str
    result_id: str | None = None  # synthesize: the archetype that replaces the fact
    evidence: str = ""            # what the step acted on, in a line (`git neo gc --dry-run` prints it)

    def to_dict(self) -> dict:
        """Plain JSON form (for `git neo gc --json`)."""
        return self._asdict()


class StepPlan(NamedTuple):
    """What a step decided: its actions and the change that writes them (None: nothing to do)."""

    actions: list[Action]
    change: Change | None


NOTHING = StepPlan([], None)


def utc_now() -> datetime:
    """The current time, UTC, second precision (the default `now` of every step)."""
    return datetime.now(timezone.utc).replace(microsecond=0)


def stamp(now: datetime) -> str:
    """*now* as the ISO 8601 text facts store."""
    return now.astimezone(timezone.utc).replace(microsecond=0).isoformat()


def parse_time(text: str | None) -> datetime | None:
    """An ISO 8601 time from a fact (naive means UTC); None when absent or unreadable."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def age(fact: Fact, now: datetime) -> timedelta | None:
    """How long ago *fact* was created (None if its date cannot be read: never "old")."""
    created = parse_time(fact.metadata.created_at)
    return None if created is None else now - created


def retired_for(fact: Fact, now: datetime) -> timedelta | None:
    """How long *fact* has been invalid: since its invalidation, else since its creation."""
    invalidation = fact.metadata.invalidation
    when = parse_time(invalidation.at if invalidation is not None else None) or parse_time(fact.metadata.created_at)
    return None if when is None else now - when


def last_consulted(fact: Fact, local: Mapping[str, str | None]) -> datetime | None:
    """When *fact* was last returned to someone (recall, an agent hook, `ask`): the later of the
    time stored with it and this clone's access log (*local*: fact id -> last access)."""
    times = [parse_time(fact.metadata.last_accessed), parse_time(local.get(fact.id))]
    return max((t for t in times if t is not None), default=None)


def consulted_since(fact: Fact, local: Mapping[str, str | None], now: datetime) -> datetime | None:
    """The last time *fact* was consulted when that was within `CONSULTED_WINDOW` of *now*, else None."""
    last = last_consulted(fact, local)
    return last if last is not None and now - last <= CONSULTED_WINDOW else None


def short(subject: str, width: int = 60) -> str:
    """A subject cut for a commit-message line."""
    return subject if len(subject) <= width else subject[: width - 1] + "…"


def change_for(step: str, scope: str, actions: list[Action], facts: tuple[Fact, ...] = (),
               removed: tuple[str, ...] = (), headline: str = "") -> Change:
    """The commit for one step: a one-line summary and one line per fact saying why."""
    noun = "fact" if len(actions) == 1 else "facts"
    message = headline or f"upkeep: {step} {len(actions)} {noun} ({scope} scope)"
    details = tuple(f"{a.step} {a.fact_id} \"{short(a.subject)}\": {a.why}" for a in actions)
    return Change(facts=facts, message=message[:120], details=details, removed=removed)
