"""What citations cost: the commit worker's re-verification and `git neo verify`.

    .venv/bin/python benchmarks/verify_bench.py [--files N] [--facts N] [--cited N] [--rounds N] [--keep]

Everything happens under a temporary folder (its own HOME, NEO_HOME, global git config),
removed at the end unless --keep.

* A repository of --files Python modules (default 1,000, eight functions each) and a project
  store of --facts facts (default 5,000, one bulk commit), --cited of which (default 2,000)
  cite a function of a module (resolved and fingerprinted like `git neo add --cite`).
* Worker: a commit touching 10 modules (two reformatted, eight with one statement changed),
  then the worker's citation step (`recheck_commits`: load the cited facts, re-verify those
  citing the 10 files, one commit on refs/neo/facts, the note) timed in-process; median of
  --rounds commits. Baseline in the same run: loading the store's facts (what any worker
  step pays first). Target (issue #18): <= 100 ms.
* `git-neo verify --json` as a process, after every cited module changed since it was cited
  (the worst case: each citation's blob differs, so each file is read): cold (no blob cache,
  `.git/neo/citations.sqlite` removed) and warm. Target: cold <= 2 s.
CPU time (user + system) is printed next to wall time: on a busy shared machine it is the
steadier figure.
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

from benchmarks._common import cpu_seconds, isolated_home, machine_info, median, ms, ratio, scratch_dir, table

VENV_BIN = str(Path(sys.executable).parent)
FUNCTIONS = 8


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=300).stdout


def module_path(i: int) -> str:
    return f"app/pkg{i % 20}/mod{i}.py"


def module(i: int, variant: int = 0, reformat: bool = False) -> str:
    """Module *i*; *variant* changes one statement of f0; *reformat* only its layout."""
    parts = [f"from app.pkg{(i + 1) % 20} import mod{i + 1}\n\n\n"]
    for j in range(FUNCTIONS):
        bound = j + (variant if j == 0 else 0)
        if reformat:
            parts.append(f"def f{j}(x,):  # f{j}\n  if x > {bound}:\n      return x - {j}\n\n  return x\n\n\n")
        else:
            parts.append(f"def f{j}(x):\n    if x > {bound}:\n        return x - {j}\n    return x\n\n\n")
    return "".join(parts)


def make_repo(root: Path, files: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for i in range(files):
        path = repo / module_path(i)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module(i))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    return repo


def seed_facts(repo: Path, count: int, cited: int, files: int) -> None:
    from neo_git.citations.resolve import Resolver
    from neo_git.facts import Fact, new_fact_id
    from neo_git.store import Change, FactStore

    store = FactStore.open(repo)
    store.init()
    resolver = Resolver(store.repo, store.paths.workdir)
    facts = []
    for i in range(count):
        metadata = {}
        if i < cited:
            metadata["citations"] = [resolver.resolve(f"{module_path(i % files)}:f{(i // files) % FUNCTIONS}")]
        facts.append(Fact.from_dict({"id": new_fact_id(), "subject": f"Rule {i} about module {i % 200}",
                                     "body": f"Keep module {i % 200} free of side effects at import ({i}).",
                                     "kind": "pattern", "scope": "project", "project_id": store.project_id,
                                     "metadata": metadata}))
    store.transact("project", lambda _: Change(facts=tuple(facts), message=f"seed {count} facts"))


def bench_worker(repo: Path, files: int, rounds: int) -> tuple[list[float], list[float], list[float], int]:
    """(recheck wall, recheck CPU, store-load wall, citations checked per round)."""
    from neo_git.citations.recording import recheck_commits
    from neo_git.identity import open_repository
    from neo_git.outcomes.processing import changed_files
    from neo_git.store import FactStore

    rng = random.Random(18)
    walls, cpus, loads, checked = [], [], [], 0
    for round_ in range(rounds):
        touched = rng.sample(range(min(files, 1000)), 10)
        for n, i in enumerate(touched):
            (repo / module_path(i)).write_text(module(i, reformat=True) if n < 2 else module(i, variant=round_ + 1))
        git(repo, "commit", "-qam", f"round {round_}")
        r = open_repository(repo)
        commit = r.head.peel(__import__("pygit2").Commit)
        changes = changed_files(r, commit)
        started, cpu = time.perf_counter(), cpu_seconds()
        transitions, error = recheck_commits(r, [(str(commit.id), changes)])
        walls.append(time.perf_counter() - started)
        cpus.append(cpu_seconds() - cpu)
        assert error is None, error
        checked = max(checked, len(transitions))
        started = time.perf_counter()
        FactStore(r).list()
        loads.append(time.perf_counter() - started)
    return walls, cpus, loads, checked


def verify_process(repo: Path, env: dict) -> tuple[float, float]:
    """(wall, CPU) of one `git-neo verify --json`."""
    before = os.times()
    started = time.perf_counter()
    subprocess.run([f"{VENV_BIN}/git-neo", "verify", "--json"], cwd=repo, env=env, check=True,
                   capture_output=True, stdin=subprocess.DEVNULL, timeout=600)
    wall = time.perf_counter() - started
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000, help="Python modules (default 1,000)")
    parser.add_argument("--facts", type=int, default=5000, help="facts in the project store (default 5,000)")
    parser.add_argument("--cited", type=int, default=2000, help="facts citing a function (default 2,000)")
    parser.add_argument("--rounds", type=int, default=7, help="worker commits and verify runs (default 7)")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    with scratch_dir("neo-verify-bench-", args.keep) as root:
        return _run(args, root)


def _run(args: argparse.Namespace, root: Path) -> int:
    home = root / "home"
    isolated_home(home, PATH=VENV_BIN + os.pathsep + os.environ.get("PATH", ""), OPENBLAS_NUM_THREADS="1")
    os.environ.pop("NEO_DISABLE", None)
    print(machine_info())
    started = time.perf_counter()
    repo = make_repo(root, args.files)
    seed_facts(repo, args.facts, args.cited, args.files)
    print(f"repository: {args.files:,} modules; store: {args.facts:,} facts, {args.cited:,} citing a function "
          f"(set up in {time.perf_counter() - started:.1f} s)")

    walls, cpus, loads, checked = bench_worker(repo, args.files, args.rounds)
    print()
    print(table(["worker, a commit touching 10 modules", "median", "max", "CPU (median)", "vs baseline"], [
        ["recheck_commits (verify + 1 facts commit + note)", ms(median(walls)), ms(max(walls)), ms(median(cpus)),
         ratio(median(walls), median(loads))],
        [f"baseline: load the {args.facts:,} facts", ms(median(loads)), ms(max(loads)), "", "1.0×"],
    ]))
    print(f"(up to {checked} citation state changes recorded per commit)")

    # every cited module changes since it was cited: each citation's blob differs from HEAD's
    for i in range(args.files):
        (repo / module_path(i)).write_text(module(i, reformat=i % 2 == 0, variant=0 if i % 2 == 0 else 99))
    git(repo, "commit", "-qam", "touch every module (no worker ran)")
    env = dict(os.environ)
    cache = repo / ".git" / "neo" / "citations.sqlite"
    verify_process(repo, env)     # records the states once; the runs below only read
    cold, cold_cpu, warm, warm_cpu = [], [], [], []
    for _ in range(args.rounds):
        for suffix in ("", "-wal", "-shm"):
            Path(str(cache) + suffix).unlink(missing_ok=True)
        wall, cpu = verify_process(repo, env)
        cold.append(wall)
        cold_cpu.append(cpu)
        wall, cpu = verify_process(repo, env)
        warm.append(wall)
        warm_cpu.append(cpu)
    print()
    print(table([f"git-neo verify --json ({args.cited:,} citations, every cited file changed)", "median", "max",
                 "CPU (median)", "vs warm"], [
        ["cold (no blob cache)", ms(median(cold)), ms(max(cold)), ms(median(cold_cpu)), ratio(median(cold), median(warm))],
        ["warm", ms(median(warm)), ms(max(warm)), ms(median(warm_cpu)), "1.0×"],
    ]))
    print(f"\ntargets: worker <= 100 ms (measured {ms(median(walls))}); verify cold <= 2 s (measured {ms(median(cold))})")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
