"""`run_gc` runs every upkeep step over every scope; `maybe_run_daily` does it at most
once a day.

Each step's plan goes through `FactStore.transact`, one commit per step and scope
(one per archetype for synthesis), so a gc racing another writer is re-planned
against the newer facts by the ref store's compare-and-swap retry and loses nothing.
A dry run plans the same steps against an in-memory copy, so later steps see what
earlier ones would have done. Two gc runs in one clone take turns (a lock in
`.git/neo/`), which keeps the local demotion record consistent.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING

from neo_git.facts import SCOPE_ORDER, Fact, FactScope
from neo_git.fileio import LockTimeout, locked
from neo_git.store.access import AccessLog
from neo_git.store.base import Change
from neo_git.upkeep.rules import Action, StepPlan, stamp, utc_now
from neo_git.upkeep.state import LOCK_FILE, UpkeepState
from neo_git.upkeep.steps import plan_cap, plan_demotions, plan_prune, plan_purge
from neo_git.upkeep.synthesis import plan_synthesis

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store import FactStore

STEPS = ("prune", "demote", "synthesize", "evict", "purge")
DAILY = timedelta(days=1)
_MAX_ROUNDS = 10_000  # synthesis writes one archetype per round; each round retires ≥ 3 facts


@dataclass
class UpkeepReport:
    """What a gc run did (or, with dry_run, would do)."""

    dry_run: bool
    at: str
    actions: list[Action] = field(default_factory=list)
    commits: int = 0
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        """Actions per step, every step named (0 when it found nothing)."""
        return {step: sum(a.step == step for a in self.actions) for step in STEPS}

    def to_dict(self) -> dict:
        """Plain JSON form (`git neo gc --json`)."""
        return {"dry_run": self.dry_run, "at": self.at, "counts": self.counts(), "commits": self.commits,
                "seconds": round(self.seconds, 3), "actions": [a.to_dict() for a in self.actions]}


def run_gc(store: FactStore, *, now: datetime | None = None, dry_run: bool = False,
           scopes: Iterable[FactScope] = SCOPE_ORDER, lock_timeout: float | None = 30.0) -> UpkeepReport:
    """Prune, demote, synthesize, evict over the caps and purge, in every scope; each step one
    commit saying why. *now* is injectable (tests, replays); a dry run writes nothing."""
    now = now or utc_now()
    started = time.perf_counter()
    assert store.paths is not None   # upkeep runs on a repository's store
    neo_dir = store.paths.neo_dir
    neo_dir.mkdir(parents=True, exist_ok=True)
    with locked(neo_dir / LOCK_FILE, timeout=lock_timeout):
        report = _run_locked(store, now, dry_run, tuple(scopes))
    report.seconds = time.perf_counter() - started
    return report


def maybe_run_daily(store: FactStore, now: datetime | None = None) -> UpkeepReport | None:
    """Run gc when this clone's last run is a day old or more (call it after outcome
    processing). Cheap when not due: one small file read. Returns None when not due,
    switched off (`git config neo.autoGc false`) or another gc is running right now."""
    from neo_git.config import config_bool

    now = now or utc_now()
    assert store.paths is not None   # upkeep runs on a repository's store
    neo_dir = store.paths.neo_dir
    last = UpkeepState.read(neo_dir).last_run
    if last is not None and now - last < DAILY:
        return None
    if not config_bool("neo.autoGc", True, repo=store.repo):
        return None
    neo_dir.mkdir(parents=True, exist_ok=True)
    try:
        with locked(neo_dir / LOCK_FILE, timeout=0):
            state = UpkeepState.read(neo_dir)  # another process may have run it meanwhile
            if state.last_run is not None and now - state.last_run < DAILY:
                return None
            started = time.perf_counter()
            report = _run_locked(store, now, False, SCOPE_ORDER)
            report.seconds = time.perf_counter() - started
            return report
    except LockTimeout:
        return None  # a gc is running: this one is not needed


def _run_locked(store: FactStore, now: datetime, dry_run: bool, scopes: tuple[FactScope, ...]) -> UpkeepReport:
    assert store.paths is not None   # upkeep runs on a repository's store
    neo_dir = store.paths.neo_dir
    if not dry_run:
        # Recorded first: a gc that fails every time must not be retried on every hook.
        UpkeepState(last_run=now).write(neo_dir)
    # When each fact was last consulted here, fresh (a long-lived process's AccessLog caches it).
    local = AccessLog(store.access.path).last_accessed() if store.access.path else dict(store.access.last_accessed())
    report = UpkeepReport(dry_run=dry_run, at=stamp(now))
    vectors_of = store._vectors_of  # the store's per-process vector memo over the shared cache

    def embedder_id() -> str:
        return store.embedder.id

    # Claims (unverified authors) are never synthesized: an archetype is committed here, so it
    # would count as this clone's own and launder them (issue 36: derived facts inherit the weakest trust).
    claims = frozenset(store.untrusted())
    for scope in scopes:
        overlay = dict(store.backends[scope].load().facts) if dry_run else None
        clustering: dict = {}  # synthesis clusters once per scope, then one archetype per round
        planners: dict[str, Callable[..., StepPlan]] = {
            "prune": lambda f, s=scope: plan_prune(f, s, now, local),
            "demote": lambda f, s=scope: plan_demotions(f, s),
            "synthesize": lambda f, s=scope, memo=clustering: plan_synthesis(f, s, vectors_of, now, author=store.author,
                                                            embedder_id=embedder_id, max_clusters=1,
                                                            memo=memo, exclude=claims),
            "evict": lambda f, s=scope: plan_cap(f, s, store.cap_of(s), now, local),
            "purge": lambda f, s=scope: plan_purge(f, s, now),
        }
        for step in STEPS:
            for _round in range(_MAX_ROUNDS):
                plan = _apply(store, scope, planners[step], overlay)
                if not plan.actions:
                    break
                report.actions.extend(plan.actions)
                report.commits += 1
                if step != "synthesize":
                    break
    return report


def _apply(store: FactStore, scope: FactScope, planner: Callable[[Mapping[str, Fact]], StepPlan],
           overlay: dict[str, Fact] | None) -> StepPlan:
    """Plan one step and write it (or, for a dry run, apply it to *overlay*)."""
    planned: list[StepPlan] = []

    def body(facts: Mapping[str, Fact]) -> Change | None:
        plan = planner(facts)
        planned[:] = [plan]  # a retried plan replaces the one that lost the race
        return plan.change

    if overlay is not None:
        change = body(MappingProxyType(overlay))
        if change is not None:
            for fact_id in change.removed:
                overlay.pop(fact_id, None)
            overlay.update((f.id, f) for f in change.facts)
        return planned[0]
    written = store.transact(scope, body)
    return planned[0] if written is not None else StepPlan([], None)
