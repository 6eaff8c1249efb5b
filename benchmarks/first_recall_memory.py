"""Issue 35's bounded memory: peak RSS of a store's first recall (every fact embedded) and of a
warm cold-process recall, with the default (built-in hash) embedder, against other installs.

    .venv/bin/python benchmarks/first_recall_memory.py [--sizes 5000 50000] [--runs 3] \
        [--python OTHER_VENV/bin/python ...] [--root DIR]

Each store (store_bench.py's generated facts, all valid) is built once and copied for each
install (each keeps its own parse cache and vector cache). Per run, for each install in
alternating order, under GNU time:

* first recall: the vector cache removed, then `git-neo recall Q --json` (embeds every fact);
  target ≤ 200 MB at 50,000 facts;
* warm recall: the same command again, every vector cached (a new process).

Medians per install, and whether every run of every install returned the same answer (the ids
of each layer, scores, relevance; not the access times) for the same question. `--root` keeps
the stores there and reuses them on the next run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import store_bench as sb
from benchmarks._common import median, table
from benchmarks.scale_ab import timed_process

TARGET_MB = 200


def site_for(root: Path, size: int) -> Path:
    """The folder of a built store of *size* facts under *root* (built now if missing)."""
    folder = root / f"s{size}"
    if not (folder / "built").exists():
        shutil.rmtree(folder, ignore_errors=True)
        site = sb.Site(root, f"s{size}")
        sb.populate(site, size, 7)
        (folder / "built").write_text("ok\n")
    return folder


class Install:
    """One git-neo install with its own copy of a store."""

    def __init__(self, name: str, python: str, built: Path, root: Path) -> None:
        self.name = name
        self.exe = str(Path(python).with_name("git-neo"))
        self.dir = root / "copies" / f"{built.name}-{name}"
        if not self.dir.exists():
            shutil.copytree(built, self.dir, symlinks=True)
            for cache in (self.dir / "repo" / ".git" / "neo" / "cache").glob("facts-*"):
                cache.unlink()   # each install builds its own parse cache (formats may differ)
        self.repo = self.dir / "repo"
        self.env = {**os.environ, "NEO_HOME": str(self.dir / "neo_home"),
                    "PYTHONPYCACHEPREFIX": str(root / f"pycache-{name}")}

    def recall(self, query: str, cold_vectors: bool) -> dict:
        if cold_vectors:
            shutil.rmtree(self.dir / "neo_home" / "cache" / "vectors", ignore_errors=True)
        return timed_process([self.exe, "recall", query, "--json"], self.repo, self.env)


def answer_of(stdout: bytes) -> str:
    """What a recall answered, without what changes from one run to the next (access times)."""
    answer = json.loads(stdout)
    kept = {layer: [f["id"] for f in answer[layer]]
            for layer in ("constraints", "valid_facts", "invalidated", "known_unknowns", "questioned")}
    kept.update({key: answer[key] for key in ("scores", "relevance", "tokens", "floor", "untrusted")})
    return json.dumps(kept, sort_keys=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 50000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--python", action="append", default=[], help="another install to measure alongside")
    parser.add_argument("--root", type=Path, help="keep the stores here (reused when present)")
    options = parser.parse_args(argv)
    root = options.root or Path(tempfile.mkdtemp(prefix="neo-first-recall-"))
    root.mkdir(parents=True, exist_ok=True)
    pythons = {"this": sys.executable, **{f"other{i + 1}": p for i, p in enumerate(options.python)}}
    try:
        sb.isolate(root)
        rows = []
        for size in options.sizes:
            built = site_for(root, size)
            installs = [Install(name, python, built, root) for name, python in pythons.items()]
            query = sb.queries(7, 1)[0]
            for install in installs:   # parse cache, bytecode
                install.recall(query, cold_vectors=False)
            first: dict[str, list] = {i.name: [] for i in installs}
            warm: dict[str, list] = {i.name: [] for i in installs}
            answers: dict[str, set] = {i.name: set() for i in installs}
            before = " ".join(f"{x:.2f}" for x in os.getloadavg())
            for run in range(options.runs):
                for install in (installs if run % 2 == 0 else installs[::-1]):
                    cold = install.recall(query, cold_vectors=True)
                    again = install.recall(query, cold_vectors=False)
                    first[install.name].append(cold)
                    warm[install.name].append(again)
                    for out in (cold, again):
                        answers[install.name].add(answer_of(out["out"]))
                print(f"  {size:,} facts, run {run + 1}/{options.runs} "
                      f"(load {' '.join(f'{x:.2f}' for x in os.getloadavg())})", file=sys.stderr)
            after = " ".join(f"{x:.2f}" for x in os.getloadavg())
            same = len(set().union(*answers.values())) == 1
            for install in installs:
                f, w = first[install.name], warm[install.name]
                rows.append([f"{size:,}", install.name,
                             f"{median(r['rss'] for r in f) / 2**20:,.0f} MB",
                             f"{median(r['wall'] for r in f):,.1f} s / {median(r['cpu'] for r in f):,.1f} s",
                             f"{median(r['rss'] for r in w) / 2**20:,.0f} MB",
                             f"{median(r['wall'] for r in w) * 1e3:,.0f} / {median(r['cpu'] for r in w) * 1e3:,.0f} ms",
                             "yes" if same else "NO", f"{before} -> {after}"])
        print("first_recall_memory: " + "; ".join(f"{n} = {p}" for n, p in pythons.items())
              + f"; {options.runs} alternated runs, medians; target first recall ≤ {TARGET_MB} MB at 50,000")
        print(table(["facts", "install", "first recall RSS", "wall / CPU", "warm recall RSS", "wall / CPU",
                     "same answer", "load 1/5/15 min"], rows))
    finally:
        if options.root is None:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"kept {root}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
