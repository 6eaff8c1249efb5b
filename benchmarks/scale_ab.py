"""A/B of the costs that grow with the store: this checkout against another git-neo install,
runs alternated in one script so both sides see the same machine load.

    .venv/bin/python benchmarks/scale_ab.py --base-python /path/to/other/venv/bin/python \
        [--sizes 500 5000 50000] [--runs 9] [--keep]

Each store (store_bench.py's generated facts, hash embedder, vector cache warmed) is built once
and copied for each side (each keeps its own parse cache and vector cache, in its own format).
Then, per run, for each side in alternating order:

* cold `git-neo recall Q --json` (a new process; under GNU time: wall, user+system CPU, max RSS);
* the first add of a process: `store.add_detailed` timed inside a fresh process after its imports
  (as store_bench.py's "first add"), wall and CPU of that call;
* in-process recall: a fresh process opens the store, recalls once, then the median of 12 recalls;
* cold recall after a teammate's push: 40 new facts committed on refs/neo/facts behind the store's
  back (as a sync's merge brings them, ~40 of the 256 folders changed), then one cold
  `git-neo recall` (wall, max RSS): it reads the changed folders from git and journals them.

Medians per side, the ratio new/base, and the load average before and after each size.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import store_bench as sb
from benchmarks._common import median, scratch_dir, table

# Both snippets get their texts as JSON (argv[2]): nothing of this checkout is imported on the base side.
ADD = r"""
import json, sys, time
from neo_git.facts import FactScope
from neo_git.store import FactStore
import numpy, pygit2, neo_git.store.policy, neo_git.store.index, neo_git.store.supersession
store = FactStore.open(sys.argv[1])
store.caps[FactScope.PROJECT] = 10**7
subject, body, kind = json.loads(sys.argv[2])
cpu = time.process_time()
started = time.perf_counter()
store.add_detailed(subject, body, kind=kind)
print(json.dumps({"wall": time.perf_counter() - started, "cpu": time.process_time() - cpu}))
"""

INPROC = r"""
import json, sys, time
from neo_git.store import FactStore
qs = json.loads(sys.argv[2])
store = FactStore.open(sys.argv[1])
started = time.perf_counter()
store.recall(qs[0])
first = time.perf_counter() - started
store.recall(qs[1])
times = []
for q in qs[2:]:
    started = time.perf_counter()
    store.recall(q)
    times.append(time.perf_counter() - started)
