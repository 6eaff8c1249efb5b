"""Ranking keeps its promises (issue 33, item 4): a fact a person kept apart from its would-be
replacement, a restored fact, a claim and a stale fact never lose their place to what they
compete with; outcome records never reach an agent as knowledge."""
from __future__ import annotations

import json

import numpy as np

from neo_git.facts import Fact
from neo_git.recall import assemble
from neo_git.store import FactStore
from tests.helpers.agents import payload, run_hook
from tests.helpers.git import commit_files

RETRY = ("Retry policy", "Outbound HTTP calls retry three times with exponential backoff.")
UPDATE = ("Retries", "Outbound HTTP calls now retry five times with exponential backoff.")   # "now": an update?
QUESTION = "do outbound HTTP calls retry three times?"


def _pair(store):
    older = store.add(*RETRY, kind="decision")
    newer = store.add(*UPDATE, kind="decision")
    assert [link["id"] for link in newer.metadata.possibly_supersedes] == [older.id]   # an open question
    result = store.recall(QUESTION)                      # while it is open, the newer one answers and
    assert result.valid_facts[0].id == newer.id and result.questioned_by == {older.id: newer.id}   # the older waits
    return older, newer


def test_after_review_reject_the_better_answer_keeps_its_place():
    """The reproduction: the newer fact (score 0.18) ranked above the one the question is about
    (0.33) even after `git neo review reject` on the pair."""
    store = FactStore.in_memory()
    older, newer = _pair(store)
    store.reject(newer.id, older.id)
    result = store.recall(QUESTION)
    ids = [f.id for f in result.valid_facts]
    assert ids[0] == older.id and result.scores[older.id] > result.scores.get(newer.id, 0.0)
    assert result.questioned == []


def test_after_restore_the_fact_that_wrongly_replaced_it_does_not_rank_above_it():
    """The reproduction: after `git neo restore`, the fact that wrongly replaced the restored one
    still ranked above it."""
    store = FactStore.in_memory()
    older, newer = _pair(store)
    store.accept(newer.id, older.id)                     # the review item accepted…
    assert not store.get(older.id).is_valid
    store.restore(older.id)                              # …and undone: the pair is back in the queue
    link = store.get(newer.id).metadata.possibly_supersedes[0]
    assert link["id"] == older.id and link.get("restored") is True
    result = store.recall(QUESTION)
    assert [f.id for f in result.valid_facts][0] == older.id
    assert older.id not in result.questioned_by          # a person restored it: not "possibly replaced"


def test_after_restoring_an_explicit_supersession_the_restored_fact_answers():
    store = FactStore.in_memory()
    older = store.add(*RETRY, kind="decision")
    store.add(*UPDATE, kind="decision", supersedes=older.id)
    store.restore(older.id)
    assert [f.id for f in store.recall(QUESTION).valid_facts][0] == older.id


def _fact(i: int, subject: str, body: str, created: str, **meta) -> Fact:
    return Fact.from_dict({"id": f"{i:016x}", "subject": subject, "body": body, "kind": "decision",
                           "scope": "project", "metadata": {"confidence": 0.5, "created_at": created, **meta}})


def _vectors(facts):
    from neo_git.embed import get_embedder

    return np.asarray(get_embedder("hash").embed([f.text for f in facts]), dtype=np.float32)


def test_a_claim_never_takes_the_place_of_the_trusted_fact_it_competes_with():
    """The reproduction: after a sync conflict a teammate's unverified claim (0.26) ranked above the
    user's own trusted fact (0.37): the newest of a family took the best place."""
    mine = _fact(1, "Retry policy", "Outbound HTTP calls retry three times with exponential backoff.",
                 "2026-01-01T00:00:00+00:00")
    claim = _fact(2, "Retry policy", "Outbound HTTP calls retry five times with exponential backoff.",
                  "2026-02-01T00:00:00+00:00")
    facts = [mine, claim]
    vectors = _vectors(facts)
    result = assemble(QUESTION, facts, np.array([0.37, 0.52]), untrusted=frozenset({claim.id}), vectors=vectors,
                      family_threshold=0.3)
    assert [f.id for f in result.valid_facts] == [mine.id, claim.id]
    assert result.untrusted == (claim.id,)


def test_a_stale_fact_never_takes_the_place_of_the_current_one():
    current = _fact(1, "Importer timeout", "fetch uses a 30 s timeout because the vendor is slow.",
                    "2026-01-01T00:00:00+00:00")
    stale = _fact(2, "Importer timeout", "fetch uses a 30 s timeout, the vendor is slow.",
                  "2026-02-01T00:00:00+00:00",
                  citations=[{"path": "src/importer.py", "symbol": "fetch", "state": "changed"}])
    facts = [current, stale]
    result = assemble("what timeout does fetch use?", facts, np.array([0.40, 0.45]), vectors=_vectors(facts),
                      family_threshold=0.3)
    assert [f.id for f in result.valid_facts] == [current.id, stale.id]
    assert stale.id in result.stale


def test_the_pre_tool_use_hook_never_hands_out_outcome_records(repo_with_commit):
    """The reproduction: PreToolUse injected "Outcome: accepted — retry the fetch" (kind review) as a
    fact about fetch.py; `git neo recall --file` did not."""
    repo = repo_with_commit
    commit_files(repo, {"src/importer.py": "def fetch(url):\n    return url\n"})
    store = FactStore.open(repo)
    outcome = store.add("Outcome: accepted — retry the fetch", "Suggestion 1 on src/importer.py was accepted.",
                        kind="review", tags=["outcome", "accepted"], cites=["src/importer.py:fetch"])
    decision = store.add("Importer timeout", "fetch uses a 30 s timeout.", kind="decision",
                         cites=["src/importer.py:fetch"])
    data = payload("claude_pre_tool_use_edit", repo)
    data["tool_input"]["file_path"] = str(repo / "src" / "importer.py")
    code, out, _ = run_hook("pre-tool-use", "claude", data)
    assert code == 0
    text = json.dumps(out)
    assert f"[fact:{decision.id}]" in text and outcome.id not in text
