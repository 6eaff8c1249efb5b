"""Calibrate an embedder's supersession threshold on StateBench (train) and check it on dev.

    python benchmarks/statebench_eval.py [--embedder hash] [--data DIR] [--text all|key|subject|value]

Offline, a few seconds with the hash embedder. For every timeline of the
`supersession`, `supersession_detection` and `repair_propagation` tracks the
state writes are taken in order (initial persistent facts first). Each new
write is compared with every older write still valid at that point; the pair
is positive when the data says the new write `supersedes` the old one (by id
or by key), negative otherwise.

Two views are reported:

* pairs — every (new, older valid) pair classified by ``cosine >= threshold``;
* store — what the fact store does (DESIGN §4): each new write supersedes its
  single most similar valid write if that cosine reaches the threshold. Edges
  it creates are compared with the data's `supersedes` edges. The
  false-supersession rate is wrongly retired facts per new write. Decisions
  are independent: the valid set follows the data, not earlier mistakes.

A recall table follows: Current@k / StaleLeak@k (see `recall_metrics`) with
no supersession, with the data's pointers, and with the store's rule.

The threshold is chosen on train by F1 and by F0.5 (precision-weighted:
retiring a good fact hurts more than missing a supersession) in the store
view, then evaluated on dev.

Texts (the fact store embeds ``subject + "\\n" + body``):

* key      ``"<key>\\n<value>"`` with the raw key. Superseding writes mostly
           reuse the key with a suffix (`meeting_location` → `meeting_location_v2`),
           which makes this view easy.
* subject  ``"<humanised key>\\n<value>"``: the key with its `_v2`/`_corrected`
           suffix removed and underscores turned into spaces — the subject a
           person would give the fact. Positives then share the subject, as they
           would in the store when someone restates a fact.
* value    ``"<value>"`` only: the hard case, no subject to go by.
* mixed    subject and value steps pooled: one threshold has to serve facts
           restated under the same subject and under a reworded one.

How easy each view is, on these tracks: all superseding writes share the
humanised key with the write they replace and no other pair does (train
273/273 vs 0/234), so `subject` mostly measures that the subject block
works; `value` and `mixed` are the honest tests of the body embedding.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neo_git.embed import get_embedder  # noqa: E402

TRACKS = ("supersession", "supersession_detection", "repair_propagation")
DEFAULT_DATA = ROOT.parent / "shared" / "eval" / "statebench"
TEXT_VIEWS = ("key", "subject", "value", "mixed")
THRESHOLDS = [round(x, 2) for x in np.arange(0.20, 0.96, 0.01)]

# Sanity pairs from the brief: same subject, paraphrased body → must supersede;
# different subject and topic → must not.
MUST_SUPERSEDE = [
    ("HTTP client\nWe use httpx with a 10 s timeout for all outbound calls.",
     "HTTP client\nAll outbound HTTP goes through httpx, timeout 30 s."),
]
MUST_NOT_SUPERSEDE = [
    ("No network calls in hooks\nPost-commit work must never touch the network.",
     "HTTP client\nAll outbound HTTP goes through httpx, timeout 30 s."),
]


@dataclass
class Write:
    id: str
    key: str
    value: str


@dataclass
class Step:
    """One new write and the writes that were valid when it arrived."""

    new: Write
    candidates: list[Write]
    target: int | None  # index into candidates of the write it supersedes, or None


_SUFFIX = re.compile(r"(?:_v\d+|_corrected|_updated|_new|_old)+$")


def humanise(key: str) -> str:
    """`meeting_location_v2` → `meeting location`."""
    return _SUFFIX.sub("", key).replace("_", " ").strip()


def text_of(write: Write, view: str) -> str:
    if view == "key":
        return f"{write.key}\n{write.value}"
    if view == "subject":
        return f"{humanise(write.key)}\n{write.value}"
    return write.value


def load_steps(path: Path, tracks=TRACKS) -> list[Step]:
    """The (new write, valid older writes, target) steps of every timeline in *tracks*."""
    steps: list[Step] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            timeline = json.loads(line)
            if tracks and timeline.get("track") not in tracks:
                continue
            valid: list[Write] = [
                Write(str(f.get("id")), str(f.get("key")), str(f.get("value")))
                for f in timeline.get("initial_state", {}).get("persistent_facts", [])
                if f.get("is_valid", True)
            ]
            for event in timeline.get("events", []):
                if event.get("type") not in ("state_write", "supersession"):
                    continue
                for w in event.get("writes", []):
                    new = Write(str(w.get("id")), str(w.get("key")), str(w.get("value")))
                    target = None
                    ref = w.get("supersedes")
                    if ref:
                        # A pointer names a key or an id; ids repeat ("W-AUTO"), so a key
                        # match wins, then the newest valid write with that id.
                        for attr in ("key", "id"):
                            hits = [i for i, c in enumerate(valid) if getattr(c, attr) == ref]
                            if hits:
                                target = hits[-1]
                                break
                    if valid:
                        steps.append(Step(new, list(valid), target))
                    if target is not None:
                        del valid[target]
                    valid.append(new)
    return steps


def similarities(embedder, steps: list[Step], view: str) -> list[np.ndarray]:
    """Per step, the cosine of the new write with each candidate."""
    texts: dict[str, int] = {}
    for step in steps:
        for w in (step.new, *step.candidates):
            texts.setdefault(text_of(w, view), len(texts))
    vectors = embedder.embed(list(texts))
    out = []
    for step in steps:
        new = vectors[texts[text_of(step.new, view)]]
        cands = vectors[[texts[text_of(c, view)] for c in step.candidates]]
        out.append(cands @ new)
    return out


def f_beta(p: float, r: float, beta: float) -> float:
    if p == 0 and r == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * p * r / (b2 * p + r)


def metrics(steps: list[Step], sims: list[np.ndarray], threshold: float) -> dict:
    """Pair and store metrics at one threshold."""
    tp = fp = fn = 0          # pairs
    stp = sfp = sfn = 0       # store edges
    for step, sim in zip(steps, sims):
        for i, s in enumerate(sim):
            pos = i == step.target
            hit = s >= threshold
            tp += pos and hit
            fp += (not pos) and hit
            fn += pos and not hit
        best = int(np.argmax(sim))
        chosen = best if sim[best] >= threshold else None
        if chosen is not None and chosen == step.target:
            stp += 1
        else:
            sfp += chosen is not None
            sfn += step.target is not None
    res = {}
    for prefix, (a, b, c) in (("pair", (tp, fp, fn)), ("store", (stp, sfp, sfn))):
        p = a / (a + b) if a + b else 1.0
        r = a / (a + c) if a + c else 0.0
        res.update({f"{prefix}_p": p, f"{prefix}_r": r, f"{prefix}_f1": f_beta(p, r, 1), f"{prefix}_f05": f_beta(p, r, 0.5)})
    res["false_supersession_rate"] = sfp / len(steps) if steps else 0.0
    res["wrongly_retired"] = sfp
    res["steps"] = len(steps)
    res["positives"] = sum(s.target is not None for s in steps)
    return res


def choose(steps, sims, key: str) -> tuple[float, dict, tuple[float, float]]:
    """The threshold maximising *key*: the middle of the best plateau (ties are common,
    the data repeats timelines), with the plateau's ends."""
    scored = [(metrics(steps, sims, t), t) for t in THRESHOLDS]
    best = max(m[key] for m, _ in scored)
    plateau = [t for m, t in scored if m[key] >= best - 1e-12]
    # the longest run of consecutive best thresholds, then its middle (rounded up: safer)
    runs, run = [], [plateau[0]]
    for t in plateau[1:]:
        if round(t - run[-1], 2) <= 0.01:
            run.append(t)
        else:
            runs.append(run)
            run = [t]
    runs.append(run)
    run = max(runs, key=len)
    middle = run[len(run) // 2]
    return middle, metrics(steps, sims, middle), (run[0], run[-1])


def row(label: str, m: dict) -> str:
    return (f"{label:<22} {m['pair_p']:6.3f} {m['pair_r']:6.3f} {m['pair_f1']:6.3f} | "
            f"{m['store_p']:6.3f} {m['store_r']:6.3f} {m['store_f1']:6.3f} {m['store_f05']:6.3f} "
            f"{m['false_supersession_rate']:7.3f}")


HEADER = (f"{'':<22} {'pairP':>6} {'pairR':>6} {'pairF1':>6} | {'P':>6} {'R':>6} {'F1':>6} {'F0.5':>6} {'FSR':>7}")


def sanity(embedder, threshold: float) -> list[str]:
    lines = []
    for (a, b), want in [(p, True) for p in MUST_SUPERSEDE] + [(p, False) for p in MUST_NOT_SUPERSEDE]:
        v = embedder.embed([a, b])
        cos = float(v[0] @ v[1])
        ok = (cos >= threshold) == want
        lines.append(f"  {'ok ' if ok else 'BAD'} cos={cos:.3f} {'supersede' if want else 'keep both'}: "
                     f"{a.splitlines()[0]!r} vs {b.splitlines()[0]!r}")
    return lines


# --- recall: Current@k / StaleLeak@k ------------------------------------------------


@dataclass
class Query:
    prompt: str
    must: list[str]
    must_not: list[str]
    writes: list[Write]          # every write before the query, oldest first
    valid_by_data: list[bool]    # per write: still valid according to the data's pointers


def load_queries(path: Path, tracks=TRACKS) -> list[Query]:
    """Queries with the writes made before them; only those whose answer is in some write."""
    queries: list[Query] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            timeline = json.loads(line)
            if tracks and timeline.get("track") not in tracks:
                continue
            writes = [Write(str(f.get("id")), str(f.get("key")), str(f.get("value")))
                      for f in timeline.get("initial_state", {}).get("persistent_facts", [])]
            valid = [True] * len(writes)
            for event in timeline.get("events", []):
                if event.get("type") in ("state_write", "supersession"):
                    for w in event.get("writes", []):
                        ref = w.get("supersedes")
                        if ref:
                            for attr in ("key", "id"):
                                hits = [i for i, c in enumerate(writes) if valid[i] and getattr(c, attr) == ref]
                                if hits:
                                    valid[hits[-1]] = False
                                    break
                        writes.append(Write(str(w.get("id")), str(w.get("key")), str(w.get("value"))))
                        valid.append(True)
                elif event.get("type") == "query":
                    truth = event.get("ground_truth") or {}
                    must = [m for m in truth.get("must_mention") or [] if m]
                    if writes and any(_mentions(w.value, must) for w in writes):
                        queries.append(Query(str(event.get("prompt", "")), must, list(truth.get("must_not_mention") or []),
                                             list(writes), list(valid)))
    return queries


def _mentions(text: str, terms: list[str]) -> bool:
    low = text.lower()
    return any(t.lower() in low for t in terms)


def recall_metrics(embedder, queries: list[Query], view: str, mode: str, threshold: float, ks=(1, 3)) -> dict:
    """Current@k, StaleLeak@k and MustNot@k; *mode* decides which writes are valid:
    "none" (no supersession), "data" (the data's pointers), "embedder" (the store's rule).

    Current@k: a top-k fact mentions a `must_mention` term. StaleLeak@k: a top-k
    fact is one the data says was superseded. MustNot@k: a top-k fact mentions a
    `must_not_mention` term (stricter: a correction often quotes the old value).
    """
    current = {k: 0 for k in ks}
    leak = {k: 0 for k in ks}
    must_not = {k: 0 for k in ks}
    for q in queries:
        texts = [text_of(w, view) for w in q.writes]
        vectors = embedder.embed(texts + [q.prompt])
        facts, query = vectors[:-1], vectors[-1]
        if mode == "data":
            valid = list(q.valid_by_data)
        elif mode == "none":
            valid = [True] * len(texts)
        else:  # replay the writes through the store's rule
            valid = [False] * len(texts)
            for j in range(len(texts)):
                live = [i for i in range(j) if valid[i]]
                if live:
                    sims = facts[live] @ facts[j]
                    best = int(np.argmax(sims))
                    if sims[best] >= threshold:
                        valid[live[best]] = False
                valid[j] = True
        live = [i for i, ok in enumerate(valid) if ok]
        order = [live[i] for i in np.argsort(-(facts[live] @ query), kind="stable")]
        for k in ks:
            top = [q.writes[i].value for i in order[:k]]
            current[k] += any(_mentions(t, q.must) for t in top)
            leak[k] += any(not q.valid_by_data[i] for i in order[:k])
            must_not[k] += bool(q.must_not) and any(_mentions(t, q.must_not) for t in top)
    n = max(len(queries), 1)
    return {**{f"current@{k}": current[k] / n for k in ks}, **{f"stale@{k}": leak[k] / n for k in ks},
            **{f"mustnot@{k}": must_not[k] / n for k in ks}}


def print_recall(embedder, data: Path, tracks, threshold: float) -> None:
    for split in ("train", "dev"):
        queries = load_queries(data / f"{split}.jsonl", tracks)
        print(f"recall on {split} ({len(queries)} queries whose answer is in a write; subject view; higher "
              "Current, lower StaleLeak is better)")
        print(f"  {'valid facts by':<34} {'Cur@1':>6} {'Cur@3':>6} {'Stale@1':>8} {'Stale@3':>8} "
              f"{'MustNot@1':>9} {'MustNot@3':>9}")
        for mode, label in (("none", "no supersession"), ("data", "the data's supersedes pointers"),
                            ("embedder", f"store rule @{threshold:.2f}")):
            m = recall_metrics(embedder, queries, "subject", mode, threshold)
            print(f"  {label:<34} {m['current@1']:6.3f} {m['current@3']:6.3f} {m['stale@1']:8.3f} {m['stale@3']:8.3f} "
                  f"{m['mustnot@1']:9.3f} {m['mustnot@3']:9.3f}")
    print()


def run(embedder_name: str, data: Path, views, sweep: bool, tracks, recall: bool = True) -> int:
    embedder = get_embedder(embedder_name)
    started = time.perf_counter()
    train = load_steps(data / "train.jsonl", tracks)
    dev = load_steps(data / "dev.jsonl", tracks)
    print(f"embedder {embedder.id} (current supersede_threshold {embedder.supersede_threshold})")
    print(f"tracks: {', '.join(tracks) if tracks else 'all'}")
    print(f"train: {len(train)} new writes ({sum(s.target is not None for s in train)} supersede), "
          f"{sum(len(s.candidates) for s in train)} pairs; dev: {len(dev)} new writes "
          f"({sum(s.target is not None for s in dev)} supersede), {sum(len(s.candidates) for s in dev)} pairs")
    print("P/R/F1 = store view (best match above threshold supersedes); FSR = wrongly retired facts per new write\n")
    for view in views:
        if view == "mixed":
            tr_sims = similarities(embedder, train, "subject") + similarities(embedder, train, "value")
            dev_sims = similarities(embedder, dev, "subject") + similarities(embedder, dev, "value")
        else:
            tr_sims = similarities(embedder, train, view)
            dev_sims = similarities(embedder, dev, view)
        train_steps, dev_steps = (train * 2, dev * 2) if view == "mixed" else (train, dev)
        print(f"== text view: {view}")
        if sweep:
            print(f"{'train threshold':<22}" + HEADER[22:])
            for t in THRESHOLDS[::5]:
                print(row(f"  {t:.2f}", metrics(train_steps, tr_sims, t)))
        print(HEADER)
        for key, name in (("store_f1", "F1"), ("store_f05", "F0.5")):
            t, m, (lo, hi) = choose(train_steps, tr_sims, key)
            print(row(f"best {name} train @{t:.2f}", m) + f"   (best from {lo:.2f} to {hi:.2f})")
            print(row(f"     {name} dev   @{t:.2f}", metrics(dev_steps, dev_sims, t)))
        m = metrics(train_steps, tr_sims, embedder.supersede_threshold)
        print(row(f"current train @{embedder.supersede_threshold:.2f}", m))
        print(row(f"current dev   @{embedder.supersede_threshold:.2f}", metrics(dev_steps, dev_sims, embedder.supersede_threshold)))
        print()
    if recall:
        print_recall(embedder, data, tracks, embedder.supersede_threshold)
    print(f"sanity pairs at the current threshold {embedder.supersede_threshold}:")
    print("\n".join(sanity(embedder, embedder.supersede_threshold)))
    print(f"\n{time.perf_counter() - started:.1f} s")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--text", choices=("all", *TEXT_VIEWS), default="all")
    parser.add_argument("--no-sweep", action="store_true", help="skip the threshold sweep table")
    parser.add_argument("--no-recall", action="store_true", help="skip the Current@k / StaleLeak@k table")
    parser.add_argument("--all-tracks", action="store_true", help="use every track, not only the supersession ones")
    args = parser.parse_args(argv)
    views = TEXT_VIEWS if args.text == "all" else (args.text,)
    if not (args.data / "train.jsonl").is_file():
        print(f"no StateBench data in {args.data} (use --data)", file=sys.stderr)
        return 1
    from neo_git.errors import NeoError

    try:
        return run(args.embedder, args.data, views, not args.no_sweep, () if args.all_tracks else TRACKS,
                   recall=not args.no_recall)
    except NeoError as exc:
        print(f"fatal: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
