"""The review judge on real decision records: what `git neo review --judge [--wider]` would decide.

    OPENAI_API_KEY=… python benchmarks/judge_eval.py [--provider openai] [--model M] [--max-questions N]

Replays the ADR dev set as `adr_eval.py` does (README rules: numbers stripped, records in order),
then asks the configured `ask` provider — the real SDK, the prompt and schema of
`neo_git.ask.judge` — about every open review item (what `--judge` asks) and every pair
`--wider` would add (each record's three most similar earlier records that no rule proposed).
Prints, against the authors' own supersession edges:

- questions per 100 adds (the judge's cost);
- the person's queue with the judge (record mode): the evidence items, plus the pairs `--wider`
  found and the judge called `updated` or `contradicts`; recall counting accepted items;
- auto mode (`neo.reviewJudge auto`): right and wrong retirements, the false-supersession rate;
- the judge's verdicts on true edges and on other pairs.

It needs a model, so it does not run offline (nor in CI); `tests/ask/test_judge_eval.py` drives it
against the loopback server to check the counting. `--max-questions` bounds the cost in pairs
judged (records are taken repository by repository, in the file's order; a newer fact's candidates
go in one call, as `git neo review --judge` sends them).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adr_eval import DEFAULT_DATA, replay_repo
from memory_replay import VectorMemo

from neo_git.ask.judge import LABELS, PROPOSES, TYPE, ask_verdicts
from neo_git.embed import get_embedder
from neo_git.store.evidence import quotes
from neo_git.store.review.possible import questions
from neo_git.store.supersession import Thresholds


def judge_replay(repos, vectors: VectorMemo, thresholds: Thresholds, provider, max_questions: int | None = None,
                 progress=None) -> dict:
    """Replay each repository, ask the judge about its review items and `--wider` pairs; totals."""
    total = {"added": 0, "edges": 0, "asked": 0, "calls": 0, "errors": 0, "certain": set(), "items": 0,
             "accepted": set(), "wider_items": 0, "auto_right": set(), "auto_wrong": 0,
             "verdicts": Counter(), "repos": 0}
    for repo in repos:
        if max_questions is not None and total["asked"] >= max_questions:
            break
        counts = replay_repo(repo, vectors, thresholds)
        truth = {(str(old), str(new)) for old, new in repo.get("edges", [])}
        store, adr_of = counts["store"], counts["adr_of"]
        total["repos"] += 1
        for key in ("added", "edges", "items"):
            total[key] += counts[key]
        name = repo["repo"]
        total["certain"] |= {(name, *edge) for edge in counts["certain"]}
        total["accepted"] |= {(name, *edge) for edge in counts["reviewed"]}   # a person reads every evidence item
        superseding, retired = set(), set()   # auto mode: a fact replaces one fact, is retired once
        # One question per newer fact, as `git neo review --judge` asks: its evidence items (and
        # alternatives), then separately the pairs `--wider` adds for it.
        items = [_item(store, new, old, evidence) for new, old, evidence in counts["proposed"]]
        items += [_item(store, new, old, None) for new, old in counts["wider"]]
        bound = None if max_questions is None else max(max_questions - total["asked"], 0)
        for question in questions(items, bound, most=len(LABELS)):
            total["asked"] += len(question)
            total["calls"] += 1
            try:
                answers = ask_verdicts(provider, question)
            except ValueError:
                total["errors"] += len(question)
                continue
            for item, answer in zip(question, answers):
                if answer is None:
                    total["errors"] += 1
                    continue
                verdict, wider = answer[0], item["wider"]
                edge = (adr_of[item["candidate"]], adr_of[item["id"]])
                right = edge in truth
                total["verdicts"][verdict, right] += 1
                if wider and verdict in PROPOSES:
                    total["wider_items"] += 1
                    if right:
                        total["accepted"].add((name, *edge))
                if verdict == "updated" and item["id"] not in superseding and item["candidate"] not in retired:
                    superseding.add(item["id"])
                    retired.add(item["candidate"])
                    if right:
                        total["auto_right"].add((name, *edge))
                    else:
                        total["auto_wrong"] += 1
                if progress is not None:
                    progress(name, edge, verdict, right, wider)
    return total


def _item(store, new_id: str, old_id: str, evidence) -> dict:
    """A pair as the review queue lists it (with its quotes), *evidence* None for a `--wider` pair."""
    new, old = store.facts[new_id], store.facts[old_id]
    return {"type": TYPE, "id": new.id, "candidate": old.id, "kind": new.kind.value, "wider": evidence is None,
            "new": {"subject": new.subject, "body": new.body}, "old": {"subject": old.subject, "body": old.body},
            "quotes": quotes(new, old, evidence) if evidence else {}}


def report(total: dict, model: str, seconds: float) -> None:
    n, edges = max(total["added"], 1), max(total["edges"], 1)
    found = total["certain"] | total["accepted"]
    auto = total["certain"] | total["auto_right"]
    print(f"judge {model}: {total['repos']} repositories, {total['added']} records added, {total['edges']} edges "
          f"({seconds:.0f} s)")
    rows = [("pairs judged per 100 adds (calls: one per newer fact)",
             f"{100 * total['asked'] / n:.1f} ({100 * total['calls'] / n:.1f} calls)"
             + (f" ({total['errors']} unreadable replies)" if total["errors"] else "")),
            ("record mode: queue items per 100 adds (evidence items + --wider pairs judged updated/contradicts)",
             f"{100 * (total['items'] + total['wider_items']) / n:.1f}"),
            ("record mode: recall counting accepted items", f"{len(found) / edges:.3f} ({len(found)} of {edges})"),
            ("auto mode: recall (certain + judged updated)", f"{len(auto) / edges:.3f}"),
            ("auto mode: wrong retirements, false-supersession rate",
             f"{total['auto_wrong']}, {total['auto_wrong'] / n:.4f}")]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")
    print("  verdicts on true edges / on other pairs: " + ", ".join(
        f"{verdict} {total['verdicts'][verdict, True]}/{total['verdicts'][verdict, False]}"
        for verdict in ("updated", "contradicts", "distinct")))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--provider", help="openai, anthropic or ollama (default: as `git neo ask`)")
    parser.add_argument("--model", help="the model (default: as `git neo ask`)")
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--max-questions", type=int, help="stop after this many pairs judged (cost bound)")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every verdict")
    args = parser.parse_args(argv)
    from neo_git.ask.providers import make_provider
    from neo_git.ask.settings import resolve_settings
    from neo_git.errors import NeoError

    if not args.data.is_file():
        print(f"judge_eval: no decision records at {args.data} (use --data)", file=sys.stderr)
        return 1
    repos = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    embedder = get_embedder(args.embedder)

    def show(repo, edge, verdict, right, wider):
        print(f"  {'EDGE' if right else '    '} {'wider' if wider else 'item '} {repo} {edge}: {verdict}")

    started = time.perf_counter()
    try:
        provider = make_provider(resolve_settings(args.provider, args.model))
        if not provider.calls_model:
            raise NeoError("no model is configured", "set OPENAI_API_KEY or ANTHROPIC_API_KEY, or --provider ollama")
        total = judge_replay(repos, VectorMemo(embedder), Thresholds.of(embedder), provider, args.max_questions,
                             show if args.verbose else None)
    except NeoError as exc:   # no key, a refused key, an unreachable server: nothing to measure
        print(f"judge_eval: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""), file=sys.stderr)
        return 1
    report(total, f"{provider.name}:{provider.settings.model}", time.perf_counter() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
