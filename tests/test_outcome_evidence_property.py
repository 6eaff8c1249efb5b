"""Issue 32, items 2 and 3, as properties over the pure planners: however often facts are looked
up, upkeep never demotes one for it and never prunes or evicts one consulted in the window; an
outcome moves only the facts its advice relied on (named, or about the file it changed)."""
from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings, strategies as st

from neo_git.fact_schema import Citation
from neo_git.facts import Fact, FactKind, FactMetadata, FactScope
from neo_git.outcomes.confidence import Outcome, confidence_change, plan_fact_updates
from neo_git.outcomes.processing import resolve_reliance
from neo_git.upkeep.rules import CONSULTED_WINDOW, stamp, utc_now
from neo_git.upkeep.steps import plan_cap, plan_demotions, plan_prune

NOW = utc_now()
FILES = ("src/a.py", "src/b.py", "docs/c.md")

fact_rows = st.lists(st.fixed_dictionaries({
    "confidence": st.sampled_from([0.05, 0.1, 0.2, 0.35, 0.4, 0.5, 0.9]),
    "success": st.integers(0, 2),
    "age_days": st.integers(0, 90),
    "accessed_days_ago": st.one_of(st.none(), st.integers(0, 60)),
    "accesses": st.integers(0, 200),
    "citation": st.one_of(st.none(), st.tuples(st.sampled_from(FILES), st.sampled_from(["verified", "changed", "moved"]))),
    "paths": st.lists(st.sampled_from(["src/**", "src/a.py", "docs/**"]), max_size=2, unique=True),
    "kind": st.sampled_from(["pattern", "decision", "review", "known_unknown"]),
}), min_size=1, max_size=12)


def _facts(rows) -> dict[str, Fact]:
    out = {}
    for n, row in enumerate(rows):
        fact_id = f"{n:016x}"
        citations = (Citation(row["citation"][0], row["citation"][1], symbol="f"),) if row["citation"] else ()
        out[fact_id] = Fact(
            id=fact_id, subject=f"fact {n}", body=f"body {n}", kind=FactKind(row["kind"]), scope=FactScope.PROJECT,
            metadata=FactMetadata(created_at=stamp(NOW - timedelta(days=row["age_days"])),
                                  confidence=row["confidence"], success_count=row["success"],
                                  access_count=row["accesses"], citations=citations, paths=tuple(row["paths"])))
    return out


def _last_access(rows) -> dict[str, str | None]:
    return {f"{n:016x}": stamp(NOW - timedelta(days=row["accessed_days_ago"]))
            for n, row in enumerate(rows) if row["accessed_days_ago"] is not None}


@settings(max_examples=150, deadline=None)
@given(rows=fact_rows, cap=st.integers(0, 12))
def test_upkeep_never_acts_on_popularity(rows, cap):
    facts, last = _facts(rows), _last_access(rows)
    assert plan_demotions(facts, FactScope.PROJECT).actions == []   # no citation is gone: nothing against any
    consulted = {f"{n:016x}" for n, row in enumerate(rows)
                 if row["accessed_days_ago"] is not None and timedelta(days=row["accessed_days_ago"]) <= CONSULTED_WINDOW}
    for plan in (plan_prune(facts, FactScope.PROJECT, NOW, last),
                 plan_cap(facts, FactScope.PROJECT, cap, NOW, last)):
        for action in plan.actions:
            assert action.fact_id not in consulted
            assert action.evidence   # every move states its evidence


outcome_rows = st.lists(st.fixed_dictionaries({
    "verdict": st.sampled_from(["accepted", "modified", "abandoned"]),
    "health": st.sampled_from([None, "neutral", "improvement", "regression"]),
    "file": st.sampled_from(FILES),
    "named": st.lists(st.integers(0, 11), max_size=3, unique=True),
    "context": st.lists(st.integers(0, 11), max_size=6, unique=True),
}), min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(rows=fact_rows, outcomes=outcome_rows)
def test_outcomes_move_only_what_the_advice_relied_on(rows, outcomes):
    facts = _facts(rows)
    ids = sorted(facts)
    planned = [Outcome(commit="c" * 40, suggestion_id=f"{n:016x}", file=o["file"], verdict=o["verdict"],
                       health=o["health"], fact_ids=tuple(ids[i] for i in o["named"] if i < len(ids)),
                       context_ids=tuple(ids[i] for i in o["context"] if i < len(ids) and i not in o["named"]))
               for n, o in enumerate(outcomes)]
    resolved = resolve_reliance(planned, facts)
    _, moved = plan_fact_updates(facts, resolved)
    allowed = set()
    for o in planned:
        allowed.update(o.fact_ids)
        for i in o.context_ids:
            meta = facts[i].metadata
            cited = any(c.path == o.file for c in meta.citations)
            scoped = any(p == o.file or (p.endswith("/**") and o.file.startswith(p[:-2])) for p in meta.paths)
            if cited or scoped:
                allowed.add(i)
    assert {m.id for m in moved} <= allowed
    for m in moved:
        assert 0.0 <= m.confidence[1] <= 1.0 and m.success_count[1] >= 0


@given(health=st.sampled_from([None, "neutral", "improvement", "regression"]))
def test_modified_moves_less_than_accepted_or_abandoned(health):
    modified = abs(confidence_change("modified", health)[0])
    assert 0 < modified < abs(confidence_change("accepted", health)[0])
    assert modified < abs(confidence_change("abandoned", None)[0])
