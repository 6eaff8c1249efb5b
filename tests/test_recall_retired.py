"""Recall's "what changed" layer considers the retired facts a current fact replaced and the
`RECENT_RETIRED` retired last; older history is for `--all`, `history` and `why`, and a cold
recall reads nothing of it, not even its vector (issue 35: retired facts cost reads nothing until
asked for)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from neo_git import recall
from neo_git.fact_schema import Invalidation
from neo_git.facts import FactScope
from neo_git.store.base import Change
from tests.helpers.store import HTTP_NEW, HTTP_OLD, open_store

OLD_TOPICS = ["Kafka retention", "Redis eviction", "Celery beat", "Nginx buffering"]


def _recall(repo, query: str):
    """A cold recall with an absolute relevance floor (every fact above it bears on the question)."""
    store = open_store(repo)
    store.relevance_override = 0.2
    return store.recall(query)


def _retired_history(repo) -> dict[str, str]:
    """A superseded HTTP client decision, and four facts retired by hand in 2024 and 2025, one a
    year: {topic: id}."""
    store = open_store(repo)
    old = store.add("HTTP client", HTTP_OLD, kind="decision")
    new = store.add("HTTP client", HTTP_NEW, kind="decision")
    assert store.get(old.id).superseded_by == new.id
    ids = {"old http": old.id, "new http": new.id}
    facts = []
    for year, topic in zip((2022, 2023, 2024, 2025), OLD_TOPICS):
        fact = store.add(topic, f"{topic} settings for the payments cluster are tuned by hand.", kind="decision")
        ids[topic] = fact.id
        facts.append(fact.evolve(is_valid=False, metadata={"invalidation": Invalidation(
            reason="invalidated", at=f"{year}-03-01T00:00:00+00:00", detail="dropped")}))
    store.backends[FactScope.PROJECT].transact(lambda _: Change(tuple(facts), "retire four facts"))
    return ids


def test_what_changed_looks_at_replaced_facts_and_the_latest_retired(repo_with_commit, monkeypatch):
    monkeypatch.setattr(recall, "RECENT_RETIRED", 3)
    ids = _retired_history(repo_with_commit)
    table = open_store(repo_with_commit)._table()
    considered = {table.id(i) for i in recall.considered_retired(table.rows).tolist()}
    # The superseded decision (its successor is valid; retired last, too) and those of 2025 and 2024.
    assert considered == {ids["old http"], ids["Celery beat"], ids["Nginx buffering"]}
    shown = _recall(repo_with_commit, "Nginx buffering settings for the payments cluster")
    assert ids["Nginx buffering"] in [f.id for f in shown.invalidated]
    history = _recall(repo_with_commit, "Kafka retention settings for the payments cluster")
    assert ids["Kafka retention"] not in [f.id for f in history.invalidated]   # 2022: history only
    replaced = _recall(repo_with_commit, "which HTTP client and timeout for outbound calls?")
    assert [f.id for f in replaced.invalidated][:1] == [ids["old http"]]
    monkeypatch.setattr(recall, "RECENT_RETIRED", 1000)
    everything = _recall(repo_with_commit, "Kafka retention settings for the payments cluster")
    assert ids["Kafka retention"] in [f.id for f in everything.invalidated]   # a short history: all of it


def test_a_first_recall_embeds_no_retired_fact_it_does_not_consider(repo_with_commit, monkeypatch):
    monkeypatch.setattr(recall, "RECENT_RETIRED", 3)
    ids = _retired_history(repo_with_commit)
    shutil.rmtree(Path(os.environ["NEO_HOME"]) / "cache" / "vectors", ignore_errors=True)
    embedded: list[str] = []
    store = open_store(repo_with_commit)
    store.relevance_override = 0.2
    inner = store.embedder.embed
    monkeypatch.setattr(store.embedder, "embed", lambda texts: embedded.extend(texts) or inner(texts))
    cold = store.recall("Nginx buffering settings for the payments cluster")
    assert [f.id for f in cold.invalidated][:1] == [ids["Nginx buffering"]]
    assert not any(text.startswith(("Kafka retention", "Redis eviction")) for text in embedded)
    assert any(text.startswith("Nginx buffering") for text in embedded)
    warm = store.recall("Nginx buffering settings for the payments cluster")   # resident rows now
    assert warm.invalidated == cold.invalidated and warm.scores == cold.scores
    assert not any(text.startswith(("Kafka retention", "Redis eviction")) for text in embedded)
