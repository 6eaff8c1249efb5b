"""Speed of `git neo report` on a 1,000-commit history of a 1,000-file repository.

    .venv/bin/python benchmarks/report_bench.py [--runs 3] [--commits 1000] [--files 1000] [--scratch DIR]

The fixture repository is built once with `git fast-import` (1,000 Python modules in
10 packages, importing each other downwards; each later commit rewrites 1–3 modules,
one module grows into a god file, a two-module import cycle comes and goes and a
three-module one stays), then given 150 facts on `refs/neo/facts` (supersessions,
retractions, successes), outcome notes on 120 commits and 60 agent turns. It is kept
under the scratch folder (default `$TMPDIR/neo-report-bench/`) keyed by its shape, and
copied afresh for every cold run. Measured, median of --runs:

  cold    `build_report` over --commits commits in a fresh copy: no health cache, no report
          caches (every commit measured, the fact ref walked from its root)
  warm    the same report again in that copy (everything from the caches)
  page    rendering the page alone from collected data (the floor under warm)

Targets (issue 23): cold <= 30 s, warm <= 2 s. CPU seconds are printed beside wall time:
on a shared machine they vary less.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import cpu_seconds, isolated_home, machine_info, median, table

FIXTURE_VERSION = "report-fixture-1"
START = 1_700_000_000          # first commit time (epoch seconds)
STEP = 4 * 3600                # hours between commits


def module_text(index: int, files: int, rng: random.Random, version: int, extra: str = "") -> str:
    """A Python module that imports a few lower-numbered modules and defines a few functions."""
    lines = [f'"""Module {index}, version {version}."""']
    for dep in sorted({rng.randrange(files) for _ in range(3)}):
        if dep < index:
            lines.append(f"from pkg{dep // 100} import mod{dep}")
    lines.append(extra)
    for number in range(rng.randrange(3, 9)):
        lines.append(f"def func_{number}(x):")
        indent = "    "
        for level in range(rng.randrange(1, 4)):
            lines.append(f"{indent}if x > {level}:")
            indent += "    "
        lines += [f"{indent}return x + {number}", "    return 0", ""]
    return "\n".join(lines) + "\n"


def fast_import_stream(files: int, commits: int, seed: int = 7) -> bytes:
    """The `git fast-import` input for the fixture's history on refs/heads/main."""
    rng = random.Random(seed)
    names = [f"pkg{i // 100}/mod{i}.py" for i in range(files)]
    contents = {name: module_text(i, files, rng, 0) for i, name in enumerate(names)}
    chunks: list[bytes] = []

    def data(text: str) -> None:
        raw = text.encode()
        chunks.append(f"data {len(raw)}\n".encode() + raw + b"\n")

    cycle_from, cycle_to, lasting_from = commits * 3 // 10, commits * 7 // 10, commits // 2
    for number in range(commits):
        when = START + number * STEP
        chunks.append(f"commit refs/heads/main\nmark :{number + 1}\n"
                      f"author Dev <dev@example.com> {when} +0000\ncommitter Dev <dev@example.com> {when} +0000\n"
                      .encode())
        changed: dict[str, str | None] = {}
        if number == 0:
            changed.update(contents)
            changed.update({f"pkg{p}/__init__.py": "" for p in range((files + 99) // 100)})
            message = "initial import"
        else:
            for _ in range(rng.randrange(1, 4)):
                index = rng.randrange(files)
                contents[names[index]] = module_text(index, files, rng, number)
                changed[names[index]] = contents[names[index]]
            if number % 7 == 0:   # one module keeps growing into a god file
                grow = "\n".join(f"CONSTANT_{k} = {k}" for k in range(number * 2))
                contents[names[1]] = module_text(1, files, random.Random(number), number, grow)
                changed[names[1]] = contents[names[1]]
            if number == cycle_from:
                changed["pkg0/cycle_a.py"] = "from pkg0 import cycle_b\n"
                changed["pkg0/cycle_b.py"] = "from pkg0 import cycle_a\n"
            if number == cycle_to:
                changed["pkg0/cycle_b.py"] = "VALUE = 1\n"
            if number == lasting_from:
                changed["pkg1/ring_a.py"] = "from pkg1 import ring_b\n"
                changed["pkg1/ring_b.py"] = "from pkg1 import ring_c\n"
                changed["pkg1/ring_c.py"] = "def late():\n    from pkg1 import ring_a\n    return ring_a\n"
            message = f"change {number}: " + ", ".join(sorted(changed))[:120]
        data(message)
        if number:
            chunks.append(f"from :{number}\n".encode())
        for path, text in changed.items():
            chunks.append(f"M 100644 inline {path}\n".encode())
            data(text or "")
    chunks.append(b"done\n")
    return b"".join(chunks)


def add_memory(repo: Path, commits: list[str]) -> None:
    """150 facts with supersessions and retractions, successes, outcome notes and agent turns."""
    from neo_git.agents.turns import finish_turn, record_injection, start_turn
    from neo_git.identity import open_repository, repository_paths
    from neo_git.store import Change, FactStore
    from neo_git.store.notes import add_records

    rng = random.Random(11)
    store = FactStore.open(repo, embedder="hash")
    store.init()
    kinds = ("decision", "pattern", "constraint", "architecture", "failure", "known_unknown", "review")
    ids = []
    for number in range(150):
        kind = kinds[number % len(kinds)]
        subject = f"{kind} rule {number}: {' '.join(rng.sample(['retry', 'cache', 'queue', 'lock', 'index'], 2))}"
        supersedes = ids[-3] if number % 17 == 0 and len(ids) > 3 else None
        fact = store.add(subject, f"Body of fact {number}, about module mod{number}.", kind=kind,
                         supersedes=supersedes, confidence=round(rng.uniform(0.2, 0.95), 2))
        ids.append(fact.id)
    for fact_id in ids[5:60:11]:
        try:
            store.invalidate(fact_id, reason="no longer true")
        except Exception:  # noqa: BLE001 - already retired by a supersession
            pass
    winners = ids[100:110]

    def plan(facts):
        changed = tuple(facts[i].evolve(metadata={"success_count": 1 + n % 4}) for n, i in enumerate(winners)
                        if i in facts)
        return Change(facts=changed, message="bench: successes")

    store.transact("project", plan)
    git_repo = open_repository(repo)
    for number, commit in enumerate(commits[::8][:120]):
        verdict = ("accepted", "modified", "independent")[number % 3]
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(START + commits.index(commit) * STEP))
        record = {"v": 1, "id": f"bench{number:011d}", "ts": stamp, "type": "outcome", "verdict": verdict,
                  "commit": commit, "file": "pkg0/mod1.py", "health": ("improvement", "neutral", "regression")[
                      number % 3], "facts": [{"id": winners[number % 10], "confidence": [0.5, 0.7],
                                              "success_count": [0, 1]}] if verdict == "accepted" else []}
        add_records(git_repo, commit, [record])
    paths = repository_paths(git_repo)
    now = time.time()
    for number in range(60):
        at = now - 6 * 86400 + number * 8000
        start_turn(paths, "claude", f"session{number // 6}", now=at)
        record_injection(paths, "claude", f"session{number // 6}", "prompt-submit",
                         [f"{n:016x}" for n in range(number % 7)], now=at + 1)
        finish_turn(paths, "claude", f"session{number // 6}", "completed" if number % 5 else "interrupted",
                    now=at + 60)


def fixture(scratch: Path, files: int, commits: int) -> Path:
    """The fixture repository under *scratch*, built on first use."""
    root = scratch / f"{FIXTURE_VERSION}-{files}f-{commits}c"
    repo = root / "repo"
    if (root / "ready").exists():
        return repo
    shutil.rmtree(root, ignore_errors=True)
    repo.mkdir(parents=True)
    started = time.perf_counter()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "fast-import", "--quiet", "--done"], cwd=repo, input=fast_import_stream(files, commits),
                   check=True)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
    listed = subprocess.run(["git", "rev-list", "--first-parent", "--reverse", "main"], cwd=repo, check=True,
                            capture_output=True, text=True).stdout.split()
    add_memory(repo, listed)
    for cache in (repo / ".git" / "neo").glob("health.sqlite*"):
        cache.unlink()
    (root / "ready").write_text("ok\n")
    print(f"built the fixture in {time.perf_counter() - started:.1f} s: {repo}")
    return repo


