"""Planting facts with chosen ages, confidences and successes (as outcome processing or a
teammate's push would write them), and reading the ref back."""
from __future__ import annotations

from datetime import datetime, timedelta

from neo_git.facts import Fact, FactKind, FactMetadata, FactScope, new_fact_id
from neo_git.store import Change
from neo_git.upkeep.rules import stamp, utc_now

NOW = utc_now()


def days_ago(days: float, now: datetime = NOW) -> datetime:
    return now - timedelta(days=days)


def make(store, subject: str, body: str = "", *, kind: str = "pattern", confidence: float = 0.5,
         success: int = 0, created: datetime | None = None, tags=(), depends_on=(), scope: str = "project") -> Fact:
    """A fact as the store would write it, with its metadata chosen by the test."""
    fact_scope = FactScope(scope)
    return Fact(id=new_fact_id(), subject=subject, body=body, kind=FactKind(kind), scope=fact_scope,
                org_id=store.org_id, project_id=store.project_id, tags=tuple(tags), depends_on=tuple(depends_on),
                metadata=FactMetadata(created_at=stamp(created or NOW), confidence=confidence,
                                      success_count=success, author=store.author))


def put(store, *facts: Fact, scope: str = "project") -> None:
    """Write *facts* in one commit through the public write path."""
    store.transact(scope, lambda _current: Change(facts=tuple(facts), message="test: plant facts"))


def state(store, fact_id: str) -> Fact:
    """The fact as stored now (fresh read)."""
    return store.get(fact_id)
