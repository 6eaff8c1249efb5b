"""StateBench replay of git-neo's write policy and recall: calibration on train, report on dev.

    python benchmarks/statebench_eval.py [--embedder hash] [--data DIR] [--no-sweep] [--splits train,dev]

Follows the replay rules of `../shared/eval/statebench/README.md`:

* every timeline goes to a fresh store; a write is a fact with subject = its key and
  body = its value ("key" view), or with subject = its value and no body ("value" view:
  callers who do not reuse subjects, so only cosine can find a supersession);
* the initial persistent facts are one batch (`add_many`): none supersedes another;
* `[RESTRICTED` writes are not stored;
* **oracle arm**: detection off (certain threshold above 1), the data's `supersedes`
  pointers passed explicitly, `[INVALIDATED` tombstones replayed as an invalidation of
  their target; **detect arm**: no pointers, the store decides, tombstones are stored
  like any write;
* `brutal_realistic` is reported on its own (its corrections point at the previous
  turn whatever the topic, so content cannot find them);
* Current@k counts only reachable queries (some stored write contains a `must_mention`).

Supersession: a store edge new→old is right when the data's pointer of that write names
that old write. Precision, recall; FSR = wrong retirements per fact added (initial facts
included); Poss = facts added with a `possibly_supersedes` link, per fact added; PossR =
true edges the store missed that it proposed for review instead.

Recall: Current@k = a `must_mention` string is in one of the top-k valid facts;
StaleLeak@k = one of the top-k valid facts is a write the data says was superseded or
retracted. Two figures each: *ranking* (every fact ranked, no relevance floor: how well the
order puts the current answer first) and *product* ("F" columns: with the embedder's relevance
floor, as `FactStore.recall` and every agent path return facts; a right fact below the floor is
not returned at all). Quote the product figures as what a user gets.

Calibration (train only, key and value views pooled, no brutal_realistic): the *certain*
threshold is the lowest cosine whose false-supersession rate is ≤ 0.005; the *possible*
threshold the lowest whose possible-supersession rate stays ≤ POSSIBLE_BUDGET.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_replay import MemoryReplay, VectorMemo, shared_eval

from neo_git.embed import get_embedder, relevance_floor
from neo_git.store.supersession import Thresholds

DEFAULT_DATA = shared_eval("statebench")
BRUTAL = "brutal_realistic"
# The tracks about the current value of a fact; the others test permissions, authority,
# interruptions (their questions need several facts at once, not the newest one).
STATE_TRACKS = ("supersession", "supersession_detection", "repair_propagation")
VIEWS = ("key", "value")
TARGET_FSR = 0.005
POSSIBLE_BUDGET = 0.10   # at most one fact in ten added asks for review (train)
SWEEP = [round(x, 2) for x in np.arange(0.30, 0.96, 0.02)]
DEBUG = False
OFF = 2.0                # a certain threshold above 1: detection off (oracle arm)


@dataclass
class Write:
    key: str
    value: str
    ref: str | None      # the data's `supersedes` (a key, rarely an id)
    wid: str
    at: str | None


@dataclass
class Timeline:
    track: str
    initial: list[Write]
    events: list[tuple[str, object]]  # ("write", Write) | ("query", (prompt, must))


def load(path: Path) -> list[Timeline]:
    """Every timeline of a split, in the replay's terms."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            t = json.loads(line)
            initial = [Write(str(f.get("key")), str(f.get("value")), None, str(f.get("id")), f.get("ts"))
                       for f in t.get("initial_state", {}).get("persistent_facts", [])
                       if f.get("is_valid", True) and not str(f.get("value")).startswith("[RESTRICTED")]
            events: list[tuple[str, object]] = []
            for e in t.get("events", []):
                if e.get("type") in ("state_write", "supersession"):
                    for w in e.get("writes", []):
                        events.append(("write", Write(str(w.get("key")), str(w.get("value")), w.get("supersedes"),
                                                      str(w.get("id")), e.get("ts"))))
                elif e.get("type") == "query":
                    truth = e.get("ground_truth") or {}
                    events.append(("query", (str(e.get("prompt", "")), [m for m in truth.get("must_mention") or [] if m])))
            out.append(Timeline(str(t.get("track")), initial, events))
    return out


