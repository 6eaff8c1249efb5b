"""Issue 36: what signing every facts commit with git-neo's own key costs per write.

    .venv/bin/python benchmarks/sign_cost_bench.py [--runs 11] [--adds 40] [--facts 500] [--keep]

Two sites holding the same generated facts (store_bench's, hash embedder, caches warm), one
under the defaults (signed with the per-user key, which is made before any timing), one with
`neo.autoSign false`. Measured through the paths users and agents take:

* `git-neo add` in a new process (GNU time: wall, and CPU including ssh-keygen), alternating
  which site goes first each run; median of *runs* per side and the ratio signed / unsigned;
* `FactStore.add` in one warm process (an agent's MCP server, a hook server), *adds* per side
  in alternated blocks; median ms per add, the ratio and the difference (the signing itself);
* `ssh-keygen -Y sign -n git` of a commit-sized buffer alone, for scale.

The machine is shared: medians of alternated runs and same-run ratios are what count; the load
average is printed with them.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import store_bench as sb
from benchmarks._common import cpu_seconds, median, scratch_dir, table
from benchmarks.scale_ab import timed_process

SIDES = ("signed", "unsigned")


def build(root: Path, name: str, facts: int) -> sb.Site:
    """A site with *facts* generated facts (the same seed on both sides)."""
    site = sb.Site(root, name)
    sb.populate(site, facts, 36)
    if name == "unsigned":
        sb.run(["git", "config", "neo.autoSign", "false"], cwd=site.repo)
    return site


def in_process_adds(site: sb.Site, texts: list[tuple[str, str, str]], tag: str) -> tuple[list[float], list[float]]:
    """(wall seconds, CPU seconds with ssh-keygen's) of each `FactStore.add` of *texts* on one open
    store (loaded by a first add)."""
    store = site.open()
    store.add(f"warm-up {tag}", "loads the store before timing", kind="decision")
    walls, cpus = [], []
    for i, (subject, body, kind) in enumerate(texts):
        cpu = cpu_seconds()
        started = time.perf_counter()
        store.add(f"{subject} {tag} {i}", body, kind=kind)
        walls.append(time.perf_counter() - started)
        cpus.append(cpu_seconds() - cpu)
    return walls, cpus


def ssh_keygen_alone(key: Path, runs: int) -> float:
    """Median seconds of `ssh-keygen -Y sign -n git` over a 400-byte buffer."""
    buffer = b"tree " + b"0" * 40 + b"\nparent " + b"1" * 40 + b"\n" + b"x" * 300
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(["ssh-keygen", "-Y", "sign", "-n", "git", "-f", str(key)], input=buffer, capture_output=True,
                       timeout=30, check=True)
        times.append(time.perf_counter() - started)
    return median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="cold `git-neo add` runs per side")
    parser.add_argument("--adds", type=int, default=40, help="warm `FactStore.add` calls per side")
    parser.add_argument("--facts", type=int, default=500, help="facts in each store")
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args(argv)
    exe = str(Path(sys.executable).with_name("git-neo"))
    with scratch_dir("neo-sign-cost-", options.keep) as root:
        sb.isolate(root)
        sites = {name: build(root, name, options.facts) for name in SIDES}
        env = {name: {**os.environ, "NEO_HOME": str(site.home)} for name, site in sites.items()}
        rng = random.Random(36)
        for name, site in sites.items():   # parse caches, vector caches, bytecode; the key is made here
            for i in range(2):
                subject, body, kind = sb.fact_text(rng)
                timed_process([exe, "add", "-q", f"{subject} warm {i}", body, "--kind", kind], site.repo, env[name])
        key = sites["signed"].home / "keys" / "signing_ed25519"
        if not key.exists():
            raise RuntimeError(f"the signed side made no key at {key}")
        if "gpgsig" not in sb.run(["git", "cat-file", "commit", "refs/neo/facts"], cwd=sites["signed"].repo).stdout.decode():
            raise RuntimeError("the signed side's commit is not signed")
        if "gpgsig" in sb.run(["git", "cat-file", "commit", "refs/neo/facts"], cwd=sites["unsigned"].repo).stdout.decode():
            raise RuntimeError("the unsigned side's commit is signed")
        wall: dict[str, list[float]] = {name: [] for name in SIDES}
        cpu: dict[str, list[float]] = {name: [] for name in SIDES}
        before = " ".join(f"{x:.2f}" for x in os.getloadavg())
        for run in range(options.runs):
            subject, body, kind = sb.fact_text(rng)   # the same new fact on both sides
            for name in (SIDES if run % 2 == 0 else SIDES[::-1]):
                added = timed_process([exe, "add", "-q", f"{subject} {run}", body, "--kind", kind],
                                      sites[name].repo, env[name])
                wall[name].append(added["wall"])
                cpu[name].append(added["cpu"])
            print(f"  run {run + 1}/{options.runs} (load {' '.join(f'{x:.2f}' for x in os.getloadavg())})",
                  file=sys.stderr)
        warm: dict[str, list[float]] = {name: [] for name in SIDES}
        warm_cpu: dict[str, list[float]] = {name: [] for name in SIDES}
        block = max(1, options.adds // 4)
        for i in range(0, options.adds, block):
            texts = [sb.fact_text(rng) for _ in range(min(block, options.adds - i))]
            for name in (SIDES if (i // block) % 2 == 0 else SIDES[::-1]):
                os.environ["NEO_HOME"] = str(sites[name].home)
                walls, cpus = in_process_adds(sites[name], texts, f"block {i}")
                warm[name] += walls
                warm_cpu[name] += cpus
        alone = ssh_keygen_alone(key, max(options.runs, 11))
        after = " ".join(f"{x:.2f}" for x in os.getloadavg())
        m = {name: (median(wall[name]), median(cpu[name]), median(warm[name]), median(warm_cpu[name]))
             for name in SIDES}

        def row(label: str, i: int) -> list[str]:
            signed, unsigned = m["signed"][i], m["unsigned"][i]
            return [label, f"{signed * 1e3:,.1f} ms", f"{unsigned * 1e3:,.1f} ms", f"{signed / unsigned:.2f}×",
                    f"{(signed - unsigned) * 1e3:+,.1f} ms"]

        print(f"sign_cost_bench: {exe}; {options.facts} facts per store; {options.runs} alternated cold runs and "
              f"{options.adds} warm adds per side; medians")
        print(table(["measure", "auto-signed", "neo.autoSign false", "ratio", "difference"], [
            row("`git-neo add`, new process: wall", 0),
            row("  its CPU (with ssh-keygen)", 1),
            row("FactStore.add, warm process: wall", 2),
            row("  its CPU (with ssh-keygen)", 3),
        ]))
        print(f"ssh-keygen -Y sign -n git alone: {alone * 1e3:,.1f} ms")
        print(f"load average 1/5/15 min: {before} -> {after} (2 cores shared with other work)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
