"""Difficulty and effort at the documented boundaries (neo_git/ask/effort.py)."""
from __future__ import annotations

import pytest

from neo_git.ask.effort import (
    FAMILIAR_CONFIDENCE,
    RELEVANT_SCORE,
    decide,
    difficulty,
)
from neo_git.errors import NeoError


def test_keywords_match_on_word_boundaries_only():
    assert difficulty("the endpoint returns 500")[2]["hard"] == []
    assert difficulty("solve it with dp")[2]["hard"] == ["dp"]
    assert difficulty("a dp-table")[2]["hard"] == []          # part of a hyphenated word
    assert difficulty("the prefix is wrong")[2]["medium"] == []
    assert difficulty("fix the race\ncondition")[2]["hard"] == ["race condition"]
    assert difficulty("Fix the typo")[0] == "easy"


def test_difficulty_points_boundaries():
    # 1 hard keyword (2 points) + 1 medium (1) = 3 → medium; one more medium → 4 → hard
    assert difficulty("fix the deadlock")[:2] == ("medium", 3)
    assert difficulty("why does the fix deadlock")[:2] == ("hard", 4)
    # medium words count at most 2
    assert difficulty("why fix the bug error crash")[:2] == ("medium", 2)
    # an easy word lowers the score unless a hard word matched
    assert difficulty("rename it")[0] == "easy" and difficulty("rename the deadlock fix")[:2] == ("medium", 3)


def test_input_size_raises_difficulty_at_1500_and_6000_tokens():
    question = "why is this slow"            # 2 medium words: 2 points
    assert difficulty(question, 1500 * 4 - len(question))[:2] == ("medium", 2)        # exactly 1,500 tokens
    assert difficulty(question, 1500 * 4 - len(question) + 4)[:2] == ("medium", 3)    # 1,501
    assert difficulty(question, 6000 * 4 - len(question) + 4)[:2] == ("hard", 4)      # 6,001
    assert decide(question, [], context_chars=6001 * 4).time_budget == 120


def high(n, score=0.5, conf=0.9):
    return [(score, conf)] * n


def test_effort_from_memory_at_the_boundaries():
    assert decide("explain it", []).effort == "high"
    assert decide("redesign the distributed cache architecture", []).effort == "xhigh"
    # relevance threshold: a fact scoring just below 0.25 does not count
    assert decide("explain it", high(3, score=RELEVANT_SCORE - 1e-9)).effort == "high"
    assert decide("explain it", high(1, score=RELEVANT_SCORE)).effort == "medium"
    # familiar: ≥ 3 relevant facts with mean confidence ≥ 0.8
    assert decide("explain it", high(2)).effort == "medium"
    assert decide("explain it", high(3, conf=FAMILIAR_CONFIDENCE)).effort == "low"
    assert decide("explain it", high(3, conf=FAMILIAR_CONFIDENCE - 0.01)).effort == "medium"
    mixed = [(0.5, 1.0), (0.5, 0.9), (0.5, 0.5), (0.1, 0.1)]      # mean of the relevant ones: 0.8
    assert decide("explain it", mixed).effort == "low" and decide("explain it", mixed).relevant == 3
    # a hard question answered by memory is still low
    assert decide("redesign the distributed cache architecture", high(3)).effort == "low"


def test_effort_is_capped():
    decision = decide("redesign the distributed cache architecture", [], cap="medium")
    assert (decision.effort, decision.memory_effort, decision.cap) == ("medium", "xhigh", "medium")
    assert decide("explain it", high(3), cap="high").effort == "low"   # a cap never raises


def test_effort_follows_accumulating_facts(repo, no_connections):
    """Through the engine (dry run, nothing sent): novel → high; as relevant high-confidence
    facts accumulate → medium → low; a novel hard question → xhigh."""
    from neo_git.ask.engine import NeoEngine
    from neo_git.store import FactStore

    engine = NeoEngine.open(repo, provider="none")
    store = FactStore.open(repo)
    question = "how does the importer retry on 429?"
    efforts = [engine.ask(question, dry_run=True).effort]
    for subject, body, kind in (("Importer retries", "The importer retries 429 with exponential backoff.", "decision"),
                                ("Importer rate limit", "The importer honours Retry-After on 429.", "architecture"),
                                ("Importer retry cap", "The importer stops after 5 retries on 429.", "pattern")):
        store.add(subject, body, kind=kind, confidence=0.9)
        efforts.append(engine.ask(question, dry_run=True).effort)
    assert efforts == ["high", "medium", "medium", "low"]
    novel = engine.ask("design a lock-free concurrent ring buffer for the distributed scheduler", dry_run=True)
    assert (novel.effort, novel.difficulty, novel.decision.relevant) == ("xhigh", "hard", 0)
    assert no_connections == []


def test_max_effort_setting_caps_and_bad_values_are_refused(repo):
    from neo_git.ask.engine import NeoEngine
    from tests.helpers.git import git

    git(repo, "config", "neo.maxEffort", "medium")
    engine = NeoEngine.open(repo, provider="none")
    assert engine.ask("design a lock-free distributed scheduler", dry_run=True).effort == "medium"
    assert engine.ask("design a lock-free distributed scheduler", dry_run=True, effort="low").effort == "low"
    git(repo, "config", "--unset", "neo.maxEffort")
    assert engine.ask("how do we deploy?", dry_run=True).effort == "high"
    git(repo, "config", "neo.relevanceFloor", "-1")     # every ranked fact is relevant (cosines can be < 0)
    from neo_git.store import FactStore

    FactStore.open(repo).add("Colour scheme", "The dashboard uses the brand palette.", confidence=0.9)
    assert engine.ask("how do we deploy?", dry_run=True).decision.relevant == 1
    git(repo, "config", "neo.maxEffort", "extreme")
    with pytest.raises(NeoError, match="unknown effort 'extreme'"):
        engine.ask("anything", dry_run=True)
