"""Learning hooks and accounting: cited facts marked used, consecutive questions judged,
tokens logged and summed by `git neo stats`."""
from __future__ import annotations

import json

from neo_git.cli import main
from tests.helpers.ask import answer, engine_for, suggestion
from tests.helpers.git import git

QUESTION = "why does the importer retry forever on 429?"


def confidence(repo, fact_id):
    from neo_git.store import FactStore

    return FactStore.open(repo).get(fact_id).metadata.confidence


def test_cited_facts_are_marked_used(repo, llm, importer_facts):
    from neo_git.store import FactStore

    facts, _ = importer_facts
    llm.queue(answer(suggestion(facts=[facts[0].id]), facts=[facts[0].id]))
    engine_for(repo, llm).ask(QUESTION)
    store = FactStore.open(repo)
    # recall counts every returned fact once; the cited one is counted once more
    assert store.get(facts[0].id).metadata.access_count == 2
    assert store.get(facts[1].id).metadata.access_count == 1


def test_asking_again_lowers_and_a_related_question_raises_the_cited_facts(repo, llm, importer_facts):
    facts, _ = importer_facts
    cited = [facts[0].id, facts[1].id]
    llm.responder = lambda seen: answer(suggestion(facts=cited), facts=cited)
    engine = engine_for(repo, llm)
    engine.ask(QUESTION)
    assert confidence(repo, facts[0].id) == 0.9
    second = engine.ask(QUESTION.replace("forever ", "forever  "))           # the same question again
    assert confidence(repo, facts[0].id) == 0.85 and confidence(repo, facts[1].id) == 0.8
    assert confidence(repo, facts[2].id) == 0.9                                # not cited: untouched
    assert any("previous question repeat: lowered the confidence of 2 fact(s)" in n for n in second.notes)
    log = git(repo, "log", "-1", "--format=%B", "refs/neo/facts")
    assert "ask: confidence -0.05 for 2 fact(s): asked again right after their answer" in log
    engine.ask("how does the importer back off when the upstream rate limits it?")   # related follow-up
    assert confidence(repo, facts[0].id) == 0.87 and confidence(repo, facts[1].id) == 0.82
    engine.ask("what is the colour scheme of the admin dashboard?")                  # unrelated
    assert confidence(repo, facts[0].id) == 0.87


def test_an_old_previous_question_is_not_judged(repo, llm, importer_facts):
    from neo_git.store import FactStore

    facts, _ = importer_facts
    llm.responder = lambda seen: answer(suggestion(facts=[facts[0].id]), facts=[facts[0].id])
    engine = engine_for(repo, llm)
    engine.ask(QUESTION)
    state = FactStore.open(repo).paths.neo_dir / "ask_state.json"
    data = json.loads(state.read_text())
    data["last"]["at"] = "2020-01-01T00:00:00Z"
    state.write_text(json.dumps(data))
    engine.ask(QUESTION)
    assert confidence(repo, facts[0].id) == 0.9


def test_no_record_leaves_no_trace(repo, llm, importer_facts):
    from neo_git.outcomes.suggestions import load_suggestions
    from neo_git.store import FactStore

    llm.queue(answer(suggestion()))
    result = engine_for(repo, llm).ask(QUESTION, record=False)
    paths = FactStore.open(repo).paths
    assert result.suggestions and not result.recorded
    assert load_suggestions(paths) == [] and not (paths.neo_dir / "ask_usage.jsonl").exists()


def test_usage_is_logged_and_summed_by_stats(repo, llm, importer_facts, capsys):
    llm.responder = lambda seen: answer(suggestion())
    engine = engine_for(repo, llm)
    low = engine.ask(QUESTION)                                            # familiar: one low call
    high = engine.ask("design a lock-free ring buffer for the scheduler")  # novel: plan, code (early exit)
    assert low.effort == "low" and high.effort in ("high", "xhigh")
    assert main(["stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["questions"] == 2 and stats["calls"] == len(low.calls) + len(high.calls)
    assert stats["tokens_in"] == low.tokens_in + high.tokens_in
    assert stats["tokens_out"] == low.tokens_out + high.tokens_out
    assert stats["by_effort"]["low"] == {"calls": 1, "questions": 1, "tokens_in": low.tokens_in,
                                         "tokens_out": low.tokens_out}
    # the low call reported 400 reasoning tokens; at high effort they would have been 10x
    assert stats["estimated_saving_tokens"] == 400 * 9
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert "2 questions" in out and "estimated saving from lower-effort answers: 3,600 tokens" in out
    (engine.store.paths.neo_dir / "ask_usage.jsonl").open("a").write("{torn line\n")
    assert main(["stats", "--json"]) == 0 and json.loads(capsys.readouterr().out)["calls"] == stats["calls"]
