"""Speed and ranking quality of `git neo construct search` over the shipped pattern library.

    python benchmarks/construct_bench.py [--repeat 5] [--embedder hash]

Speed (medians; the machine is shared, so compare the ratios):
  * cold: first search in a new process whose vector cache is empty (embeds every pattern);
  * cached: first search in a new process whose vector cache already holds the patterns;
  * warm: later searches in the same process (the index is in memory) — the < 100 ms target;
  * the CLI end to end (`python -m neo_git construct search …`, a new interpreter each time);
  * baselines: embedding the query alone, and `import numpy` in a new process (which every
    first search pays), measured in the same run.
Quality: top-1 and mean reciprocal rank on benchmarks/construct_queries.json for the
embedder alone, the lexical signal alone and the blend actually used.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine_info, median, ms, ratio, table, timed  # noqa: E402

QUERIES = json.loads((ROOT / "benchmarks" / "construct_queries.json").read_text(encoding="utf-8"))

FIRST_SEARCH = """
import time, sys
t0 = time.perf_counter()
from neo_git.patterns import search_patterns
hits = search_patterns({query!r}, k=3, embedder={embedder!r})
print(time.perf_counter() - t0)
"""


IMPORT_NUMPY = """
import time
t0 = time.perf_counter()
import numpy
print(time.perf_counter() - t0)
"""


def first_search(neo_home: str, embedder: str, query: str) -> float:
    """Seconds for imports plus the first search in a fresh interpreter using *neo_home*'s cache."""
    env = {**os.environ, "NEO_HOME": neo_home, "PYTHONPATH": str(ROOT)}
    script = FIRST_SEARCH.format(query=query, embedder=embedder) if query else IMPORT_NUMPY
    proc = subprocess.run([sys.executable, "-c", script],
                          capture_output=True, text=True, env=env, check=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    return float(proc.stdout.strip().splitlines()[-1])


def cli_search(neo_home: str, embedder: str, query: str) -> float:
    """Seconds for `python -m neo_git construct search QUERY` end to end."""
    env = {**os.environ, "NEO_HOME": neo_home, "PYTHONPATH": str(ROOT), "NEO_EMBEDDER": embedder}
    seconds, _ = timed(lambda: subprocess.run(
        [sys.executable, "-m", "neo_git", "construct", "search", query], capture_output=True, env=env,
        check=True, timeout=300, stdin=subprocess.DEVNULL, cwd=tempfile.gettempdir()))
    return seconds


def speed(repeat: int, embedder_name: str) -> None:
    from neo_git.embed import get_embedder
    from neo_git.patterns import load_library, search_patterns

    query = "break an import cycle between two packages"
    cold, cached, cli, numpy_only = [], [], [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as home:
            numpy_only.append(first_search(home, embedder_name, ""))
            cold.append(first_search(home, embedder_name, query))
            cached.append(first_search(home, embedder_name, query))
            cli.append(cli_search(home, embedder_name, query))
    with tempfile.TemporaryDirectory() as home:
        os.environ["NEO_HOME"] = home
        embedder = get_embedder(embedder_name)
        search_patterns(query, embedder=embedder)  # fill the cache and the in-memory index
        texts = [q["q"] for q in QUERIES["queries"] + QUERIES["paraphrases"]]
        warm = [timed(lambda t=t: search_patterns(t, k=3, embedder=embedder))[0] for t in texts * repeat]
        base = [timed(lambda t=t: embedder.embed([t]))[0] for t in texts * repeat]
    n = len(load_library().patterns)
    print(f"speed ({embedder.id}, {n} patterns, {repeat} runs, medians)")
    baseline = median(base)
    rows = [("embed the query alone (baseline)", ms(baseline, 2), "1.0×"),
            ("warm search, same process", ms(median(warm), 2), ratio(median(warm), baseline)),
            ("new process: `import numpy` alone", ms(median(numpy_only)), ratio(median(numpy_only), baseline)),
            ("first search, new process, cache filled", ms(median(cached)), ratio(median(cached), baseline)),
            ("first search, new process, empty cache", ms(median(cold)), ratio(median(cold), baseline)),
            ("`construct search` CLI end to end", ms(median(cli)), ratio(median(cli), baseline))]
    print(table(("what", "median", "vs baseline"), rows))
    print(f"warm search slowest of {len(warm)}: {ms(max(warm), 2)} (target: under 100 ms)")


def quality(embedder_name: str) -> None:
    from neo_git.embed import get_embedder
    from neo_git.patterns import load_library
    from neo_git.patterns.search import LEXICAL_WEIGHT, rank

    patterns = list(load_library().patterns.values())
    embedder = get_embedder(embedder_name)
    rows = []
    for label, weight in (("embedder only", 0.0), (f"blend (lexical {LEXICAL_WEIGHT})", LEXICAL_WEIGHT),
                          ("lexical only", 1.0)):
        row = [label]
        for name in ("queries", "paraphrases"):
            top1, rr = 0, 0.0
            for item in QUERIES[name]:
                ids = [h.pattern.id for h in rank(item["q"], patterns, embedder, lexical_weight=weight)]
                position = min(ids.index(w) for w in item["want"]) + 1
                top1 += position == 1
                rr += 1 / position
            row += [f"{top1}/{len(QUERIES[name])}", f"{rr / len(QUERIES[name]):.3f}"]
        rows.append(row)
    print(f"\nranking quality ({embedder.id})")
    print(table(("signal", "queries top-1", "MRR", "paraphrases top-1", "MRR"), rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--embedder", default="hash", help="hash, fastembed[:model] (must be cached), auto")
    args = parser.parse_args()
    print(machine_info())
    speed(args.repeat, args.embedder)
    quality(args.embedder)


if __name__ == "__main__":
    main()
