"""Time analyze_source against bare tree-sitter parsing over the CPython stdlib.

    .venv/bin/python benchmarks/metrics_speed.py [ROOT] [--rounds N]

ROOT defaults to this interpreter's stdlib (site-packages left out). Files are
read into memory first; each round times the bare parse of every file, then the
full analysis, in CPU seconds of this process (wall time swings with whatever
else the machine runs); the best round of each is reported, and the median of
the per-round ratios.
"""
from __future__ import annotations

import argparse
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from neo_git.health.metrics import analyze_source
from neo_git.health.parsing import parser


def stdlib_sources(root: Path) -> list[tuple[str, bytes]]:
    """(path, content) of every .py file under root, site-packages excluded."""
    return [
        (str(path), path.read_bytes())
        for path in sorted(root.rglob("*.py"))
        if "site-packages" not in path.parts and path.is_file()
    ]


def main(argv: list[str] | None = None) -> int:
    """Print files, MB, bare parse seconds, analysis seconds and their ratio."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("root", nargs="?", default=sysconfig.get_paths()["stdlib"])
    args.add_argument("--rounds", type=int, default=3)
    options = args.parse_args(argv)
    sources = stdlib_sources(Path(options.root))
    megabytes = sum(len(content) for _, content in sources) / 1e6
    python = parser("python")
    analyze_source(*sources[0])  # load grammar and compile the query outside the timing
    bare_rounds, full_rounds = [], []
    for _ in range(options.rounds):
        started = time.process_time()
        for _, content in sources:
            python.parse(content)
        bare_rounds.append(time.process_time() - started)
        started = time.process_time()
        for path, content in sources:
            analyze_source(path, content)
        full_rounds.append(time.process_time() - started)
    bare, full = min(bare_rounds), min(full_rounds)
    ratios = sorted(f / b for f, b in zip(full_rounds, bare_rounds))
    print(f"{len(sources)} files, {megabytes:.1f} MB, {options.rounds} rounds (CPU seconds)")
    print(f"bare parse: {bare:.2f} s   analyze_source: {full:.2f} s   "
          f"ratio of best: {full / bare:.2f}x   median round ratio: {ratios[len(ratios) // 2]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
