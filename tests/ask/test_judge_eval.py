"""`benchmarks/judge_eval.py` counts what the judge decided on replayed decision records: driven
through the real OpenAI SDK against the loopback server, with a responder that knows the edges."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.helpers.ask import LONG, answering, settings_for

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import judge_eval


def _records():
    """One repository: 002 replaces 001 without saying so; 003 is about something else."""
    return [{"repo": "example/adr", "edges": [["001", "002"]], "adrs": [
        {"id": "001", "seq": 1, "title": "ADR001: Use RabbitMQ for messaging", "text": LONG + " We use RabbitMQ.",
         "date": "2024-01-01"},
        {"id": "002", "seq": 2, "title": "ADR002: Event pipeline design", "text": LONG + " Events go through Kafka.",
         "date": "2024-02-01"},
        {"id": "003", "seq": 3, "title": "ADR003: Service handler layout",
         "text": LONG + " Handlers live next to their service.", "date": "2024-03-01"}]}]


def test_the_judges_verdicts_are_counted_against_the_authors_edges(llm):
    from neo_git.ask.providers import make_provider
    from neo_git.embed import get_embedder
    from neo_git.store.supersession import Thresholds

    def decide(older: str, newer: str) -> dict:
        updated = (older, newer) == ("Use RabbitMQ for messaging", "Event pipeline design")
        wrong = (older, newer) == ("Use RabbitMQ for messaging", "Service handler layout")   # a judge's mistake
        return {"verdict": "updated" if updated or wrong else "distinct", "reason": "as the test says"}

    llm.responder = answering(lambda newer, older: decide(older, newer))
    embedder = get_embedder("hash")
    provider = make_provider(settings_for(llm, "openai"))
    total = judge_eval.judge_replay(_records(), judge_eval.VectorMemo(embedder), Thresholds.of(embedder), provider)
    asked = {(r.body["input"] if isinstance(r.body.get("input"), str) else "") for r in llm.requests}
    assert total["asked"] == 3   # 002-001, 003-001, 003-002: each once
    assert total["calls"] == len(llm.requests) == len(asked) == 2   # 003's two candidates in one call
    assert total["edges"] == 1 and total["accepted"] == {("example/adr", "001", "002")}
    assert total["wider_items"] == 2 and total["auto_wrong"] == 1
    assert total["verdicts"]["updated", True] == 1 and total["verdicts"]["updated", False] == 1
    assert total["verdicts"]["distinct", False] == 1
    capped = judge_eval.judge_replay(_records(), judge_eval.VectorMemo(embedder), Thresholds.of(embedder), provider,
                                     max_questions=1)
    assert capped["asked"] == 1


def test_without_records_or_a_model_it_says_so(tmp_path, capsys):
    assert judge_eval.main(["--data", str(tmp_path / "missing.jsonl")]) == 1
    assert "no decision records at" in capsys.readouterr().err
    data = tmp_path / "adr.jsonl"
    data.write_text(json.dumps(_records()[0]) + "\n", encoding="utf-8")
    assert judge_eval.main(["--provider", "openai", "--data", str(data)]) == 1   # no key, no base URL
    assert "judge_eval: no OpenAI API key is configured" in capsys.readouterr().err
