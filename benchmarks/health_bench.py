"""Speed of `git neo health` on the CPython standard library.

Builds a throwaway repository from the stdlib of the running Python (~1,800
.py files, ~31 MB, no site-packages), then measures, as the median of several
runs each:

  bare      tree-sitter `parser.parse` of every blob's bytes, nothing else
  analyze   metrics.analyze_source on every blob (the per-file work, no git/cache)
  cold      full snapshot of HEAD with an empty cache (1 process, and --workers)
  warm      the same snapshot again, everything cached (its stored state), and with
            only the per-file cache (as after checking out an unrelated branch)
  one-file  snapshot of a new commit that changes one file (cache warm)

and prints a table with the targets: cold/bare <= 1.5, warm/cold <= 5 %,
one-file/cold <= 2 %. The targets are on wall time; CPU time (this process plus
its reaped children, i.e. the pool's workers) is printed next to it because on a
shared machine it varies less with other load.

    .venv/bin/python benchmarks/health_bench.py [--runs 3] [--keep]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pygit2

from benchmarks._common import cpu_seconds
from neo_git.health.measure import snapshot_commit
from neo_git.health.pygit2_sources import tree_entries
from neo_git.identity import repository_paths

SIGNATURE = pygit2.Signature("Bench", "bench@example.com", 1_700_000_000, 0)


def stdlib_files(root: Path | None = None) -> dict[str, bytes]:
    """Repository path -> bytes of every .py file under *root* (default: the stdlib;
    site-packages excluded)."""
    root = root or Path(sysconfig.get_paths()["stdlib"])
    files = {}
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in ("site-packages", "__pycache__"))
        for name in sorted(names):
            if name.endswith(".py"):
                path = Path(directory, name)
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def commit_tree(repo: pygit2.Repository, files: dict[str, bytes], message: str) -> pygit2.Oid:
    """Commit *files* as the whole tree on top of HEAD (without touching a work tree)."""
    index = pygit2.Index()
    for path, data in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(repo)
    parents = [] if repo.head_is_unborn else [repo.head.target]
    return repo.create_commit("HEAD", SIGNATURE, SIGNATURE, message, tree, parents)


CPU_TIMES: dict[str, list[float]] = {}   # measurement -> CPU seconds of each run


def timed(func, name: str | None = None) -> float:
    """Wall seconds of func(); its CPU seconds go to CPU_TIMES[name] when named."""
    start, start_cpu = time.perf_counter(), cpu_seconds()
    func()
    wall = time.perf_counter() - start
    if name is not None:
        CPU_TIMES.setdefault(name, []).append(cpu_seconds() - start_cpu)
    return wall


def clear_cache(repo: pygit2.Repository) -> None:
    for suffix in ("", "-wal", "-shm"):
        path = Path(str(repository_paths(repo).neo_dir / "health.sqlite") + suffix)
        if path.exists():
            path.unlink()


def clear_states(repo: pygit2.Repository) -> None:
    import sqlite3

    conn = sqlite3.connect(str(repository_paths(repo).neo_dir / "health.sqlite"))
    with conn:
        conn.execute("DELETE FROM snapshot_states")
    conn.close()


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=3, help="runs per measurement (median)")
    options.add_argument("--workers", type=int, default=2, help="processes for the parallel cold scan")
    options.add_argument("--keep", action="store_true", help="keep the repository and print its path")
    options.add_argument("--source", type=Path, default=None,
                         help="measure the .py files under this folder instead of the stdlib (e.g. an unpacked sympy)")
    args = options.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="neo-health-bench-"))
    try:
        files = stdlib_files(args.source)
        repo = pygit2.init_repository(str(workdir / "repo"), bare=True)
        commit_tree(repo, files, "stdlib")
        total_bytes = sum(len(d) for d in files.values())

        # bare tree-sitter: the same blobs, read up front, parse only
        from neo_git.health.metrics import analyze_source, language_for_path
        from neo_git.health.parsing import parser

        blobs = [repo[e.id].data for e in tree_entries(repo.head.peel(pygit2.Commit).tree)
                 if language_for_path(e.path) == "python"]
        python_parser = parser("python")
        analyze_source("warmup.py", b"def f():\n    pass\n")  # grammar + query compiled once

        def bare():
            for data in blobs:
                python_parser.parse(data)

        def analyze_only():
            for data in blobs:
                analyze_source("x.py", data)

        def cold(workers=1):
            clear_cache(repo)
            snapshot_commit(repo, workers=workers)

        def warm_files_only():
            clear_states(repo)        # per-file rows stay: what a checkout of another branch sees
            snapshot_commit(repo)

        victim = "argparse.py" if "argparse.py" in files else max(files, key=lambda p: len(files[p]))

        def one_file(run):
            files[victim] = files[victim] + f"\n# change {run}\n".encode()
            commit_tree(repo, files, f"change {run}")
            return timed(lambda: snapshot_commit(repo), "one-file commit")

        # Rounds interleave the measurements so that load from other processes on a
        # shared machine hits every row alike instead of skewing one of them.
        names = ["bare parse", "analyze_source", "cold scan", f"cold, {args.workers} procs",
                 "warm rescan", "warm, file cache", "one-file commit"]
        results: dict[str, list[float]] = {name: [] for name in names}
        load_before = os.getloadavg()[0]
        for run in range(args.runs):
            results["bare parse"].append(timed(bare, "bare parse"))
            results["analyze_source"].append(timed(analyze_only, "analyze_source"))
            results["cold scan"].append(timed(cold, "cold scan"))
            results["warm rescan"].append(timed(lambda: snapshot_commit(repo), "warm rescan"))
            results["one-file commit"].append(one_file(run))
            results["warm, file cache"].append(timed(warm_files_only, "warm, file cache"))
            results[f"cold, {args.workers} procs"].append(
                timed(lambda: cold(args.workers), f"cold, {args.workers} procs"))
        load_after = os.getloadavg()[0]

        snapshot = snapshot_commit(repo).to_dict()
        print(f"repository: {len(files)} .py files, {total_bytes / 1e6:.1f} MB "
              f"({snapshot['files']} analysed, skipped {snapshot['skipped'] or 'none'}, "
              f"{snapshot['cycles']} import cycles, {len(snapshot['god_files'])} god files); "
              f"median of {args.runs} interleaved runs; load average {load_before:.1f} -> {load_after:.1f} "
              f"on {os.cpu_count()} CPUs")
        print(f"{'measurement':<16} {'files':>6} {'MB':>6} {'seconds':>8} {'MB/s':>7} {'cpu s':>7}")
        medians, cpu = {}, {}
        for name, times in results.items():
            median = medians[name] = statistics.median(times)
            cpu[name] = statistics.median(CPU_TIMES[name])
            count = 1 if name == "one-file commit" else len(files)
            print(f"{name:<16} {count:>6} {total_bytes / 1e6:>6.1f} {median:>8.3f} "
                  f"{total_bytes / 1e6 / median:>7.1f} {cpu[name]:>7.3f}")
        cold_time = medians["cold scan"]
        print()
        parallel = medians[f"cold, {args.workers} procs"]
        for label, value, target in (
            ("cold / bare", cold_time / medians["bare parse"], "<= 1.5"),
            (f"cold {args.workers}p / bare", parallel / medians["bare parse"], "<= 1.5"),
            ("analyze / bare", medians["analyze_source"] / medians["bare parse"], "(metrics.py alone)"),
            ("warm / cold", medians["warm rescan"] / cold_time, "<= 5%"),
            ("warm files/cold", medians["warm, file cache"] / cold_time, "(no stored state)"),
            ("one-file / cold", medians["one-file commit"] / cold_time, "<= 2%"),
        ):
            shown = f"{value:.2f}x" if "bare" in label else f"{value:.1%}"
            print(f"{label:<16} {shown:>8}   target {target}")
        bare_cpu = cpu["bare parse"]
        print(f"cpu time: cold / bare {cpu['cold scan'] / bare_cpu:.2f}x, "
              f"analyze / bare {cpu['analyze_source'] / bare_cpu:.2f}x, "
              f"cold - analyze {cpu['cold scan'] - cpu['analyze_source']:.3f} s "
              f"(the scan's own work: blobs, cache, imports, cycles; medians of separate runs)")
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
