"""Issue 35's store-size targets, each as a ratio to its baseline measured in the same run.

    .venv/bin/python benchmarks/cap_cost_bench.py [--runs 7] [--python OTHER_VENV/bin/python] [--keep]

Two stores at the project cap (store_bench.py's generated facts, hash embedder, caches warm):
"small" holds 500 facts, all valid; "large" holds 50,000 of which the same 500 are valid and
49,500 retired. Per run, alternating which store goes first, in new processes (GNU time):

* cold `git-neo add` (a new fact; the scope is at its cap, so every add evicts one): large / small,
  target ≤ 1.5×;
* cold `git-neo add --supersedes <8-digit prefix>` at 50,000: / the plain add at 500;
* cold `git-neo recall Q --json`: large / small, target ≤ 1.2× (retired facts cost reads nothing).

`--python` runs the same commands with another install's `git-neo` (e.g. main's venv) for a
before/after; the machine is shared, so medians of alternated runs and same-run ratios are what
count, and the load average is printed with them.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import store_bench as sb
from benchmarks._common import median, scratch_dir, table
from benchmarks.scale_ab import timed_process


def build(root: Path, name: str, total: int, valid: int) -> sb.Site:
    """A store of *total* generated facts of which the first *valid* stay valid; caches warmed."""
    from neo_git.fact_schema import Invalidation
    from neo_git.facts import FactScope
    from neo_git.store.base import Change

    site = sb.Site(root, name)
    store = site.open()
    store.init()
    facts = sb.generate_facts(total, 35, store.project_id, store.org_id)  # same seed: same 500 valid facts
    retired = Invalidation(reason="evicted", at="2026-01-01T00:00:00+00:00", detail="cap_cost_bench: retired")
    facts = [f if i < valid else f.evolve(is_valid=False, metadata={"invalidation": retired})
             for i, f in enumerate(facts)]
    store.backends[FactScope.PROJECT].transact(lambda _: Change(tuple(facts), f"bench: {total} facts, {valid} valid"))
    return site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--python", default=sys.executable, help="the python whose git-neo is measured")
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args(argv)
    exe = str(Path(options.python).with_name("git-neo"))
    with scratch_dir("neo-cap-cost-", options.keep) as root:
        sb.isolate(root)
        sites = {"small": build(root, "small", 500, 500), "large": build(root, "large", 50_000, 500)}
        env = {name: {**os.environ, "NEO_HOME": str(site.home)} for name, site in sites.items()}
        for name, site in sites.items():   # parse caches, vector caches, bytecode
            for _ in range(2):
                timed_process([exe, "recall", "warm up", "--json"], site.repo, env[name])
        valid = [f.id for f in sites["large"].open().list(scope="project")]
        results: dict[str, list[float]] = {key: [] for key in
                                           ("add small", "add large", "supersedes large", "recall small",
                                            "recall large", "rss small", "rss large")}
        rng = random.Random(7)
        before = " ".join(f"{x:.2f}" for x in os.getloadavg())
        for run in range(options.runs):
            order = ("small", "large") if run % 2 == 0 else ("large", "small")
            for name in order:
                site = sites[name]
                subject, body, kind = sb.fact_text(rng)
                added = timed_process([exe, "add", "-q", f"{subject} {run}", body, "--kind", kind], site.repo, env[name])
                results[f"add {name}"].append(added["wall"])
                recalled = timed_process([exe, "recall", sb.queries(run, 1)[0], "--json"], site.repo, env[name])
                results[f"recall {name}"].append(recalled["wall"])
                results[f"rss {name}"].append(recalled["rss"])
                if name == "large":
                    target = valid[run]
                    subject, body, kind = sb.fact_text(rng)
                    replaced = timed_process([exe, "add", "-q", f"{subject} replaces", body, "--supersedes", target[:8]],
                                             site.repo, env[name])
                    results["supersedes large"].append(replaced["wall"])
            print(f"  run {run + 1}/{options.runs} (load {' '.join(f'{x:.2f}' for x in os.getloadavg())})",
                  file=sys.stderr)
        after = " ".join(f"{x:.2f}" for x in os.getloadavg())
        m = {key: median(values) for key, values in results.items()}
        rows = [
            ["cold add at the cap", f"{m['add small'] * 1e3:,.0f} ms", f"{m['add large'] * 1e3:,.0f} ms",
             f"{m['add large'] / m['add small']:.2f}×", "≤ 1.5×"],
            ["cold add --supersedes (vs add at 500)", f"{m['add small'] * 1e3:,.0f} ms",
             f"{m['supersedes large'] * 1e3:,.0f} ms", f"{m['supersedes large'] / m['add small']:.2f}×", "-"],
            ["cold recall", f"{m['recall small'] * 1e3:,.0f} ms", f"{m['recall large'] * 1e3:,.0f} ms",
             f"{m['recall large'] / m['recall small']:.2f}×", "≤ 1.2×"],
            ["  its max RSS", f"{m['rss small'] / 2**20:,.0f} MB", f"{m['rss large'] / 2**20:,.0f} MB",
             f"{m['rss large'] / m['rss small']:.2f}×", "-"],
        ]
        print(f"cap_cost_bench: {exe}; {options.runs} alternated runs; medians; "
              "500 = 500 valid facts, 50,000 = the same 500 valid + 49,500 retired")
        print(table(["measure", "500 facts", "50,000 facts", "ratio", "target"], rows))
        print(f"load average 1/5/15 min: {before} -> {after} (2 cores shared with other work)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
