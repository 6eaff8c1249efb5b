"""Relevance criteria other than one cosine floor: what each would cost in off-topic precision.

    python benchmarks/relevance_criteria.py [--embedder hash|fastembed:<model>] [--share 0.5]

The relevance floor (`relevance_calibration.py`) keeps off-topic prompts out but, on StateBench's
short facts and reworded questions, also the right fact (product Current@1 0.476 vs 0.811 ranked
without a floor, hash embedder, dev key view). Three ways to let more on-topic facts through,
each measured against the same off-topic rule (no store hands a fact to more than 5% of the
off-topic questions; train data only, dev as a check):

1. **rare shared words** — a fact is also relevant when the question shares a word with it whose
   IDF over the store is ≥ tau. Off-topic: StateBench train business questions against the 84
   three-project stores of ADR dev (as the calibration). StateBench stores hold 1–4 facts
   (median 3), where no word's IDF exceeds log(5/1.5) = 1.2.
2. **a floor for short facts** — the lengths differ (StateBench facts ≤ 25 words, decision
   records hundreds), so a fact within the calibrated lengths (≤ 40 words) could have its own
   floor. Off-topic check for short facts: stores of ADR *statements* (each record's title and the
   first sentence of its Decision section, ≤ 30 words: what `git neo add` facts look like) against
   the same questions: the floor such a store needs.
3. **the question names the fact's subject** — at least *--share* of the content words of the
   fact's normalised subject are in the question. StateBench Current@1 with the floor plus this,
   and the off-topic rate this alone adds on the ADR stores.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks.memory_replay import VectorMemo, shared_eval
from benchmarks.prompt_replay import subject_of
from benchmarks.relevance_calibration import questions

_DECISION = re.compile(r"^#+\s*decision[^\n]*\n+(.*?)(?=^#+\s|\Z)", re.IGNORECASE | re.MULTILINE | re.DOTALL)
OFF_TOPIC_TARGET = 0.05


def statement(adr: dict) -> str:
    """A record as a short fact: its title, then the first sentence of its Decision section (≤ 30 words)."""
    match = _DECISION.search(adr["text"])
    body = re.sub(r"\s+", " ", re.sub(r"[#*>`_\[\]]", " ", match.group(1) if match else adr["text"])).strip()
    first = re.split(r"(?<=[.!?])\s", body, maxsplit=1)[0]
    return f"{subject_of(adr['title'])}\n{' '.join(first.split()[:30])}"


def trios(n: int):
    return itertools.combinations(range(n), 3)


def rare_words(projects, train_questions) -> list[str]:
    from neo_git.embed.hashing import tokens

    docs = [[set(tokens(f"{subject_of(a['title'])}\n{a['text']}")) for a in p["adrs"]] for p in projects]
    asked = [set(tokens(q)) for q in train_questions]
    lines = []
    for tau in (2.0, 3.0, 4.0, 5.0, 6.0):
        rates = []
        for trio in trios(len(projects)):
            store = [d for i in trio for d in docs[i]]
            df = Counter(w for d in store for w in d)
            rare = {w for w, c in df.items() if math.log((len(store) + 1) / (c + 0.5)) >= tau}
            rates.append(np.mean([bool(q & rare) for q in asked]))
        lines.append(f"  tau {tau:.1f}: off-topic questions accepted by a rare shared word alone: "
                     f"mean {np.mean(rates):.3f}  worst store {max(rates):.3f}")
    return lines


def short_floor(projects, embed, train, dev) -> list[str]:
    vectors = [embed([statement(a) for a in p["adrs"]]) for p in projects]
    lines, chosen = [], None
    for floor in np.round(np.arange(0.20, 0.56, 0.01), 2):
        a, b = [], []
        for trio in trios(len(projects)):
            store = np.concatenate([vectors[i] for i in trio])
            a.append(((store @ train.T).max(0) >= floor).mean())
            b.append(((store @ dev.T).max(0) >= floor).mean())
        if chosen is None and max(a) <= OFF_TOPIC_TARGET:
            chosen = floor
        lines.append(f"  {floor:.2f}  train mean {np.mean(a):.3f} worst {max(a):.3f}   dev mean {np.mean(b):.3f} "
                     f"worst {max(b):.3f}{'   <- lowest within the target' if floor == chosen else ''}")
    return lines


def subject_named(projects, embedder, train_questions, share: float) -> list[str]:
    import statebench_eval as se

    import neo_git.recall as recall
    from neo_git.embed import relevance_floor
    from neo_git.embed.hashing import tokens
    from neo_git.store.evidence import _GENERIC
    from neo_git.store.supersession import Thresholds, subject_key

    generic = {t for w in _GENERIC for t in tokens(w)}

    def about(subject: str) -> frozenset:
        return frozenset(t for t in tokens(subject_key(subject)) if t not in generic and len(t) > 1 and not t.isdigit())

    def names(asked: frozenset, subject: str) -> bool:
        words = about(subject)
        return bool(words) and len(words & asked) >= share * len(words)

    original_floor, original_assemble = recall.above_floor, recall.assemble
    asked_now: dict[str, frozenset] = {}

    def above_floor(layout, pool_cos, floor):
        if floor is None:
            return original_floor(layout, pool_cos, floor)
        named = np.array([names(asked_now["q"], f.subject) for f in layout.pool], dtype=bool)
        keep = np.flatnonzero((pool_cos >= floor) | named)
        return (layout, pool_cos) if len(keep) == len(layout.pool) else (layout.subset(keep), pool_cos[keep])

    def assemble(query, *args, **kwargs):
        asked_now["q"] = frozenset(tokens(query))
        return original_assemble(query, *args, **kwargs)

    vectors, thresholds, floor = VectorMemo(embedder), Thresholds.of(embedder), relevance_floor(embedder)
    lines = []
    for patched in (False, True):
        import memory_replay

        recall.above_floor = above_floor if patched else original_floor
        memory_replay.assemble = assemble if patched else original_assemble
        for split in ("train", "dev"):
            timelines = se.load(se.DEFAULT_DATA / f"{split}.jsonl")
            for view in ("key", "value"):
                m = se.evaluate(timelines, vectors, thresholds, view, False, floor=floor)["main"].row()
                lines.append(f"  {'floor + subject named' if patched else 'floor alone':<22} {split:<5} {view:<5} "
                             f"Cur@1F {m['Cur@1F']:.3f}  Cur@5F {m['Cur@5F']:.3f}  Stale@5F {m['Stale@5F']:.3f}")
    recall.above_floor, memory_replay.assemble = original_floor, original_assemble
    subjects = [[subject_of(a["title"]) for a in p["adrs"]] for p in projects]
    asked = [frozenset(tokens(q)) for q in train_questions]
    rates = [np.mean([any(names(q, s) for i in trio for s in subjects[i]) for q in asked])
             for trio in trios(len(projects))]
    lines.append(f"  off-topic questions accepted by a named subject alone (ADR stores): mean {np.mean(rates):.3f}  "
                 f"worst store {max(rates):.3f}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--share", type=float, default=0.5, help="share of the subject's words the question must name")
    args = parser.parse_args()
    from neo_git.embed import get_embedder

    embedder = get_embedder(args.embedder)

    def embed(texts):
        return np.asarray(embedder.embed(list(texts)), dtype=np.float32)

    projects = [json.loads(line) for line in (shared_eval("adr") / "dev.jsonl").read_text().splitlines()]
    train_questions = questions("train")
    print(f"embedder {embedder.id}; {len(train_questions)} off-topic train questions; 84 three-project ADR stores")
    print("\n1. rare shared words (IDF over the store; hash tokens)")
    print("\n".join(rare_words(projects, train_questions)))
    print(f"\n2. short facts: ADR statements (title + first Decision sentence, median "
          f"{int(np.median([len(statement(a).split()) for p in projects for a in p['adrs']]))} words); off-topic rate by floor")
    print("\n".join(short_floor(projects, embed, embed(train_questions), embed(questions("dev")))))
    print(f"\n3. the question names ≥ {args.share:.2f} of the fact's subject words (StateBench, detect arm, w/o brutal)")
    print("\n".join(subject_named(projects, embedder, train_questions, args.share)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
