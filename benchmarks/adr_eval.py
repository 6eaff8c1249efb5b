"""Replay real architecture decision records through git-neo's write policy.

    python benchmarks/adr_eval.py [--embedder hash] [--data FILE] [--show]

As `../shared/eval/adr/README.md` says: each repository's records go, in `seq` order,
into a fresh store (subject = title without its number, body = text, kind decision);
the store decides; its supersession edges are compared with the authors' own
("Superseded by …"). Reports precision, recall, the false-supersession rate (wrong
retirements per record added), the possible-supersession rate (records added with a
`possibly_supersedes` link) and how many true edges the store did not take but
proposed for review. The decisions are `FactStore.add`'s (see memory_replay.py).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_replay import MemoryReplay, VectorMemo, shared_eval  # noqa: E402

from neo_git.embed import get_embedder  # noqa: E402
from neo_git.store.supersession import Thresholds  # noqa: E402

DEFAULT_DATA = shared_eval("adr") / "dev.jsonl"
# "ADR001: ", "ADR 004: ", "8. ", "004 — ", "0023 - ": the record's number, not its subject.
_NUMBER = re.compile(r"^\s*(?:ADR[\s-]*)?\d+\s*(?:[.:)]|[—–-])?\s*", re.IGNORECASE)


def subject_of(title: str) -> str:
    """The title without its number ("ADR003: Use GOV.UK Signon" → "Use GOV.UK Signon")."""
    return _NUMBER.sub("", title).strip() or title.strip()


def replay_repo(repo: dict, vectors: VectorMemo, thresholds: Thresholds, show: bool = False) -> dict:
    """Counts for one repository replayed into a fresh store."""
    store = MemoryReplay(vectors, thresholds, kind="decision")
    truth = {(str(old), str(new)) for old, new in repo.get("edges", [])}
    adr_of: dict[str, str] = {}
    counts = {"added": 0, "tp": 0, "fp": 0, "possible": 0, "possible_true": 0, "edges": len(truth)}
    found: set[tuple[str, str]] = set()
    for adr in sorted(repo["adrs"], key=lambda a: a["seq"]):
        result = store.add(subject_of(adr["title"]), adr["text"], None, adr.get("date") or None)
        if result.duplicate:
            continue
        counts["added"] += 1
        adr_of[result.fact.id] = str(adr["id"])
        if result.superseded is not None:
            edge = (adr_of[result.superseded.id], str(adr["id"]))
            if edge in truth:
                counts["tp"] += 1
                found.add(edge)
            else:
                counts["fp"] += 1
            if show:
                print(f"  {'ok ' if edge in truth else 'BAD'} {repo['repo']} {edge} ({result.rule}) "
                      f"{result.superseded.subject[:50]!r} -> {result.fact.subject[:50]!r}")
        if result.possible:
            counts["possible"] += 1
            for link in result.possible:
                edge = (adr_of[link["id"]], str(adr["id"]))
                counts["possible_true"] += edge in truth and edge not in found
    return counts


def run(embedder_name: str, data: Path, show: bool) -> int:
    embedder = get_embedder(embedder_name)
    thresholds = Thresholds.of(embedder)
    vectors = VectorMemo(embedder)
    started = time.perf_counter()
    repos = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    total = {"added": 0, "tp": 0, "fp": 0, "possible": 0, "possible_true": 0, "edges": 0}
    print(f"embedder {embedder.id}: possible {thresholds.possible:.2f}, certain {thresholds.certain:.2f}")
    print(f"  {'repository':<42} {'added':>5} {'edges':>5} {'TP':>3} {'FP':>3} {'poss':>4} {'possTrue':>8}")
    for repo in repos:
        counts = replay_repo(repo, vectors, thresholds, show)
        for key in total:
            total[key] += counts[key]
        print(f"  {repo['repo']:<42} {counts['added']:5d} {counts['edges']:5d} {counts['tp']:3d} {counts['fp']:3d} "
              f"{counts['possible']:4d} {counts['possible_true']:8d}")
    tp, fp, n = total["tp"], total["fp"], max(total["added"], 1)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / total["edges"] if total["edges"] else 1.0
    review_recall = (tp + total["possible_true"]) / total["edges"] if total["edges"] else 1.0
    print(f"\nADR dev: precision {precision:.3f}  recall {recall:.3f}  false-supersession rate {fp / n:.4f} "
          f"({fp} of {total['added']})  possible-supersession rate {total['possible'] / n:.3f}  "
          f"recall with review {review_recall:.3f}  ({time.perf_counter() - started:.1f} s)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--show", action="store_true", help="print every supersession the store made")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"no decision records at {args.data} (use --data)", file=sys.stderr)
        return 1
    return run(args.embedder, args.data, args.show)


if __name__ == "__main__":
    sys.exit(main())
