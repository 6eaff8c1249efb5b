"""Token accounting: one JSON line per model call in `.git/neo/ask_usage.jsonl` (local,
never pushed), summed by `git neo stats`.

Estimated saving: what each low or medium call would have cost at high effort, assuming
reasoning tokens grow with effort in the proportions REASONING_SCALE
(low 1 : medium 4 : high 10 : xhigh 20 — Anthropic's thinking budgets here are 0 / 4k /
16k / 32k, OpenAI reports roughly this spread of reasoning tokens; the bench's loopback
server bills exactly this). The reasoning tokens a call reported are scaled up; when a
provider does not report them separately (Anthropic), its output tokens are.
"""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from neo_git import safejson
from neo_git.ask.model import EFFORTS, AskResult, CallRecord
from neo_git.facts import now_iso
from neo_git.fileio import locked

LOG_NAME = "ask_usage.jsonl"
# The review judge's calls (`git neo review --judge`) are logged too, under this stage: summed
# apart, since their effort is fixed (low), not chosen from memory, so they save nothing.
JUDGE_STAGE = "judge"
REASONING_SCALE = {"low": 1, "medium": 4, "high": 10, "xhigh": 20}


def usage_path(neo_dir: Path) -> Path:
    """The usage log of a repository."""
    return Path(neo_dir) / LOG_NAME


def log_result(neo_dir: Path, question_id: str, result: AskResult) -> None:
    """Append one line per call of *result*."""
    log_calls(neo_dir, question_id, result.provider, result.model, result.calls,
              difficulty=result.difficulty, familiar=result.decision.familiar)


def log_calls(neo_dir: Path, question_id: str, provider: str, model: str, calls: Sequence[CallRecord], *,
              difficulty: str | None = None, familiar: bool | None = None) -> None:
    """Append one line per call (`git neo ask`'s, or the review judge's: stage JUDGE_STAGE)."""
    if not calls:
        return
    stamp = now_iso()
    lines = [json.dumps({"ts": stamp, "question": question_id, "provider": provider, "model": model,
                         "stage": c.stage, "effort": c.effort, "difficulty": difficulty,
                         "familiar": familiar, "tokens_in": c.tokens_in, "tokens_out": c.tokens_out,
                         "reasoning_tokens": c.reasoning_tokens, "seconds": c.seconds}, sort_keys=True)
             for c in calls]
    path = usage_path(neo_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path.with_name(path.name + ".lock")):
        with open(path, "a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")


def read_usage(neo_dir: Path) -> list[dict]:
    """Every well-formed line of the log (a torn or edited line is skipped)."""
    try:
        text = usage_path(neo_dir).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    entries = []
    for line in text.splitlines():
        try:
            entry = safejson.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("effort") in EFFORTS and isinstance(entry.get("tokens_in"), int) \
                and isinstance(entry.get("tokens_out"), int):
            entries.append(entry)
    return entries


def estimated_saving(effort: str, tokens_out: int, reasoning_tokens: int | None) -> int:
    """Tokens the call would have added at high effort (0 for high and xhigh)."""
    if REASONING_SCALE[effort] >= REASONING_SCALE["high"]:
        return 0
    base = reasoning_tokens if reasoning_tokens is not None else tokens_out
    return round(base * (REASONING_SCALE["high"] / REASONING_SCALE[effort] - 1))


def summarize(entries: Iterable[dict]) -> dict:
    """Totals, per effort and per provider, and the estimated saving (`git neo stats --json`), of
    `git neo ask`'s calls; the review judge's apart (`judge`)."""
    total = {"calls": 0, "questions": 0, "tokens_in": 0, "tokens_out": 0, "reasoning_tokens": 0,
             "estimated_saving_tokens": 0}
    by_effort: dict[str, dict] = {e: {"calls": 0, "questions": 0, "tokens_in": 0, "tokens_out": 0} for e in EFFORTS}
    by_provider: dict[str, dict] = defaultdict(lambda: {"calls": 0, "tokens_in": 0, "tokens_out": 0})
    questions: dict[str, str] = {}
    judge = {"calls": 0, "tokens_in": 0, "tokens_out": 0}
    for e in entries:
        if e.get("stage") == JUDGE_STAGE:
            judge["calls"] += 1
            judge["tokens_in"] += e["tokens_in"]
            judge["tokens_out"] += e["tokens_out"]
            continue
        effort = e["effort"]
        reasoning = e.get("reasoning_tokens") if isinstance(e.get("reasoning_tokens"), int) else None
        total["calls"] += 1
        total["tokens_in"] += e["tokens_in"]
        total["tokens_out"] += e["tokens_out"]
        total["reasoning_tokens"] += reasoning or 0
        total["estimated_saving_tokens"] += estimated_saving(effort, e["tokens_out"], reasoning)
        row = by_effort[effort]
        row["calls"] += 1
        row["tokens_in"] += e["tokens_in"]
        row["tokens_out"] += e["tokens_out"]
        questions.setdefault(str(e.get("question")), effort)
        prov = by_provider[f"{e.get('provider')}/{e.get('model')}"]
        prov["calls"] += 1
        prov["tokens_in"] += e["tokens_in"]
        prov["tokens_out"] += e["tokens_out"]
    for effort in questions.values():
        by_effort[effort]["questions"] += 1
    total["questions"] = len(questions)
    return {**total, "by_effort": by_effort, "by_provider": dict(by_provider), "judge": judge,
            "saving_model": {"reasoning_scale": REASONING_SCALE}}
