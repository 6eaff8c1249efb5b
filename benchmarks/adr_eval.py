"""Replay real architecture decision records through git-neo's write policy.

    python benchmarks/adr_eval.py [--embedder hash] [--data FILE] [--show]

As `../shared/eval/adr/README.md` says: each repository's records go, in `seq` order,
into a fresh store (subject = title without its number, body = text, kind decision);
the store decides; its supersession edges are compared with the authors' own
("Superseded by …"). Reports precision, recall, the false-supersession rate (wrong
retirements per record added), review items per 100 adds (records added with
`possibly_supersedes` links: one question each in `git neo review`; and the candidate pairs
behind them), recall counting accepted review items (a person
accepting every right item), and what each piece of review evidence proposed. The
decisions are `FactStore.add`'s (see memory_replay.py).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from memory_replay import MemoryReplay, VectorMemo, shared_eval

from neo_git.embed import get_embedder
from neo_git.store import supersession
from neo_git.store.evidence import EVIDENCE
from neo_git.store.review.candidates import candidate_pairs
from neo_git.store.supersession import Thresholds

DEFAULT_DATA = shared_eval("adr") / "dev.jsonl"
# "ADR001: ", "ADR 004: ", "8. ", "004 — ", "0023 - ": the record's number, not its subject.
_NUMBER = re.compile(r"^\s*(?:ADR[\s-]*)?\d+\s*(?:[.:)]|[—–-])?\s*", re.IGNORECASE)


KEEP_NUMBERS = False   # --keep-numbers: subjects are the titles as written ("ADR003: Use GOV.UK Signon")


def subject_of(title: str) -> str:
    """The title without its number ("ADR003: Use GOV.UK Signon" → "Use GOV.UK Signon"), or as
    written with --keep-numbers."""
    if KEEP_NUMBERS:
        return title.strip()
    return _NUMBER.sub("", title).strip() or title.strip()


def replay_repo(repo: dict, vectors: VectorMemo, thresholds: Thresholds, show: bool = False,
                sources: bool = False) -> dict:
    """Counts for one repository replayed into a fresh store. Ids repeat inside a few repositories
    (two records numbered 0057), so edges are counted once each: the set of (old, new) ids found."""
    store = MemoryReplay(vectors, thresholds, kind="decision")
    truth = {(str(old), str(new)) for old, new in repo.get("edges", [])}
    adr_of: dict[str, str] = {}
    counts = {"added": 0, "fp": 0, "items": 0, "links": 0, "edges": len(truth),
              "certain": set(), "reviewed": set(), "evidence": Counter(), "asked": 0, "judged": set(),
              "store": store, "adr_of": adr_of, "proposed": [], "wider": []}
    seq_of: dict[str, int] = {}
    for adr in sorted(repo["adrs"], key=lambda a: a["seq"]):
        result = store.add(subject_of(adr["title"]), adr["text"], None, adr.get("date") or None,
                           adr.get("path") if sources else None)
        if result.duplicate:
            continue
        counts["added"] += 1
        adr_of[result.fact.id] = str(adr["id"])
        seq_of[result.fact.id] = adr["seq"]
        if result.superseded is not None:
            edge = (adr_of[result.superseded.id], str(adr["id"]))
            if edge in truth:
                counts["certain"].add(edge)
            else:
                counts["fp"] += 1
            if show:
                print(f"  {'ok ' if edge in truth else 'BAD'} {repo['repo']} {edge} ({result.rule}) "
                      f"{result.superseded.subject[:50]!r} -> {result.fact.subject[:50]!r}")
        counts["items"] += bool(result.possible)
        counts["links"] += len(result.possible)
        for link in result.possible:
            edge = (adr_of[link.id], str(adr["id"]))
            counts["proposed"].append((result.fact.id, link.id, link.evidence))
            if edge in truth:
                counts["reviewed"].add(edge)  # a person who accepts the right items finds it
            for name in link.evidence or ("(none)",):
                counts["evidence"][name, edge in truth] += 1
            if show:
                print(f"  {'ok ' if edge in truth else '-- '} review {repo['repo']} {edge} {list(link.evidence)} "
                      f"{store.facts[link.id].subject[:40]!r} -> {result.fact.subject[:40]!r}")
    # `git neo review --judge --wider` over the whole store once every record is in: the pairs it
    # would ask about, and the true edges among them (a judge right on every pair finds them all).
    # Records carry their order as their time (a day's records share a date; the command needs order).
    start = datetime(2000, 1, 1, tzinfo=timezone.utc)
    live = [fact.evolve(metadata={"created_at": (start + timedelta(seconds=seq_of[fact.id])).isoformat()})
            for fact in store.facts.values() if fact.is_valid and fact.id in seq_of]
    if len(live) > 1:
        matrix = np.stack([vectors(fact.text) for fact in live])
        for new, old, _ in candidate_pairs(live, matrix, thresholds, newest=len(live)):
            counts["asked"] += 1
            counts["wider"].append((new.id, old.id))
            edge = (adr_of[old.id], adr_of[new.id])
            if edge in truth:
                counts["judged"].add(edge)
    return counts


def replay_all(repos, vectors, thresholds, show=False, sources=False) -> dict:
    """Every repository replayed; totals, with the edges found as (repository, old, new) sets."""
    total = {"added": 0, "fp": 0, "items": 0, "links": 0, "edges": 0, "asked": 0, "certain": set(), "reviewed": set(),
             "judged": set(), "evidence": Counter(), "rows": []}
    for repo in repos:
        counts = replay_repo(repo, vectors, thresholds, show, sources)
        total["rows"].append((repo["repo"], counts))
        for key in ("added", "fp", "items", "links", "edges", "asked"):
            total[key] += counts[key]
        for key in ("certain", "reviewed", "judged"):
            total[key] |= {(repo["repo"], *edge) for edge in counts[key]}
        total["evidence"].update(counts["evidence"])
    return total


def summary(total) -> dict:
    """Precision, recall, FSR, items per 100 adds and recall counting accepted review items."""
    n, edges = max(total["added"], 1), max(total["edges"], 1)
    tp = len(total["certain"])
    found = total["certain"] | total["reviewed"]
    return {"P": tp / (tp + total["fp"]) if tp + total["fp"] else 1.0, "R": tp / edges, "FSR": total["fp"] / n,
            "items": 100 * total["items"] / n, "links": 100 * total["links"] / n, "R_review": len(found) / edges,
            "found": len(found), "tp": tp, "fp": total["fp"], "added": total["added"], "edges": total["edges"]}


def edge_ranks(repos, vectors: VectorMemo) -> Counter:
    """Where each true edge's older record ranks, by cosine, among all records written before the
    newer one (1 = the most similar): what a judge shown the top few candidates could find at most.
    Where ids repeat, the best-ranked pair of records with the edge's ids."""
    ranks: Counter = Counter()
    for repo in repos:
        adrs = sorted(repo["adrs"], key=lambda a: a["seq"])
        texts = [f"{subject_of(a['title'])}\n{a['text']}" if a["text"] else subject_of(a["title"]) for a in adrs]
        vectors.prime(texts)
        for old_id, new_id in {(str(old), str(new)) for old, new in repo.get("edges", [])}:
            best = None
            for at, new in enumerate(adrs):
                if str(new["id"]) != new_id or at == 0:
                    continue
                scores = np.stack([vectors(t) for t in texts[:at]]) @ vectors(texts[at])
                for before, old in enumerate(adrs[:at]):
                    if str(old["id"]) == old_id:
                        rank = int((scores > scores[before]).sum()) + 1
                        best = rank if best is None else min(best, rank)
            ranks[best] += 1   # None: the older record comes after the newer one
    return ranks


