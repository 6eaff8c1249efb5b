"""Memory over time, read from the history of `refs/neo/facts` (`git log refs/neo/facts`).

Every commit on the ref holds the whole project scope, so the ref's first-parent
chain is the project's memory as this clone saw it, one change at a time. The walk
diffs each commit's tree with its first parent's (unchanged 2-hex subtrees are
skipped by id) and parses only the fact blobs that changed, through the one check
for a blob from the ref (`store.ref_facts.fact_from_blob`): an invalid blob counts
as absent. What it keeps per fact is a compact row; per commit, the valid facts by
kind and the needs-review and stale counts; per week, the facts retired by a
supersession, by a person (invalidate, retired instruction) or by upkeep.

The result is cached by tip (`.git/neo/cache/report-memory.json`): an unchanged ref
costs one file read, a ref that moved on walks only the new commits.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, cast

from neo_git.citation_states import is_stale
from neo_git.report import cache

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.facts import Fact

FACTS_REF = "refs/neo/facts"
MEMORY_FORMAT = "memory-1"
RETIRED = ("superseded", "retracted", "upkeep")   # the categories of a retirement
# metadata.invalidation.reason -> category (anything else with a successor is a supersession)
_REASONS = {"superseded": "superseded", "synthesized": "superseded", "invalidated": "retracted",
            "retired": "retracted", "evicted": "upkeep", "pruned": "upkeep"}
SUBJECT_CHARS = 200

# A compact row per fact: kind, valid, needs_review, stale, confidence, success_count.
KIND, VALID, NEEDS_REVIEW, STALE, CONFIDENCE, SUCCESSES = range(6)


@dataclass
class MemoryHistory:
    """What the report draws about memory (plain data, cached as JSON)."""

    tip: str | None
    points: list[dict]              # per ref commit: commit, time, subject, kinds {kind: n},
                                    # needs_review, stale (counts of valid facts)
    retired: dict[str, dict]        # Monday of the week (YYYY-MM-DD) -> {category: n}
    rows: dict[str, list]           # fact id -> compact row (see KIND…SUCCESSES)

    def to_payload(self) -> dict:
        """The cached form."""
        return {"tip": self.tip, "points": self.points, "retired": self.retired, "rows": self.rows}


def week_of(moment: datetime) -> str:
    """The Monday (UTC, ISO date) of the week holding *moment*."""
    day = moment.astimezone(timezone.utc).date()
    return (day - timedelta(days=day.weekday())).isoformat()


def _row(fact: Fact) -> list:
    return [fact.kind.value, int(fact.is_valid), int(fact.needs_review), int(is_stale(fact)),
            round(float(fact.metadata.confidence), 4), int(fact.metadata.success_count)]


def _category(fact: Fact) -> str:
    reason = fact.metadata.invalidation.reason if fact.metadata.invalidation is not None else None
    if reason in _REASONS:
        return _REASONS[reason]
    return "superseded" if fact.superseded_by else "retracted"


def _retired_at(fact: Fact, fallback: datetime) -> datetime:
    """When the fact was retired: its invalidation's own time when it has one (a teammate's
    retirement arrives in a later merge commit), else the commit's."""
    stamp = fact.metadata.invalidation.at if fact.metadata.invalidation is not None else None
    if isinstance(stamp, str):
        try:
            moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    return fallback


class _Tally:
    """Running counts of the valid facts (by kind, needing review, stale), kept up to date row
    by row so a commit's point costs its changes, not the whole store."""

    def __init__(self, rows: dict[str, list]) -> None:
        self.kinds: dict[str, int] = {}
        self.needs_review = self.stale = 0
        for row in rows.values():
            self.count(row, 1)

    def count(self, row: list | None, sign: int) -> None:
        """Add (sign 1) or take away (sign -1) one row's contribution."""
        if row is None or not row[VALID]:
            return
        self.kinds[row[KIND]] = self.kinds.get(row[KIND], 0) + sign
        self.needs_review += sign * row[NEEDS_REVIEW]
        self.stale += sign * row[STALE]

    def point(self, commit: pygit2.Commit) -> dict:
        """The chart point of *commit* with the counts as they stand."""
        from neo_git.report.series import commit_info

        info = commit_info(commit)
        return {"commit": info.commit, "time": info.time, "offset": info.offset, "subject": info.subject,
                "kinds": {k: n for k, n in sorted(self.kinds.items()) if n},
                "needs_review": self.needs_review, "stale": self.stale}


