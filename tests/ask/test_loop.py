"""The reasoning loop through the real OpenAI client: steps, early exit, repair, verification,
malformed replies and the time budget."""
from __future__ import annotations

import json

import pytest

from neo_git.ask.effort import decide
from neo_git.ask.loop import ReasoningLoop
from neo_git.ask.providers import make_provider
from neo_git.ask.verify import rules_from_constraints
from neo_git.errors import NeoError
from tests.helpers.ask import answer, engine_for, settings_for, suggestion

HARD = "fix the race condition in the distributed scheduler lock"   # memory holds nothing on it


def plan(*steps, files=("src/importer.py",), facts=(), confidence=0.6):
    return json.dumps({"plan": list(steps), "files": list(files), "facts": list(facts), "confidence": confidence})


def critic(verdict, *problems, confidence=0.7):
    return json.dumps({"verdict": verdict, "problems": list(problems), "confidence": confidence})


def test_novel_hard_question_runs_plan_code_critic_and_one_repair(repo, llm, importer_facts):
    facts, constraint = importer_facts
    # memory knows nothing about the scheduler (the importer facts are not relevant to it): the
    # model can cite what it was given, the constraint
    llm.queue(plan("take a lease first", facts=[constraint.id]),
              answer(suggestion(code="import requests\n\ndef lock():\n    return requests.post('x')\n"), confidence=0.9),
              critic("repair", "uses requests"),
              answer(suggestion(code="import httpx\n\ndef lock():\n    return httpx.post('x')\n"), confidence=0.85,
                     plan=()))
    result = engine_for(repo, llm).ask(HARD)
    assert [r.stage for r in llm.requests] == ["plan", "code", "critic", "repair"]
    # one effort for every step (xhigh goes out as high to a model that does not take it)
    assert {r.effort for r in llm.requests} == {"high" if result.effort == "xhigh" else result.effort}
    # the critic saw the verification problem found by the constraint check
    assert f"imports requests, which constraint [fact:{constraint.id}] forbids" in llm.requests[2].messages_text
    assert "take a lease first" in llm.requests[1].messages_text
    assert "uses requests" in llm.requests[3].messages_text
    [final] = result.suggestions
    assert "httpx.post" in final.code and final.problems == () and result.verified
    assert result.plan == ("take a lease first",) and result.cited_facts == (constraint.id,)
    assert "repaired once after the critic's review" in result.notes and len(result.calls) == 4


def test_confident_verified_code_exits_before_the_critic(repo, llm):
    llm.queue(plan("add a lease"), answer(suggestion(code="def lock():\n    return 1\n"), confidence=0.95))
    result = engine_for(repo, llm).ask(HARD)
    assert [r.stage for r in llm.requests] == ["plan", "code"]
    assert result.verified and result.confidence == 0.95 and any("early exit" in n for n in result.notes)


def test_critic_accepting_ends_the_loop_without_repair(repo, llm):
    llm.queue(plan("add a lease"), answer(suggestion(code="def lock(:\n  pass\n"), confidence=0.95),
              critic("accept", confidence=0.6))
    result = engine_for(repo, llm).ask(HARD)
    assert [r.stage for r in llm.requests] == ["plan", "code", "critic"]
    [change] = result.suggestions
    assert not result.verified and change.problems == ("src/importer.py: the code does not parse as python (line 1)",)
    assert result.confidence == 0.6


def test_easy_question_is_one_call(repo, llm):
    llm.queue(answer(suggestion(file="README.md", code="hello, world\n")))
    result = engine_for(repo, llm).ask("fix the typo in the README")
    assert [r.stage for r in llm.requests] == ["answer"] and result.difficulty == "easy"
    assert result.suggestions[0].file == "README.md" and result.verified   # no grammar for .md: not parsed


def test_malformed_reply_is_retried_once_then_reported(repo, llm):
    llm.queue("Sorry, I cannot help with that.", answer(suggestion()))
    result = engine_for(repo, llm).ask("fix the typo in the README")
    assert len(llm.requests) == 2 and "could not be used (no JSON object in the reply)" in llm.requests[1].messages_text
    assert len(result.suggestions) == 1 and len(result.calls) == 2

    llm.queue('{"answer": 42}', "still no json")
    with pytest.raises(NeoError, match="could not be read twice"):
        engine_for(repo, llm).ask("fix the typo in the README")


def test_invalid_parts_of_a_reply_are_dropped_not_trusted(repo, llm, importer_facts):
    facts, _ = importer_facts
    reply = {"plan": "first\nsecond", "confidence": 7,
             "suggestions": [{"file": "a.py", "code": "x = 1\n", "facts": [facts[0].id, "0123456789abcdef"]},
                             {"file": "b.py"}, "junk"],
             "facts": ["[fact:" + facts[1].id + "]", "not-an-id"]}
    llm.queue(json.dumps(reply))
    result = engine_for(repo, llm).ask("why does the importer retry forever on 429?")
    assert result.plan == ("first", "second") and result.confidence == 1.0
    [change] = result.suggestions
    assert change.fact_ids == (facts[0].id,)
    assert set(result.cited_facts) == {facts[0].id, facts[1].id}
    assert sum("unknown fact id" in n for n in result.notes) == 2


def test_time_budget_stops_cleanly_with_what_is_ready(repo, llm):
    from neo_git.recall import ContextResult

    now = [0.0]

    def responder(seen):
        now[0] += 40.0                # each call "takes" 40 s of a 60 s budget
        return plan("step one") if seen.stage == "plan" else answer(suggestion(), confidence=0.5)

    llm.responder = responder
    decision = decide("why does the importer fail with a timeout?", [])
    assert decision.time_budget == 60
    provider = make_provider(settings_for(llm, "openai", timeout=50))
    loop = ReasoningLoop(provider, "# Question\nwhy", set(), rules_from_constraints(ContextResult("q").constraints),
                         decision, clock=lambda: now[0])
    outcome = loop.run()
    assert [r.stage for r in llm.requests] == ["plan", "code"]
    assert llm.requests[1].headers["x-stainless-read-timeout"] == "20.0"   # what was left of the budget
    assert outcome.stopped == "time budget of 60 s reached before the critic step"
    assert outcome.plan == ("step one",)
    assert len(outcome.suggestions) == 1


def test_a_later_step_that_times_out_keeps_what_is_ready(repo, llm):
    llm.queue(plan("take a lease"), {"sleep": 1.0})
    result = engine_for(repo, llm, timeout=0.3, retries=0).ask(HARD)
    assert result.plan == ("take a lease",) and result.suggestions == ()
    assert result.stopped.startswith("code step failed (openai (gpt-5-mini) did not answer within")
    assert [c.stage for c in result.calls] == ["plan"]
