"""A stale fact is never served as plain current knowledge: recall ranks it after current facts and
marks it in its JSON; the ask prompt and the agents' context say "cited code changed since";
sync merges two clones' citation states citation by citation."""
from __future__ import annotations

from dataclasses import replace

from neo_git.facts import Fact
from neo_git.store import Change, FactStore

CITATION = {"cited": "src/a.py:load", "path": "src/a.py", "symbol": "load", "blob": "a" * 40,
            "fingerprint": "b" * 16, "commit": "c" * 40}


def _fact(fact_id: str, subject: str, body: str, state: str, kind: str = "pattern") -> Fact:
    citation = {**CITATION, "state": state, "since": "d" * 40, "since_date": "2026-11-30T10:00:00+00:00"}
    return Fact.from_dict({"id": fact_id, "subject": subject, "body": body, "kind": kind, "scope": "project",
                           "metadata": {"citations": [citation], "confidence": 0.9}})


def _store() -> FactStore:
    store = FactStore.in_memory()
    facts = (_fact("1" * 16, "Loader retries", "load retries three times with backoff", "changed"),
             _fact("2" * 16, "Loader retry limit", "load retries three times with backoff, then raises", "verified"),
             _fact("3" * 16, "Loader constraint", "load never touches the network", "gone", kind="constraint"))
    store.transact("project", lambda _: Change(facts=facts, message="seed"))
    return store


def test_recall_ranks_stale_after_current_and_marks_it():
    result = _store().recall("load retries three times with backoff", k=5)
    assert [f.id for f in result.valid_facts] == ["2" * 16, "1" * 16]
    assert result.scores["1" * 16] > 0 and result.to_dict()["stale"] == {
        "1" * 16: "cited code changed since 2026-11-30", "3" * 16: "cited code changed since 2026-11-30"}


def test_the_ask_prompt_and_agent_context_say_the_cited_code_changed():
    from neo_git.agents.context import fact_line
    from neo_git.ask.prompt import AskContext, render_context

    store = _store()
    result = store.recall("load retries three times with backoff", k=5)
    text = render_context(AskContext("how does load retry?", result))
    stale_line = next(line for line in text.splitlines() if "1" * 16 in line)
    assert "STALE: cited code changed since 2026-11-30" in stale_line
    fresh_line = next(line for line in text.splitlines() if "2" * 16 in line)
    assert "STALE" not in fresh_line
    assert "STALE (cited code changed since 2026-11-30)" in fact_line(store.get("1" * 16))


def test_sync_merges_citations_one_by_one():
    from neo_git.sync.fieldmerge import merge_fact

    base = Fact.from_dict({"id": "4" * 16, "subject": "s", "kind": "pattern", "scope": "project", "metadata": {
        "citations": [{**CITATION, "state": "verified"}, {**CITATION, "cited": "src/b.py", "path": "src/b.py",
                                                          "symbol": None, "state": "verified"}]}})
    ours = base.evolve(metadata={"citations": (replace(base.metadata.citations[0], state="changed"),
                                               base.metadata.citations[1])})
    theirs = base.evolve(metadata={"citations": (base.metadata.citations[0],
                                                 replace(base.metadata.citations[1], state="gone"))})
    merged = merge_fact(base, ours, theirs)
    assert [c.state for c in merged.metadata.citations] == ["changed", "gone"]
    assert merge_fact(base, theirs, ours) == merged


def test_mcp_compact_recall_marks_stale_facts():
    from neo_git.agents.compact import compact_recall

    text = compact_recall(_store().recall("load retries three times with backoff", k=5))
    row = next(line for line in text.splitlines() if "1" * 16 in line)
    assert "STALE: cited code changed since 2026-11-30" in row