def _fact_changes(repo: pygit2.Repository, commit: pygit2.Commit) -> Iterable[tuple[str, Fact | None]]:
    """(fact id, the fact now or None when removed or invalid) for every fact blob *commit*
    changed against its first parent."""
    from neo_git.errors import InvalidFact
    from neo_git.store.ref_facts import fact_from_blob, fact_id_of

    diff = (commit.parents[0].tree.diff_to_tree(commit.tree) if commit.parents
            else commit.tree.diff_to_tree(swap=True))
    for delta in diff.deltas:
        for side in {delta.old_file.path, delta.new_file.path}:
            parts = side.split("/")
            fact_id = fact_id_of(parts[1], parts[2]) if len(parts) == 3 and parts[0] == "facts" else None
            if fact_id is None:
                continue
            if delta.status_char() == "D" or side != delta.new_file.path:
                yield fact_id, None
                continue
            try:
                yield fact_id, fact_from_blob(cast("pygit2.Blob", repo[delta.new_file.id]).data, side, FACTS_REF)
            except (InvalidFact, KeyError, ValueError):
                yield fact_id, None


def _first_parent_since(repo: pygit2.Repository, tip: pygit2.Oid, stop: str | None) -> list | None:
    """The first-parent chain from *tip* back to (not including) *stop*, oldest first; None
    when *stop* is given but not on the chain (the ref was rewritten: walk everything)."""
    import pygit2

    walker = repo.walk(tip, pygit2.enums.SortMode.NONE)
    walker.simplify_first_parent()
    chain: list[pygit2.Commit] = []
    for commit in walker:
        if stop is not None and str(commit.id) == stop:
            chain.reverse()
            return chain
        chain.append(commit)
    if stop is not None:
        return None
    chain.reverse()
    return chain


def memory_history(repo: pygit2.Repository) -> MemoryHistory:
    """Memory over the ref's whole first-parent history (an empty history before the first fact)."""
    from neo_git.identity import repository_paths
    from neo_git.store.ref_damage import checked_tip

    # A damaged ref is a fatal pointing at `doctor --fix`, never a report of an empty memory.
    tip = checked_tip(repo, repository_paths(repo).common_dir, FACTS_REF)
    if tip is None:
        return MemoryHistory(None, [], {}, {})
    path = cache.cache_file(repository_paths(repo).neo_dir, "memory")
    stored = cache.load(path, MEMORY_FORMAT)
    history = _from_payload(stored) if stored else None
    if history is not None and history.tip == str(tip):
        return history
    chain = _first_parent_since(repo, tip, history.tip) if history is not None else None
    if history is None or chain is None:   # no history kept: chain is None too
        history, chain = MemoryHistory(None, [], {}, {}), _first_parent_since(repo, tip, None)
        assert chain is not None   # without a stop, the whole chain
    tally = _Tally(history.rows)
    for commit in chain:
        when = datetime.fromtimestamp(commit.commit_time, timezone.utc)
        for fact_id, fact in _fact_changes(repo, commit):
            before = history.rows.pop(fact_id, None)
            tally.count(before, -1)
            if fact is None:
                continue
            if not fact.is_valid and (before is None or before[VALID]):
                week = history.retired.setdefault(week_of(_retired_at(fact, when)), {})
                category = _category(fact)
                week[category] = week.get(category, 0) + 1
            row = history.rows[fact_id] = _row(fact)
            tally.count(row, 1)
        history.points.append(tally.point(commit))
    history.tip = str(tip)
    cache.save(path, MEMORY_FORMAT, history.to_payload())
    return history


def _from_payload(payload: dict) -> MemoryHistory | None:
    """A cached history if its shape is right, else None."""
    tip, points, retired, rows = (payload.get(k) for k in ("tip", "points", "retired", "rows"))
    if not (isinstance(tip, str) and isinstance(points, list) and isinstance(retired, dict)
            and isinstance(rows, dict)):
        return None
    if not all(isinstance(r, list) and len(r) == 6 for r in rows.values()):
        return None
    if not all(isinstance(p, dict) and isinstance(p.get("kinds"), dict) for p in points):
        return None
    return MemoryHistory(tip, points, retired, rows)


def tip_facts(repo: pygit2.Repository, ids: Iterable[str]) -> list[Fact]:
    """The facts with these ids as the ref's tip holds them (missing or invalid ones left out)."""
    from neo_git.errors import InvalidFact
    from neo_git.store.ref_facts import fact_from_blob, fact_path

    try:
        tree = repo.references[FACTS_REF].resolve().peel().tree
    except (KeyError, ValueError):
        return []
    found = []
    for fact_id in ids:
        try:
            found.append(fact_from_blob(cast("pygit2.Blob", repo[tree[fact_path(fact_id)].id]).data, fact_path(fact_id), FACTS_REF))
        except (KeyError, ValueError, InvalidFact):
            continue
    return found
