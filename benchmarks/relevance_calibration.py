"""Calibrate an embedder's relevance floor: the cosine from which a fact is relevant at all.

    python benchmarks/relevance_calibration.py [--embedder hash|fastembed:<model>] [--target 0.05]

Stores: every choice of three of the nine projects of `../shared/eval/adr/dev.jsonl` (84
stores of 73–342 decision records, subject = title without its number, body = text).
Questions: StateBench *train*'s questions of the business domains (sales, procurement, hr,
support) are off-topic for every store; each record's own problem statement (its Context /
Problem section) is on-topic for its store. For each floor (0.01 steps) it prints, over the
84 stores, the share of off-topic questions for which some record reaches the floor (mean and
worst store) and the share of problem statements whose own record reaches the floor *and*
ranks in the top 5; then StateBench *dev*'s questions as a check that was not tuned on.

The floor chosen is the lowest at which no store gives a fact to more than *--target* (5%)
of the train questions. For the built-in embedder that is 0.28 (embed/hashing.py).
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.memory_replay import shared_eval
from benchmarks.prompt_replay import OFF_TOPIC_DOMAINS, problem_statement, subject_of


def questions(split: str) -> list[str]:
    """The business-domain questions of one StateBench split, de-duplicated."""
    seen: dict[str, None] = {}
    for line in (shared_eval("statebench") / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
        timeline = json.loads(line)
        if timeline["domain"] in OFF_TOPIC_DOMAINS:
            for event in timeline["events"]:
                if event["type"] == "query" and event.get("prompt", "").strip():
                    seen.setdefault(event["prompt"].strip(), None)
    return list(seen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--target", type=float, default=0.05, help="worst store's off-topic rate allowed")
    parser.add_argument("--low", type=float, default=0.15)
    parser.add_argument("--high", type=float, default=0.45)
    args = parser.parse_args()
    from neo_git.embed import get_embedder

    embedder = get_embedder(args.embedder)

    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray(embedder.embed(texts), dtype=np.float32)

    projects = [json.loads(line) for line in (shared_eval("adr") / "dev.jsonl").read_text().splitlines()]
    vectors, statements = [], []
    for project in projects:
        adrs = sorted(project["adrs"], key=lambda a: a["seq"])
        vectors.append(embed([f"{subject_of(a['title'])}\n{a['text']}" for a in adrs]))
        found = [(i, problem_statement(a["text"])) for i, a in enumerate(adrs)]
        statements.append([(i, embed([s])[0]) for i, s in found if s])
    train, dev = embed(questions("train")), embed(questions("dev"))
    floors = np.round(np.arange(args.low, args.high + 1e-9, 0.01), 2)
    rows = {f: [] for f in floors}
    for trio in itertools.combinations(range(len(projects)), 3):
        store = np.concatenate([vectors[i] for i in trio])
        best_train, best_dev = (store @ train.T).max(axis=0), (store @ dev.T).max(axis=0)
        own, rank, offset = [], [], 0
        for i in trio:
            for position, vector in statements[i]:
                scores = store @ vector
                own.append(scores[offset + position])
                rank.append(int((scores > scores[offset + position]).sum()))
            offset += len(vectors[i])
        own_a, rank_a = np.array(own), np.array(rank)
        for f in floors:
            rows[f].append(((best_train >= f).mean(), (best_dev >= f).mean(), ((own_a >= f) & (rank_a < 5)).mean()))
    print(f"embedder {embedder.id}: {len(train)} train / {len(dev)} dev off-topic questions, "
          f"{sum(len(s) for s in statements)} problem statements, 84 three-project stores")
    print(f"{'floor':>5}  {'off train mean':>14} {'worst':>6}  {'off dev mean':>12} {'worst':>6}  "
          f"{'on-topic top5 mean':>18} {'worst':>6}")
    chosen = None
    for f in floors:
        a = np.array(rows[f])
        if chosen is None and a[:, 0].max() <= args.target:
            chosen = f
        print(f"{f:5.2f}  {a[:, 0].mean():14.3f} {a[:, 0].max():6.3f}  {a[:, 1].mean():12.3f} {a[:, 1].max():6.3f}  "
              f"{a[:, 2].mean():18.3f} {a[:, 2].min():6.3f}{'   <- chosen' if f == chosen else ''}")
    print(f"lowest floor with every store's train off-topic rate <= {args.target}: {chosen}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