def run(embedder_name: str, data: Path, show: bool, sweep: bool, sources: bool = False) -> int:
    embedder = get_embedder(embedder_name)
    thresholds = Thresholds.of(embedder)
    vectors = VectorMemo(embedder)
    started = time.perf_counter()
    repos = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    print(f"embedder {embedder.id}: possible {thresholds.possible:.2f}, certain {thresholds.certain:.2f}; "
          f"long texts: the {supersession.LONG_CANDIDATES} most similar candidates, with evidence"
          + (" (the others as alternatives beside a change)" if supersession.ALTERNATIVES else "")
          + ("; records carry their path as source_file" if sources else "")
          + ("; subjects keep their record numbers" if KEEP_NUMBERS else ""))
    total = replay_all(repos, vectors, thresholds, show, sources)
    print(f"  {'repository':<42} {'added':>5} {'edges':>5} {'cert':>4} {'FP':>3} {'items':>5} {'links':>5} "
          f"{'found':>5}")
    for name, counts in total["rows"]:
        found = len(counts["certain"] | counts["reviewed"])
        print(f"  {name:<42} {counts['added']:5d} {counts['edges']:5d} {len(counts['certain']):4d} {counts['fp']:3d} "
              f"{counts['items']:5d} {counts['links']:5d} {found:5d}")
    m = summary(total)
    print(f"\nADR dev: precision {m['P']:.3f}  recall {m['R']:.3f}  false-supersession rate {m['FSR']:.4f} "
          f"({m['fp']} of {m['added']})\n  review items (questions) on {m['items']:.1f} of 100 adds ({m['links']:.1f} "
          f"candidate pairs per 100 adds, {m['links'] / max(m['items'], 1e-9):.1f} per question)  recall with review {m['R_review']:.3f} ({m['found']} of {m['edges']} edges: certain "
          f"or proposed)  ({time.perf_counter() - started:.1f} s)")
    wider = total["certain"] | total["reviewed"] | total["judged"]
    print(f"  review --judge --wider once all are in: {100 * total['asked'] / max(total['added'], 1):.1f} pairs judged "
          f"per 100 adds, {len(total['judged'])} true edges among them; recall with review if the judge were right "
          f"on every pair {len(wider) / max(total['edges'], 1):.3f} ({len(wider)} of {total['edges']})")
    ranks = edge_ranks(repos, vectors)
    top = [sum(n for rank, n in ranks.items() if rank is not None and rank <= k) for k in (1, 2, 3, 5)]
    print(f"  true edges whose older record is the newer one's most similar earlier record: {top[0]}; in its top "
          f"2: {top[1]}, top 3: {top[2]}, top 5: {top[3]} of {sum(ranks.values())} (what a judge shown that many "
          f"candidates could find at most)")
    print("\nwhat each piece of evidence proposed (links; one link may carry several)")
    for name in (*EVIDENCE, "(none)"):
        right, wrong = total["evidence"][name, True], total["evidence"][name, False]
        if right or wrong:
            print(f"  {name:<14} right {right:3d}  wrong {wrong:4d}")
    if sweep:
        print("\nlong candidates looked at (LONG_CANDIDATES): items per 100 adds, recall with review")
        kept = supersession.LONG_CANDIDATES
        for value in (1, 2, 3, 5):
            supersession.LONG_CANDIDATES = value
            swept = replay_all(repos, vectors, thresholds, sources=sources)
            m = summary(swept)
            wider = len(swept["certain"] | swept["reviewed"] | swept["judged"]) / max(swept["edges"], 1)
            print(f"  {value}: adds with an item {m['items']:5.1f}  items {m['links']:5.1f}  recall with review "
                  f"{m['R_review']:.3f}  (--wider: {100 * swept['asked'] / max(swept['added'], 1):5.1f} pairs judged per "
                  f"100 adds, a perfect judge's recall {wider:.3f})")
        supersession.LONG_CANDIDATES = kept
        print("\nthe other long candidates join a change's item as alternatives (ALTERNATIVES)")
        for value in (True, False):
            supersession.ALTERNATIVES = value
            m = summary(replay_all(repos, vectors, thresholds, sources=sources))
            print(f"  {'on ' if value else 'off'}: adds with an item {m['items']:5.1f}  items {m['links']:5.1f}  recall "
                  f"with review {m['R_review']:.3f}")
        supersession.ALTERNATIVES = True
        print("\nthe best long candidate also proposed at cosine ≥ X without evidence (LONG_BEST_COSINE)")
        for value in (0.6, 0.65, 0.7, 0.75, 0.8, 0.85):
            supersession.LONG_BEST_COSINE = value
            m = summary(replay_all(repos, vectors, thresholds, sources=sources))
            print(f"  {value:.2f}: adds with an item {m['items']:5.1f}  items {m['links']:5.1f}  recall with review "
                  f"{m['R_review']:.3f}")
        supersession.LONG_BEST_COSINE = None
        print(f"\nlong candidates from cosine X (the embedder's long_possible_threshold; shipped "
              f"{thresholds.long_floor:.2f}): calibrated as the lowest X, in 0.02 steps, at which at most 15% "
              f"of adds have an item (the issue-21 budget)")
        for value in [round(thresholds.possible + 0.02 * i, 2) for i in range(16)]:
            m = summary(replay_all(repos, vectors, replace(thresholds, long_possible=value), sources=sources))
            print(f"  {value:.2f}: adds with an item {m['items']:5.1f}  items {m['links']:5.1f}  recall with review "
                  f"{m['R_review']:.3f}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--show", action="store_true", help="print every supersession and review item")
    parser.add_argument("--sweep", action="store_true", help="also replay with 1, 2, 3, 5 long candidates")
    parser.add_argument("--source-files", action="store_true",
                        help="give each record its path as source_file (as an ingestion would; not the README's replay)")
    parser.add_argument("--keep-numbers", action="store_true",
                        help="subjects keep the titles' record numbers, as people often write them (not the README's replay)")
    args = parser.parse_args(argv)
    global KEEP_NUMBERS
    KEEP_NUMBERS = args.keep_numbers
    if not args.data.is_file():
        print(f"no decision records at {args.data} (use --data)", file=sys.stderr)
        return 1
    return run(args.embedder, args.data, args.show, args.sweep, args.source_files)


if __name__ == "__main__":
    sys.exit(main())
