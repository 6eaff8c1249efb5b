"""Every target of the write policy (issue 32, item 1) in one table, one column per embedder.

    python benchmarks/write_policy_eval.py [--embedders hash,minilm] [--show rules-heading]

Rows, each replayed through the store's own decisions (`memory_replay.py`: `plan_many`, the
index, the embedder's thresholds, the body guard):

* **coexisting rules** (`../shared/eval/rules/dev.jsonl`, its README's replay): each file's rules
  added in order to a fresh store, kind `decision`, subject = the heading the rule stands under
  ("heading") or the rule's first eight words ("title"), body = the rule as written. Every rule of
  a file holds at once, so every retirement is wrong (unless the two texts are identical after
  lower-casing and dropping punctuation); a review question is an add whose fact carries
  `possibly_supersedes` links. Targets: retirements ≤ 0.5% of adds, questions ≤ 10%.
* **StateBench dev** without brutal_realistic, key and value views (`statebench_eval.py`'s
  replay, detect arm): RwR = supersession recall counting accepted review items (≥ 0.95), FSR =
  wrong retirements per fact added (≤ 0.01).
* **ADR dev** (`adr_eval.py`'s replay): wrong retirements per record added (≤ 0.01).

Nothing here is fitted: the rules are stated in `store/supersession.py` and `store/evidence.py`.
The leave-one-out block replays each group (rule file, StateBench track, ADR repository) alone:
with no fitted constant a held-out group is decided exactly as in the pooled run, so the pooled
figure *is* the cross-validated one; the block prints the worst group of each row, the spread a
held-out set built the same way can expect.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import adr_eval
import statebench_eval
from memory_replay import MemoryReplay, VectorMemo, shared_eval

from neo_git.embed import get_embedder
from neo_git.store.supersession import Thresholds

RULES = shared_eval("rules") / "dev.jsonl"
STATEBENCH = shared_eval("statebench") / "dev.jsonl"
ADR = shared_eval("adr") / "dev.jsonl"
EMBEDDERS = {"hash": "hash", "minilm": "fastembed:sentence-transformers/all-MiniLM-L6-v2"}
TITLE_WORDS = 8
TARGETS = {"retire": 0.005, "questions": 0.10, "RwR": 0.95, "FSR": 0.01, "adr": 0.01}
_PUNCT = re.compile(r"[\W_]+", re.UNICODE)


def _same_text(a: str, b: str) -> bool:
    return " ".join(_PUNCT.sub(" ", a.casefold()).split()) == " ".join(_PUNCT.sub(" ", b.casefold()).split())


def rules_replay(files, vectors: VectorMemo, thresholds: Thresholds, mode: str, show: bool = False) -> dict:
    """{file: [adds, wrong retirements, questions]} for the coexisting rules, subjects as *mode*."""
    out = {}
    for entry in files:
        store = MemoryReplay(vectors, thresholds, kind="decision")
        counts = [0, 0, 0]
        for rule in entry["rules"]:
            text = rule["text"]
            subject = rule["subject"] if mode == "heading" else " ".join(text.split()[:TITLE_WORDS])
            result = store.add(subject, text)
            if result.duplicate:
                continue
            counts[0] += 1
            old = result.superseded
            if old is not None and not _same_text(old.text, result.fact.text):
                counts[1] += 1
                if show:
                    print(f"  RETIRE {entry['repo']} ({result.rule}) {old.body[:70]!r}\n      -> {text[:70]!r}")
            if result.possible:
                counts[2] += 1
                if show:
                    for link in result.possible:
                        print(f"  ASK {entry['repo']} {list(link.evidence)} {link.similarity:.3f} "
                              f"{store.facts[link.id].body[:60]!r}\n      -> {text[:60]!r}")
        out[f"{entry['repo']}:{entry['path']}"] = counts
    return out


def statebench_replay(timelines, vectors: VectorMemo, thresholds: Thresholds, view: str) -> dict:
    """{track: Tally} for StateBench timelines without brutal_realistic (detect arm, no queries)."""
    out: dict = defaultdict(statebench_eval.Tally)
    for timeline in timelines:
        if timeline.track == statebench_eval.BRUTAL:
            continue
        out[timeline.track].merge(statebench_eval.replay(timeline, vectors, thresholds, view, oracle=False,
                                                         queries=False))
    return out


def adr_replay(repos, vectors: VectorMemo, thresholds: Thresholds) -> dict:
    """{repository: [added, wrong retirements, edges found certain or proposed, edges]}."""
    out = {}
    for repo in repos:
        counts = adr_eval.replay_repo(repo, vectors, thresholds)
        out[repo["repo"]] = [counts["added"], counts["fp"], len(counts["certain"] | counts["reviewed"]),
                             counts["edges"]]
    return out


def group_counts(vectors: VectorMemo, thresholds: Thresholds, data: dict, show: str | None = None) -> dict:
    """Raw counts per group: {("rules", file): {"heading": [adds, retired, asked], "title": [...]},
    ("statebench", track): {"key": Tally, "value": Tally}, ("adr", repository): [added, wrong,
    found, edges]}."""
    groups: dict = defaultdict(dict)
    for mode in ("heading", "title"):
        for name, counts in rules_replay(data["rules"], vectors, thresholds, mode, show == f"rules-{mode}").items():
            groups["rules", name][mode] = counts
    for view in statebench_eval.VIEWS:
        for track, tally in statebench_replay(data["statebench"], vectors, thresholds, view).items():
            groups["statebench", track][view] = tally
    for repo, counts in adr_replay(data["adr"], vectors, thresholds).items():
        groups["adr", repo]["adr"] = counts
    return dict(groups)


def rows_of(groups: dict, keys) -> dict:
    """The table's rows pooled over the groups *keys* (value, worst single group)."""
    rows: dict = {}
    rules = [groups[k] for k in keys if k[0] == "rules"]
    for mode in ("heading", "title"):
        counts = [g[mode] for g in rules]
        adds = max(sum(c[0] for c in counts), 1)
        rows[f"rules {mode}s: retire"] = (sum(c[1] for c in counts) / adds, max(c[1] / max(c[0], 1) for c in counts))
        rows[f"rules {mode}s: questions"] = (sum(c[2] for c in counts) / adds, max(c[2] / max(c[0], 1) for c in counts))
        rows[f"rules {mode}s: retired/asked/adds"] = (sum(c[1] for c in counts), sum(c[2] for c in counts), adds)
    for view in statebench_eval.VIEWS:
        tallies = [groups[k][view] for k in keys if k[0] == "statebench"]
        pooled = statebench_eval.Tally()
        for tally in tallies:
            pooled.merge(tally)
        row, per = pooled.row(), [t.row() for t in tallies]
        rows[f"StateBench {view}: RwR"] = (row["RwR"], min(r["RwR"] for r in per))
        rows[f"StateBench {view}: FSR"] = (row["FSR"], max(r["FSR"] for r in per))
        rows[f"StateBench {view}: items/100"] = (row["Items"], max(r["Items"] for r in per))
    repos = [groups[k]["adr"] for k in keys if k[0] == "adr"]
    added = max(sum(r[0] for r in repos), 1)
    rows["ADR: wrong retirements/add"] = (sum(r[1] for r in repos) / added, max(r[1] / max(r[0], 1) for r in repos))
    rows["ADR: recall with review"] = (sum(r[2] for r in repos) / max(sum(r[3] for r in repos), 1),
                                       min((r[2] / r[3] for r in repos if r[3]), default=1.0))
    return rows


