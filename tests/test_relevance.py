"""Relevance (issues 17 and 33): recall hands out a fact only when memory knows the question
(`neo_git.relevance`); outcome records are evidence, not knowledge; scores shown are never negative."""
from __future__ import annotations

import json

import numpy as np
import pytest

from neo_git.cli import main
from neo_git.recall import assemble
from tests.helpers.git import git
from tests.helpers.store import open_store

DECISIONS = [
    ("HTTP client", "All outbound HTTP goes through httpx with a 10 s timeout."),
    ("Deprecation policy", "Deprecated APIs are kept for two minor releases, then removed."),
    ("Database", "We use PostgreSQL 15 with pgbouncer in transaction mode."),
    ("Logging", "Structured JSON logs through structlog."),
    ("Feature flags", "Flags live in LaunchDarkly; remove them within a month."),
]


@pytest.fixture
def project(repo_with_commit, monkeypatch):
    monkeypatch.chdir(repo_with_commit)
    store = open_store(repo_with_commit)
    for subject, body in DECISIONS:
        store.add(subject, body, kind="decision")
    store.add("No network in hooks", "Hooks never touch the network.", kind="constraint")
    return repo_with_commit


def recall_json(capsys, query: str) -> dict:
    capsys.readouterr()
    assert main(["recall", query, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_an_off_topic_question_gets_the_constraints_and_nothing_else(project, capsys):
    """The reproduction: `git neo recall zebra` listed five "relevant" facts at score 0.05."""
    capsys.readouterr()
    assert main(["recall", "zebra"]) == 0
    out = capsys.readouterr().out
    assert "Relevant facts" not in out and "No network in hooks" in out
    data = recall_json(capsys, "what deal value were we targeting for Wayne Corp?")
    assert data["valid_facts"] == [] and [f["subject"] for f in data["constraints"]] == ["No network in hooks"]
    from neo_git.embed import get_embedder, noise

    # `floor`: the cosine the best of the 5 ranked facts had to reach (chance's best of 5)
    assert data["floor"] == pytest.approx(noise(get_embedder("hash")).known_threshold(5))


def test_a_question_memory_knows_gets_its_fact(project, capsys):
    data = recall_json(capsys, "what is the deprecation policy?")
    assert [f["subject"] for f in data["valid_facts"]][0] == "Deprecation policy"
    assert data["relevance"][data["valid_facts"][0]["id"]] >= data["floor"]


def test_scores_shown_are_never_negative(project, capsys):
    """A constraint's cosine can be negative under the signed hashing embedder; what people see is not."""
    from neo_git.embed import get_embedder

    embedder = get_embedder("hash")
    constraint = embedder.embed(["No network in hooks\nHooks never touch the network."])[0]
    words = ["zebra", "banana", "quartz", "violin", "nebula", "walrus", "tundra", "saffron", "glacier", "orbit"]
    negative = next(w for w in (f"{a} {b}" for a in words for b in words) if float(embedder.embed([w])[0] @ constraint) < 0)
    data = recall_json(capsys, negative)
    assert data["constraints"] and all(score >= 0 for score in data["scores"].values())
    capsys.readouterr()
    assert main(["recall", negative]) == 0
    assert "[-" not in capsys.readouterr().out


def test_the_floor_is_the_embedders_and_can_be_set(project, capsys):
    from neo_git.embed import DEFAULT_RELEVANCE_FLOOR, fastembed_model as fm, get_embedder, relevance_floor

    assert relevance_floor(get_embedder("hash")) == 0.28
    assert set(fm.KNOWN_DIMS) <= set(fm.RELEVANCE_FLOORS)   # every model we name has its own floor

    class Plain:                                            # a caller's embedder that says nothing
        id, dim, supersede_threshold = "plain", 4, 0.9

    assert relevance_floor(Plain()) == DEFAULT_RELEVANCE_FLOOR
    git(project, "config", "neo.relevanceFloor", "-1")      # everything counts as relevant
    assert len(recall_json(capsys, "zebra")["valid_facts"]) == 5
    git(project, "config", "neo.relevanceFloor", "0.99")
    assert recall_json(capsys, "what is the deprecation policy?")["valid_facts"] == []


def test_model_status_names_both_floors(project, capsys):
    capsys.readouterr()
    assert main(["model", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["hash"]["relevance_floor"] == 0.28
    assert status["fastembed"]["relevance_floor_calibrated"] is False


def test_outcome_records_are_evidence_not_facts(project, capsys):
    """"Outcome: accepted — guard clause in make_str" ranked first for code questions."""
    store = open_store(project)
    store.add("Outcome: accepted — guard clause in make_str (src/strings.py)",
              "Suggestion 1 on src/strings.py was accepted in commit abc. guard clause make_str strings",
              kind="review", tags=["outcome", "accepted"])
    data = recall_json(capsys, "add a guard clause to make_str in src/strings.py")
    assert all(f["kind"] != "review" for f in data["valid_facts"])


def test_the_floor_cuts_ranked_facts_unknowns_and_retired_facts_alike():
    from neo_git.facts import Fact

    def fact(i, kind="decision", **kw):
        return Fact.from_dict({"id": f"{i:016x}", "subject": f"s{i}", "body": "", "kind": kind, "scope": "project",
                               "metadata": {"confidence": 0.9}, **kw})

    facts = [fact(1), fact(2), fact(3, "known_unknown"), fact(4, is_valid=False), fact(5, "constraint")]
    cosines = np.array([0.5, 0.2, 0.2, 0.27, -0.4])
    result = assemble("q", facts, cosines, floor=0.28)
    assert [f.id for f in result.valid_facts] == [facts[0].id]
    assert result.known_unknowns == [] and result.invalidated == []
    assert result.constraints == [facts[4]] and result.scores[facts[4].id] == 0.0
    unfloored = assemble("q", facts, cosines)           # a library caller without a floor: as before
    assert len(unfloored.valid_facts) == 2 and unfloored.known_unknowns


def test_asks_effort_gate_knows_what_recall_knows(project):
    """The reproduction: "what is the deprecation policy?" got effort high "(no relevant fact in
    memory)" although "Deprecation policy" ranked first (score 0.24 under a fixed 0.25)."""
    from neo_git.ask.engine import NeoEngine

    engine = NeoEngine.open(project, provider="none")
    known = engine.ask("what is the deprecation policy?", dry_run=True)
    assert known.decision.relevant == 1 and "no relevant fact" not in known.decision.reason
    assert "Deprecation policy" in known.messages["user"]
    novel = engine.ask("what deal value were we targeting for Wayne Corp?", dry_run=True)
    assert novel.decision.relevant == 0 and "no relevant facts" in novel.messages["user"]
