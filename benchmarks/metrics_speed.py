"""Time analyze_source against bare tree-sitter parsing over the CPython stdlib.

    .venv/bin/python benchmarks/metrics_speed.py [ROOT] [--rounds N]

ROOT defaults to this interpreter's stdlib (site-packages left out). Files are
read into memory first; each round times the bare parse of every file, then the
full analysis; the best round of each is reported.
"""
from __future__ import annotations

import argparse
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from neo_git.health.metrics import analyze_source  # noqa: E402
from neo_git.health.parsing import parser  # noqa: E402


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
    bare = full = float("inf")
    for _ in range(options.rounds):
        started = time.perf_counter()
        for _, content in sources:
            python.parse(content)
        bare = min(bare, time.perf_counter() - started)
        started = time.perf_counter()
        for path, content in sources:
            analyze_source(path, content)
        full = min(full, time.perf_counter() - started)
    print(f"{len(sources)} files, {megabytes:.1f} MB")
    print(f"bare parse: {bare:.2f} s   analyze_source: {full:.2f} s   ratio: {full / bare:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