def measure(embedder_name: str, data: dict, show: str | None = None) -> dict:
    """Every row for one embedder: pooled figures and, per row, the worst single group."""
    embedder = get_embedder(embedder_name)
    vectors, thresholds = VectorMemo(embedder), Thresholds.of(embedder)
    groups = group_counts(vectors, thresholds, data, show)
    return {"id": embedder.id, **rows_of(groups, list(groups)), "_vectors": vectors, "_thresholds": thresholds}


# The choices made while looking at these dev sets (store/supersession.py, store/evidence.py), each
# with its alternatives: the leave-one-out block re-makes them without the held-out group.
CHOICES = {"CERTAIN_QUESTION": (True, False), "TOPIC_QUESTION": (False, True), "NEW_VALUE_SHARE": (1 / 2, 1 / 3, 2 / 3)}


def _set(name: str, value) -> None:
    from neo_git.store import evidence, supersession

    setattr(supersession if hasattr(supersession, name) else evidence, name, value)
    for cached in (evidence._new_number, evidence._alignment, evidence._number_swap):
        cached.cache_clear()


def _met(rows: dict) -> int:
    return sum(verdict(name, value[0]).endswith("ok") for name, value in rows.items() if verdict(name, value[0]))


def cross_validate(vectors: VectorMemo, thresholds: Thresholds, data: dict) -> dict:
    """Leave one group out (a rule file, a StateBench track, an ADR repository): make each choice of
    CHOICES on the other groups (most targets met, then fewest rule questions, then the shipped
    value), replay the held-out group with it, and pool the held-out groups' counts."""
    import itertools

    shipped = {name: values[0] for name, values in CHOICES.items()}
    settings = [dict(zip(CHOICES, combo)) for combo in itertools.product(*CHOICES.values())]
    runs = []
    for setting in settings:
        for name, value in setting.items():
            _set(name, value)
        runs.append(group_counts(vectors, thresholds, data))
    for name, value in shipped.items():
        _set(name, value)
    keys = list(runs[0])
    held: dict = {}
    picked = defaultdict(int)
    for out in keys:
        rest = [k for k in keys if k != out]

        def rank(i: int, rest=rest):
            rows = rows_of(runs[i], rest)
            asked = rows["rules headings: questions"][0] + rows["rules titles: questions"][0]
            return (-_met(rows), round(asked, 6), i)   # settings[0] is the shipped one

        best = min(range(len(settings)), key=rank)
        picked[best] += 1
        held[out] = runs[best][out]
    return {"rows": rows_of(held, keys), "picked": {str(settings[i]): n for i, n in picked.items()},
            "shipped_rows": rows_of(runs[0], keys)}