def texts(write: Write, view: str) -> tuple[str, str]:
    """(subject, body) of a write in a view."""
    if view == "key":
        return write.key, write.value
    return write.value[:200], ""


@dataclass
class Tally:
    added: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    possible: int = 0
    links: int = 0
    possible_hits: int = 0
    queries: int = 0
    current: dict = field(default_factory=lambda: {1: 0, 5: 0})
    stale: dict = field(default_factory=lambda: {1: 0, 5: 0})
    floored: dict = field(default_factory=lambda: {"cur1": 0, "cur5": 0, "stale5": 0})  # with the floor
    tracks: dict = field(default_factory=dict)  # track -> [Current@1 hits, queries]

    def merge(self, other: Tally) -> None:
        for name in ("added", "tp", "fp", "fn", "possible", "links", "possible_hits", "queries"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for k in self.current:
            self.current[k] += other.current[k]
            self.stale[k] += other.stale[k]
        for k in self.floored:
            self.floored[k] += other.floored[k]
        for track, (hits, asked) in other.tracks.items():
            mine = self.tracks.setdefault(track, [0, 0])
            mine[0] += hits
            mine[1] += asked

    def row(self) -> dict:
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0
        n, q = max(self.added, 1), max(self.queries, 1)
        missed = self.fn
        edges = self.tp + self.fn
        return {"P": p, "R": r, "FSR": self.fp / n, "Poss": self.possible / n,
                "PossR": self.possible_hits / missed if missed else 1.0,
                "Items": 100 * self.possible / n, "Links": 100 * self.links / n,
                "RwR": (self.tp + self.possible_hits) / edges if edges else 1.0,
                "Cur@1": self.current[1] / q, "Cur@5": self.current[5] / q, "Stale@5": self.stale[5] / q,
                "Cur@1F": self.floored["cur1"] / q, "Cur@5F": self.floored["cur5"] / q,
                "Stale@5F": self.floored["stale5"] / q,
                "edges": self.tp + self.fn, "added": self.added, "queries": self.queries}


class _Calibrated:
    """An embedder with given thresholds whose vectors come from a run's VectorMemo."""

    def __init__(self, vectors: VectorMemo, thresholds: Thresholds) -> None:
        inner = vectors.embedder
        self.vectors, self.id, self.dim = vectors, inner.id, inner.dim
        self.supersede_threshold, self.possible_threshold = thresholds.certain, thresholds.possible
        self.relevance_floor = relevance_floor(inner)

    def embed(self, texts):
        self.vectors.prime(list(texts))
        return np.stack([self.vectors(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


class StoreReplay:
    """The replay's calls on `FactStore.in_memory`: the product's own add, invalidate and recall
    (`--through-store`). Facts get the time they are added (second precision), not the data's."""

    def __init__(self, vectors: VectorMemo, thresholds: Thresholds) -> None:
        from neo_git.store import FactStore

        self.store = FactStore.in_memory(embedder=_Calibrated(vectors, thresholds))

    def add_many(self, items):
        return self.store.add_many_detailed([{"subject": s[:200] or "-", "body": b[:16384], "kind": "decision",
                                              "supersedes": explicit} for s, b, explicit, _at in items])

    def add(self, subject, body, explicit=None, created_at=None):
        return self.add_many([(subject, body, explicit, created_at)])[0]

    def invalidate(self, fact_id):
        self.store.invalidate(fact_id)

    def recall(self, query, k, floor=None):
        self.store.relevance_override = -1.0 if floor is None else floor   # None: rank every fact
        return self.store.recall(query, k=k, max_tokens=10**6).valid_facts


REPLAY = MemoryReplay   # StoreReplay with --through-store


def replay(timeline: Timeline, vectors: VectorMemo, thresholds: Thresholds, view: str, oracle: bool,
           queries: bool = True, floor: float | None = None) -> Tally:
    """Replay one timeline into a fresh store; count supersession and recall outcomes (ranking
    without a floor, and the product's figures with *floor*, the embedder's relevance floor)."""
    store = REPLAY(vectors, Thresholds(OFF, OFF, thresholds.embedder) if oracle else thresholds)
    tally = Tally()
    by_write: list[tuple[Write, str]] = []       # (write, fact id), oldest first
    retired: set[str] = set()                    # fact ids the data says are no longer current

    def target_of(ref: str | None) -> str | None:
        if not ref:
            return None
        for attr in ("key", "wid"):  # a pointer names a key, rarely an id (ids repeat: the newest)
            hits = [fid for w, fid in by_write if getattr(w, attr) == ref and fid not in retired]
            if hits:
                return hits[-1]
        return None

    def note(result, truth: str | None) -> None:
        tally.added += 1
        got = result.superseded.id if result.superseded is not None else None
        if got is not None and got == truth:
            tally.tp += 1
        else:
            tally.fp += got is not None
            if truth is not None:
                tally.fn += 1
                tally.possible_hits += any(link.id == truth for link in result.possible)
        tally.possible += bool(result.possible)
        tally.links += len(result.possible)

    results = store.add_many([(*texts(w, view), None, w.at) for w in timeline.initial])
    for w, result in zip(timeline.initial, results):
        by_write.append((w, result.fact.id))
        note(result, None)
    seen_values: list[str] = [w.value for w in timeline.initial]
    for kind, event in timeline.events:
        if kind == "write":
            w = event
            if w.value.startswith("[RESTRICTED"):
                continue
            truth = target_of(w.ref)
            if oracle and w.value.startswith("[INVALIDATED"):
                if truth is not None:
                    store.invalidate(truth)
                    retired.add(truth)
                continue
            result = store.add(*texts(w, view), truth if oracle else None, w.at)
            if not result.duplicate:
                note(result, truth)
            if truth is not None and truth != result.fact.id:   # a verbatim restatement is the current fact
                retired.add(truth)
            by_write.append((w, result.fact.id))
            seen_values.append(w.value)
        elif queries:
            prompt, must = event
            low = [m.lower() for m in must]
            if not any(m in v.lower() for v in seen_values for m in low):
                continue  # unreachable: no stored write contains the answer
            tally.queries += 1
            top = store.recall(prompt, k=5)
            if DEBUG and not any(m in f.text.lower() for f in top[:1] for m in low):
                print("MISS", timeline.track, prompt, must, [f.text[:70] for f in top[:3]], file=sys.stderr)
            for k in (1, 5):
                tally.current[k] += any(m in f.text.lower() for f in top[:k] for m in low)
                tally.stale[k] += any(f.id in retired for f in top[:k])
            if floor is not None:
                shown = store.recall(prompt, k=5, floor=floor)
                tally.floored["cur1"] += any(m in f.text.lower() for f in shown[:1] for m in low)
                tally.floored["cur5"] += any(m in f.text.lower() for f in shown[:5] for m in low)
                tally.floored["stale5"] += any(f.id in retired for f in shown[:5])
            track = tally.tracks.setdefault(timeline.track, [0, 0])
            track[0] += any(m in f.text.lower() for f in top[:1] for m in low)
            track[1] += 1
    return tally


def evaluate(timelines, vectors, thresholds, view, oracle, queries=True, floor=None) -> dict[str, Tally]:
    """Tallies for the timelines without brutal_realistic ("main"), for the state tracks
    alone ("state") and for brutal_realistic alone."""
    out = {"main": Tally(), "state": Tally(), BRUTAL: Tally()}
    for t in timelines:
        tally = replay(t, vectors, thresholds, view, oracle, queries, floor)
        out[BRUTAL if t.track == BRUTAL else "main"].merge(tally)
        if t.track in STATE_TRACKS:
            out["state"].merge(tally)
    return out


def calibrate(train, vectors, embedder) -> tuple[float, float, list[str]]:
    """(possible, certain) from train alone (without brutal_realistic), and the sweep's lines.

    certain: the lowest cosine at which rule 3 (with rules 2's subject matching on) keeps the
    false-supersession rate ≤ TARGET_FSR in *each* view, and at every higher cosine too.
    possible: the lowest cosine below it at which at most POSSIBLE_BUDGET of the facts
    added (both views pooled) ask for review."""
    main = [t for t in train if t.track != BRUTAL]
    lines = [f"  {'cosine':>6} {'FSR key':>8} {'FSR value':>9} {'R key':>6} {'R value':>7}"
             "   (the certain threshold at that cosine; train without brutal_realistic)"]
    fine: list[bool] = []
    for t in SWEEP:
        rows = [evaluate(main, vectors, Thresholds(t, t, embedder.id), view, False, queries=False)["main"].row()
                for view in VIEWS]
        lines.append(f"  {t:6.2f} {rows[0]['FSR']:8.4f} {rows[1]['FSR']:9.4f} {rows[0]['R']:6.3f} {rows[1]['R']:7.3f}")
        fine.append(all(r["FSR"] <= TARGET_FSR for r in rows))
    # the lowest threshold from which every higher one is fine too (a stable region, not a lucky dip)
    certain = SWEEP[-1]
    for i in range(len(SWEEP) - 1, -1, -1):
        if not fine[i]:
            break
        certain = SWEEP[i]
    possible = certain
    lines.append(f"  {'possible':>8} {'Poss':>6} {'PossR':>6}   (with certain {certain:.2f}; key+value pooled)")
    for t in [x for x in SWEEP if x < certain]:
        pooled = Tally()
        for view in VIEWS:
            pooled.merge(evaluate(main, vectors, Thresholds(certain, t, embedder.id), view, False,
                                  queries=False)["main"])
        m = pooled.row()
        lines.append(f"  {t:8.2f} {m['Poss']:6.3f} {m['PossR']:6.3f}")
        if m["Poss"] <= POSSIBLE_BUDGET and possible == certain:
            possible = t
    return possible, certain, lines


def guard_calibration(train, vectors) -> str:
    """Rule 2's body guard on train: the body cosines of true same-subject restatements whose
    bodies are both long enough for the guard to apply (it must stay below all of them)."""
    from neo_git.store.supersession import BODY_GUARD, LONG_BODY_WORDS, _words, subject_key

    cosines = []
    for t in train:
        if t.track == BRUTAL:
            continue
        writes = list(t.initial) + [w for kind, w in t.events if kind == "write"]
        for w in writes:
            old = next((o for o in writes if w.ref and o.key == w.ref), None)
            if old is None or subject_key(old.key) != subject_key(w.key):
                continue
            if _words(old.value) >= LONG_BODY_WORDS and _words(w.value) >= LONG_BODY_WORDS:
                cosines.append(float(vectors(old.value) @ vectors(w.value)))
    low = min(cosines) if cosines else float("nan")
    return (f"body guard {BODY_GUARD:.2f} (bodies ≥ {LONG_BODY_WORDS} words): {len(cosines)} true same-subject "
            f"restatements with long bodies on train, lowest body cosine {low:.3f}")


def family_calibration(train, vectors, shipped) -> list[str]:
    """The current-state ranking's settings on train (detect arm, without brutal_realistic): Current@1
    and StaleLeak@5 per view for a few values of each (`ranking.FAMILY_SHARE`, the embedder's family
    threshold, `ranking.ECHO_WEIGHT`, `ranking.THREAD_OF_THE_BEST`); the shipped ones are the best."""
    import neo_git.ranking as ranking

    main = [t for t in train if t.track != BRUTAL]
    lines: list[str] = []

    def sweep(owner, name: str, label: str, note: str, values, shown=lambda v: f"{v:6.2f}") -> None:
        had = hasattr(owner, name)
        kept = getattr(owner, name, None)
        lines.append(f"  {label:>6} " + " ".join(f"{v + ' Cur@1':>12} {v + ' Stale@5':>13}" for v in VIEWS)
                     + f"   ({note}; train, detect arm, w/o brutal)")
        for value in values:
            setattr(owner, name, value)
            rows = [evaluate(main, vectors, shipped, view, False)["main"].row() for view in VIEWS]
            lines.append(f"  {shown(value)} " + " ".join(f"{r['Cur@1']:12.3f} {r['Stale@5']:13.3f}" for r in rows))
        if had:
            setattr(owner, name, kept)
        else:
            delattr(owner, name)

    sweep(ranking, "FAMILY_SHARE", "share", "newest-in-family share", (0.0, 0.25, 0.5, 0.75))
    sweep(vectors.embedder, "family_threshold", "family", "family threshold: the cosine from which ranked "
          "facts are related", (0.40, 0.35, 0.30, 0.27, 0.24, 0.22))
    sweep(ranking, "ECHO_WEIGHT", "echo", "weight of a wh-question's echo, ranking.ECHO_WEIGHT",
          (1.0, 0.5, 0.25, 0.1, 0.0))
    sweep(ranking, "THREAD_OF_THE_BEST", "thread", "a loose member related to the family's best joins it, "
          "ranking.THREAD_OF_THE_BEST", (False, True), lambda v: f"{'on' if v else 'off':>6}")
    return lines


HEAD = f"  {'split':<6} {'view':<6} {'arm':<7} {'set':<17} {'P':>6} {'R':>6} {'FSR':>7} {'Items':>6} {'Links':>6} " \
       f"{'PossR':>6} {'RwR':>6} {'Cur@1':>6} {'Cur@5':>6} {'Stale@5':>7} {'Cur@1F':>6} {'Cur@5F':>6} " \
       f"{'Stale@5F':>8} {'edges':>6} {'added':>6} {'q':>5}"


def fmt(split, view, arm, name, m) -> str:
    return (f"  {split:<6} {view:<6} {arm:<7} {name:<17} {m['P']:6.3f} {m['R']:6.3f} {m['FSR']:7.4f} "
            f"{m['Items']:6.1f} {m['Links']:6.1f} {m['PossR']:6.3f} {m['RwR']:6.3f} {m['Cur@1']:6.3f} "
            f"{m['Cur@5']:6.3f} {m['Stale@5']:7.3f} {m['Cur@1F']:6.3f} {m['Cur@5F']:6.3f} {m['Stale@5F']:8.3f} "
            f"{m['edges']:6d} {m['added']:6d} {m['queries']:5d}")


def run(embedder_name: str, data: Path, splits, sweep: bool, floor_override: float | None = None,
        through_store: bool = False) -> int:
    global REPLAY
    if through_store:
        REPLAY = StoreReplay
    embedder = get_embedder(embedder_name)
    vectors = VectorMemo(embedder)
    started = time.perf_counter()
    loaded = {split: load(data / f"{split}.jsonl") for split in splits}
    shipped = Thresholds.of(embedder)
    floor = relevance_floor(embedder) if floor_override is None else floor_override
    print(f"replay through {'FactStore.in_memory' if REPLAY is StoreReplay else 'memory_replay (dict)'}; "
          f"embedder {embedder.id}: shipped thresholds possible {shipped.possible:.2f}, certain {shipped.certain:.2f}; "
          f"relevance floor {floor:.2f} (the F columns)")
    if sweep and "train" in loaded:
        possible, certain, lines = calibrate(loaded["train"], vectors, embedder)
        print(f"calibration on train: certain = lowest stable cosine with FSR ≤ {TARGET_FSR} -> {certain:.2f}; "
              f"possible = lowest with Poss ≤ {POSSIBLE_BUDGET} -> {possible:.2f}")
        print("\n".join(lines))
        print(guard_calibration(loaded["train"], vectors))
        print("\n".join(family_calibration(loaded["train"], vectors, shipped)))
    print("\nP/R/FSR: supersession edges; Items: facts added with a possibly_supersedes link, per 100 added; "
          "Links: review items (links) per 100 added; PossR: missed true edges proposed for review; RwR: recall "
          "counting accepted review items; Cur/Stale on reachable queries: ranking every fact (no floor); "
          "Cur@1F/Cur@5F/Stale@5F: what FactStore.recall returns, with the relevance floor (the product's figure)")
    print(HEAD)
    per_track = {}
    for split, timelines in loaded.items():
        for view in VIEWS:
            for arm in ("oracle", "detect"):
                if arm == "oracle" and view == "value":
                    continue  # the oracle arm ignores content: the view changes nothing
                tallies = evaluate(timelines, vectors, shipped, view, arm == "oracle", floor=floor)
                per_track[split, view, arm] = {**tallies["main"].tracks, **tallies[BRUTAL].tracks}
                for name, label in (("main", "w/o brutal"), ("state", "state tracks"), (BRUTAL, BRUTAL)):
                    print(fmt(split, view, arm, label, tallies[name].row()))
    print("\nCurrent@1 per track (reachable queries)")
    columns = list(per_track)
    print(f"  {'track':<26} " + " ".join(f"{' '.join(c):>18}" for c in columns))
    for track in sorted({t for cells in per_track.values() for t in cells}):
        cells = []
        for column in columns:
            hits, asked = per_track[column].get(track, (0, 0))
            cells.append(f"{hits / asked:9.3f} of {asked:5d}" if asked else f"{'-':>18}")
        print(f"  {track:<26} " + " ".join(cells))
    if "dev" in loaded or "train" in loaded:
        print("\nranking ablation (detect arm, state tracks; each line turns one rule off)")
        print(f"  {'ranking':<34} " + "  ".join(f"{s + ' ' + v + ' Cur@1':>17} {'Stale@5':>7}"
                                               for s in loaded for v in VIEWS))
        import neo_git.ranking as ranking

        for flag, label in ((None, "all current-state rules on"), ("RETRACTIONS_LAST", "retractions ranked by score"),
                            ("NEWER_WINS_TIES", "ties by id, not by age"),
                            ("NEWEST_IN_FAMILY", "related facts by score, not newest"),
                            ("ECHO_WEIGHT", "echoes of wh-questions not demoted")):
            kept = getattr(ranking, flag) if flag else None
            if flag:
                setattr(ranking, flag, 1.0 if flag == "ECHO_WEIGHT" else False)
            cells = []
            for timelines in loaded.values():
                for view in VIEWS:
                    m = evaluate(timelines, vectors, shipped, view, False)["state"].row()
                    cells.append(f"{m['Cur@1']:17.3f} {m['Stale@5']:7.3f}")
            if flag:
                setattr(ranking, flag, kept)
            print(f"  {label:<34} " + "  ".join(cells))
    print(f"\n{time.perf_counter() - started:.1f} s")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--splits", default="train,dev", help="comma-separated: train,dev (never the held-out ones)")
    parser.add_argument("--no-sweep", action="store_true", help="skip the calibration sweep on train")
    parser.add_argument("--floor", type=float, help="relevance floor of the F columns (default: the embedder's)")
    parser.add_argument("--through-store", action="store_true",
                        help="replay through FactStore.in_memory (add, invalidate, recall of the product) instead of "
                             "the dict replay; facts then get the time they are added, not the data's")
    args = parser.parse_args(argv)
    splits = [s for s in args.splits.split(",") if s]
    if any(s not in ("train", "dev") for s in splits):
        print("only the train and dev splits are replayed here", file=sys.stderr)
        return 2
    if not (args.data / "train.jsonl").is_file():
        print(f"no StateBench data in {args.data} (use --data)", file=sys.stderr)
        return 1
    return run(args.embedder, args.data, splits, not args.no_sweep, args.floor, args.through_store)


if __name__ == "__main__":
    sys.exit(main())