def fresh_copy(repo: Path, into: Path) -> Path:
    """A copy of the fixture with no health cache and no report caches."""
    target = into / "repo"
    shutil.copytree(repo, target, symlinks=True)
    neo = target / ".git" / "neo"
    for path in list(neo.glob("health.sqlite*")) + list((neo / "cache").glob("report-*")):
        path.unlink()
    return target


def isolate(home: Path) -> None:
    """Own HOME, NEO_HOME and git config, fixed identity (as the test suite does)."""
    isolated_home(home, NEO_EMBEDDER="hash")


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=3, help="runs per measurement (median)")
    options.add_argument("--commits", type=int, default=1000, help="commits in the fixture and the report")
    options.add_argument("--files", type=int, default=1000, help="Python modules in the fixture")
    options.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "neo-report-bench",
                         help="where the fixture is built once and kept")
    args = options.parse_args(argv)
    isolate(args.scratch / "home")

    import pygit2

    from neo_git.report.build import build_report, collect
    from neo_git.report.render import render

    source = fixture(args.scratch, args.files, args.commits)
    load_before = os.getloadavg()[0]
    rows: dict[str, list[tuple[float, float]]] = {"cold": [], "warm": [], "page": []}
    details = None
    for _run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="neo-report-run-") as tmp:
            repo = pygit2.Repository(str(fresh_copy(source, Path(tmp))))
            for name in ("cold", "warm"):
                wall, cpu = time.perf_counter(), cpu_seconds()
                details = build_report(repo, args.commits)
                rows[name].append((time.perf_counter() - wall, cpu_seconds() - cpu))
            data = collect(repo, args.commits)
            wall, cpu = time.perf_counter(), cpu_seconds()
            page = render(data)
            rows["page"].append((time.perf_counter() - wall, cpu_seconds() - cpu))
    load_after = os.getloadavg()[0]
    print(machine_info())
    print(f"fixture: {args.files:,} modules, {args.commits:,} commits; report: {details.commits:,} commits, "
          f"{details.facts} valid facts, {details.outcomes} outcomes, {details.turns} turns, page "
          f"{len(page) / 1e6:.1f} MB; median of {args.runs}; load average {load_before:.2f} -> {load_after:.2f}")
    targets = {"cold": 30.0, "warm": 2.0, "page": None}
    print(table(["measurement", "wall s", "cpu s", "target", "ok"],
                [[name, f"{median(w for w, _ in runs):.2f}", f"{median(c for _, c in runs):.2f}",
                  f"<= {targets[name]:.0f} s" if targets[name] else "-",
                  ("yes" if median(w for w, _ in runs) <= targets[name] else "NO") if targets[name] else "-"]
                 for name, runs in rows.items()]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