times.sort()
print(json.dumps({"first": first, "median": times[len(times) // 2]}))
"""


def timed_process(cmd: list[str], cwd: Path, env: dict) -> dict:
    """Wall, CPU (user + system) and max RSS of one process, from GNU time."""
    with tempfile.NamedTemporaryFile(suffix=".time") as report:
        started = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", report.name, *cmd], cwd=cwd, env=env,
                              capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[:3]} failed: {proc.stderr.decode(errors='replace')[-2000:]}")
        _elapsed, user, system, rss = Path(report.name).read_text().split()[-4:]
    return {"wall": wall, "cpu": float(user) + float(system), "rss": int(rss) * 1024, "out": proc.stdout}


def python_json(python: str, code: str, args: list[str], cwd: Path, env: dict) -> dict:
    proc = subprocess.run([python, "-c", code, *args], cwd=cwd, env=env, capture_output=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode(errors="replace")[-2000:])
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


class Side:
    """One install (its python and git-neo) with its own copy of the store."""

    def __init__(self, name: str, python: str, site: sb.Site, root: Path) -> None:
        self.name = name
        self.python = python
        self.exe = str(Path(python).with_name("git-neo"))
        self.dir = root / f"{site.dir.name}-{name}"
        shutil.copytree(site.dir, self.dir, symlinks=True)
        self.repo = self.dir / "repo"
        self.env = {**os.environ, "NEO_HOME": str(self.dir / "neo_home"),
                    "PYTHONPYCACHEPREFIX": str(root / f"pycache-{name}")}
        for cache in (self.repo / ".git" / "neo" / "cache").glob("facts-*"):
            cache.unlink()   # each side builds its own parse cache (formats differ)

    def cold_recall(self, query: str) -> dict:
        return timed_process([self.exe, "recall", query, "--json"], self.repo, self.env)

    def first_add(self, seed: int) -> dict:
        subject, body, kind = sb.fact_text(random.Random(seed))
        text = json.dumps([f"{subject} {self.name} {seed}", body, kind])
        return python_json(self.python, ADD, [str(self.repo), text], self.repo, self.env)

    def after_push(self, query: str, seed: int, project_id: str, org_id: str) -> dict:
        teammate_push(self.repo, sb.generate_facts(TEAMMATE_FACTS, seed, project_id, org_id))
        return self.cold_recall(query)

    def inprocess(self, seed: int) -> dict:
        return python_json(self.python, INPROC, [str(self.repo), json.dumps(sb.queries(seed, 14))], self.repo, self.env)


TEAMMATE_FACTS = 40


def teammate_push(repo: Path, facts) -> None:
    """Commit *facts* on refs/neo/facts with pygit2, as a sync's merge brings a teammate's facts."""
    import pygit2

    from neo_git.store.ref_facts import fact_path

    git_repo = pygit2.Repository(str(repo))
    ref = git_repo.references["refs/neo/facts"]
    tip = git_repo[ref.target]
    index = pygit2.Index()
    index.read_tree(tip.tree)
    for fact in facts:
        blob = git_repo.create_blob(json.dumps(fact.to_dict(), sort_keys=True, indent=2).encode("utf-8"))
        index.add(pygit2.IndexEntry(fact_path(fact.id), blob, pygit2.GIT_FILEMODE_BLOB))
    who = pygit2.Signature("Teammate", "mate@example.com")
    ref.set_target(git_repo.create_commit(None, who, who, f"teammate: {len(facts)} facts",
                                          index.write_tree(git_repo), [tip.id]))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-python", required=True, help="python of the install to compare with (e.g. main's)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 5000, 50000])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args(argv)
    with scratch_dir("neo-scale-ab-", options.keep) as root:
        sb.isolate(root)
        print(f"A/B: base {options.base_python} vs new {sys.executable}; {options.runs} alternated runs per size")
        rows = []
        for n in options.sizes:
            site = sb.Site(root, f"n{n}")
            sb.populate(site, n, seed=n)
            sb.first_recall(site, "warm the vector cache")
            sides = [Side("base", options.base_python, site, root), Side("new", sys.executable, site, root)]
            for side in sides:  # each builds its parse cache, compiles its bytecode
                side.cold_recall("warm up")
                side.cold_recall("warm up again")
            before = load()
            results = {side.name: {"cold": [], "cold_cpu": [], "rss": [], "add": [], "add_cpu": [], "inproc": [],
                                   "pushed": [], "pushed_rss": []} for side in sides}
            opened = site.open()
            ids = (opened.project_id, opened.org_id)
            qs = sb.queries(3000 + n, options.runs)
            for run in range(options.runs):
                for side in (sides if run % 2 == 0 else sides[::-1]):
                    got = results[side.name]
                    cold = side.cold_recall(qs[run])
                    got["cold"].append(cold["wall"])
                    got["cold_cpu"].append(cold["cpu"])
                    got["rss"].append(cold["rss"])
                    add = side.first_add(run)
                    got["add"].append(add["wall"])
                    got["add_cpu"].append(add["cpu"])
                    got["inproc"].append(side.inprocess(4000 + run)["median"])
                    pushed = side.after_push(qs[run], 5000 + run, *ids)
                    got["pushed"].append(pushed["wall"])
                    got["pushed_rss"].append(pushed["rss"])
                print(f"  [{n:,}] run {run + 1}/{options.runs} (load {load()})", file=sys.stderr)
            after = load()
            for metric, label, unit in (("cold", "cold recall wall", "ms"), ("cold_cpu", "cold recall cpu", "ms"),
                                        ("rss", "cold recall max RSS", "MB"), ("add", "first add wall", "ms"),
                                        ("add_cpu", "first add cpu", "ms"), ("inproc", "in-process recall", "ms"),
                                        ("pushed", "cold recall after a push", "ms"),
                                        ("pushed_rss", "  its max RSS", "MB")):
                base, new = median(results["base"][metric]), median(results["new"][metric])
                scale = 2**20 if unit == "MB" else 1e-3
                rows.append([f"{n:,}", label, f"{base / scale:,.1f} {unit}", f"{new / scale:,.1f} {unit}",
                             f"{new / base:.2f}×", f"{before} → {after}"])
        print(table(["facts", "measure (median)", "base", "new", "new/base", "load 1/5/15 min"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