TARGET_OF = {"retire": ("≤", TARGETS["retire"]), "questions": ("≤", TARGETS["questions"]),
             "RwR": ("≥", TARGETS["RwR"]), "FSR": ("≤", TARGETS["FSR"]),
             "wrong retirements/add": ("≤", TARGETS["adr"])}


def verdict(name: str, value: float) -> str:
    for key, (sign, bound) in TARGET_OF.items():
        if name.endswith(key):
            ok = value <= bound if sign == "≤" else value >= bound
            return f"{sign} {bound:g} {'ok' if ok else 'MISSED'}"
    return ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedders", default="hash,minilm", help="comma-separated: hash, minilm or embedder names")
    parser.add_argument("--show", choices=("rules-heading", "rules-title"), help="print every retirement and question")
    parser.add_argument("--cross-validate", action="store_true",
                        help="also the leave-one-out figures: each choice of CHOICES re-made without the held-out group")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    data = {"rules": [json.loads(line) for line in RULES.read_text(encoding="utf-8").splitlines() if line.strip()],
            "statebench": statebench_eval.load(STATEBENCH),
            "adr": [json.loads(line) for line in ADR.read_text(encoding="utf-8").splitlines() if line.strip()]}
    columns = [measure(EMBEDDERS.get(name, name), data, args.show) for name in args.embedders.split(",") if name]
    if args.cross_validate:
        for column in columns:
            result = cross_validate(column["_vectors"], column["_thresholds"], data)
            column.update({f"LOO {name}": value for name, value in result["rows"].items()})
            print(f"{column['id']}: leave-one-out picked {result['picked']}")
    names = [name for name in columns[0] if name != "id" and not name.startswith("_")]
    print(f"\n{'row (pooled; worst single group in brackets)':<44} " + " ".join(f"{c['id'][:34]:>34}" for c in columns))
    for name in names:
        cells = []
        for column in columns:
            if name.endswith("retired/asked/adds"):
                cells.append("{} retired, {} asked of {}".format(*column[name]).rjust(34))
                continue
            value, worst = column[name]
            cells.append(f"{value:8.4f} [{worst:6.4f}] {verdict(name, value):<14}".rjust(34))
        print(f"{name:<44} " + " ".join(cells))
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
