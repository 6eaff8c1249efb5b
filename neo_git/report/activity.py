"""Outcomes and agent turns over time: what shipped, what it did to health, what agents did.

Outcomes are the JSON Lines notes on `refs/notes/neo` (`outcomes.history.outcome_records`);
turns are the local records in `.git/neo/turns/` (`agents.turns.load_turns`).
Both are bucketed by UTC calendar: outcomes per week (Monday), turns per day, with the
empty buckets in between filled so the time axis is honest.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING

from neo_git.report.memory import week_of

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

VERDICTS = ("accepted", "modified", "independent")
HEALTH = ("improvement", "neutral", "regression")
TURN_STATES = ("completed", "interrupted", "error", "open")
MAX_WEEKS = 104
MAX_DAYS = 62
INJECTED_BINS = 10   # facts injected per turn: 0 … 9, then "10+"


@dataclass
class Activity:
    """Plain data for the outcome and agent sections."""

    weeks: list[dict] = field(default_factory=list)      # {"week", verdicts…, "health": {verdict: n}}
    by_commit: dict[str, dict] = field(default_factory=dict)   # commit hex -> {verdict: n}
    days: list[dict] = field(default_factory=list)       # {"day", states…, "injected": total, "turns": n}
    injected: list[int] = field(default_factory=list)    # histogram: turns that got 0, 1, … facts
    injected_known: int = 0                              # turns that recorded the number at all
    records: list[dict] = field(default_factory=list)    # every outcome record, newest first


def _when(stamp: object) -> datetime | None:
    if not isinstance(stamp, str):
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def continuous(first: date, last: date, step: timedelta, limit: int) -> list[date]:
    """Every bucket from *first* to *last*, at most *limit* (the newest)."""
    days: list[date] = []
    current = last
    while current >= first and len(days) < limit:
        days.append(current)
        current -= step
    return days[::-1]


def outcome_weeks(records: Iterable[dict]) -> tuple[list[dict], dict[str, dict]]:
    """(per week: counts by verdict and by the health verdict the outcomes carried;
    per commit hex: counts by verdict)."""
    weeks: dict[str, dict] = {}
    by_commit: dict[str, dict] = {}
    for record in records:
        verdict = record.get("verdict")
        moment = _when(record.get("ts"))
        if verdict not in VERDICTS or moment is None:
            continue
        week = weeks.setdefault(week_of(moment), {v: 0 for v in VERDICTS} | {"health": {h: 0 for h in HEALTH}})
        week[verdict] += 1
        if record.get("health") in HEALTH:
            week["health"][record["health"]] += 1
        commit = record.get("commit") or record.get("note_on")
        if isinstance(commit, str):
            counts = by_commit.setdefault(commit, {})
            counts[verdict] = counts.get(verdict, 0) + 1
    if not weeks:
        return [], by_commit
    mondays = sorted(weeks)
    span = continuous(date.fromisoformat(mondays[0]), date.fromisoformat(mondays[-1]), timedelta(days=7), MAX_WEEKS)
    empty = {v: 0 for v in VERDICTS}
    return [{"week": d.isoformat(), **weeks.get(d.isoformat(), empty | {"health": {h: 0 for h in HEALTH}})}
            for d in span], by_commit


def turn_days(turns: list) -> tuple[list[dict], list[int], int]:
    """(per day: turns by terminal state and facts injected; histogram of facts injected per
    turn; how many turns recorded that number)."""
    days: dict[str, dict] = {}
    histogram = [0] * (INJECTED_BINS + 1)
    known = 0
    for turn in turns:
        day = datetime.fromtimestamp(turn.started_at, timezone.utc).date().isoformat()
        row = days.setdefault(day, {s: 0 for s in TURN_STATES} | {"turns": 0, "injected": 0})
        state = turn.terminal_state if turn.terminal_state in TURN_STATES else "open"
        row[state] += 1
        row["turns"] += 1
        injected = getattr(turn, "facts_injected", None)
        if isinstance(injected, int) and injected >= 0:
            row["injected"] += injected
            histogram[min(injected, INJECTED_BINS)] += 1
            known += 1
    if not days:
        return [], histogram, 0
    ordered = sorted(days)
    span = continuous(date.fromisoformat(ordered[0]), date.fromisoformat(ordered[-1]), timedelta(days=1), MAX_DAYS)
    empty = {s: 0 for s in TURN_STATES} | {"turns": 0, "injected": 0}
    return [{"day": d.isoformat(), **days.get(d.isoformat(), empty)} for d in span], histogram, known


def activity(repo: pygit2.Repository) -> Activity:
    """Outcome notes and turn records of *repo*, bucketed for the report."""
    from neo_git.agents.turns import load_turns
    from neo_git.identity import repository_paths
    from neo_git.outcomes.history import outcome_records

    records = outcome_records(repo)
    weeks, by_commit = outcome_weeks(records)
    days, histogram, known = turn_days(load_turns(repository_paths(repo)))
    return Activity(weeks, by_commit, days, histogram, known, records)
