"""What the git hooks cost: `git commit` plain, with git-neo's hooks, and with the pre-commit framework.

    .venv/bin/python benchmarks/hook_bench.py [--commits N] [--baseline REV] [--files N] [--facts N] [--keep]

Everything happens under a temporary folder (its own HOME, NEO_HOME, global git config,
PRE_COMMIT_HOME) that is removed at the end unless --keep. Needs `pre-commit` in this venv.

* A repository with --files Python modules (default 1,000) and a project store of --facts
  facts (default 5,000), HEAD measured once (`git neo health`), copied once per setup so
  that each setup keeps the history its own hooks made.
* `git commit` of --staged modules (default 5, new content each time), round-robin over the
  setups (every setup sees the same load), --commits counted per setup after --warmup:
  no hooks; `git neo install`; the pre-commit framework with one no-op hook (`entry: true`,
  `language: system`, neo-guard's `files:`), and with no-op hooks at the stages git-neo's
  hooks use (pre-commit; post-commit and post-merge); the framework with git-neo's
  published hooks (`.pre-commit-hooks.yaml` as `repo: local`, `language: system`: the
  entries run from this venv, as from the framework's own); with --baseline REV the two
  git-neo setups again with the code at REV (extracted from this repository, put first on
  PYTHONPATH and PATH). Detached workers are waited for before the next commit (no process
  left with its working folder in the scratch tree), so they never compete with it. The
  README-only commits (nothing for the guard: the shim decides in sh) of issue 8 are two
  more setups unless --no-readme.
  Printed: median, p90 and CPU (user + system of the reaped processes: git, the hooks it
  waited for, never a detached worker) per setup, the cost each adds over the plain commit,
  and issue 35's two ratios of added costs: native hooks / the framework's one no-op hook
  (target <= 0.5), framework + git-neo / the framework's no-op hooks at the same stages
  (target <= 1.2); the load average before and after.
* The guard process alone (`git-neo hook pre-commit` on the same 5-file staged change,
  HEAD's state stored) and its breakdown: interpreter start (`python -c pass`), imports (the
  modules a guard run loads, imported in a fresh interpreter) and the check, timed in that
  interpreter after the imports. --guard-runs 0 skips it.
* The worker per commit, on the --facts store with a warm health cache: each commit adopts
  a recorded suggestion relying on two facts. Timed in-process (`process_commits`) and as
  the process the shim starts (`git-neo hook post-commit SHA`, run synchronously:
  interpreter start included). --worker-commits 0 skips it.
Other targets: a README-only commit costs <= 15 ms over no hook (issue 8), the worker
finishes in < 1 s.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import isolated_home, machine_info, median, ms, ratio, scratch_dir, table

VENV_BIN = str(Path(sys.executable).parent)
ROOT = Path(__file__).resolve().parents[1]


def p90(values: list[float]) -> float:
    """The 90th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.9 * len(ordered)) - 1))]


def child_cpu() -> float:
    """CPU seconds (user + system) of every reaped child process so far: git and the hooks it
    waited for (a detached worker is not one of them)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def git(repo: Path, *args: str, env: dict | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env=env, stdin=subprocess.DEVNULL, timeout=120).stdout


def make_repo(root: Path, files: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for i in range(files):
        pkg = repo / "app" / f"pkg{i % 10}"
        pkg.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def f{j}(x):\n    if x > {j}:\n        return x - {j}\n    return x\n\n\n" for j in range(8))
        (pkg / f"mod{i}.py").write_text(f"from app.pkg{(i + 1) % 10} import mod{(i + 1) % files}\n\n\n" + body)
    (repo / "README.md").write_text("# bench\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    return repo


def seed_facts(repo: Path, count: int) -> list[str]:
    from neo_git.facts import Fact, new_fact_id
    from neo_git.store import Change, FactStore

    store = FactStore.open(repo)
    facts = [Fact.from_dict({"id": new_fact_id(), "subject": f"Rule {i} about module {i % 200}",
                             "body": f"Keep module {i % 200} free of side effects at import ({i}).",
                             "kind": "pattern", "scope": "project", "project_id": store.project_id})
             for i in range(count)]
    store.transact("project", lambda _: Change(facts=tuple(facts), message=f"seed {count} facts"))
    return [f.id for f in facts[:50]]


def wait_for_worker(neo_dir: Path, timeout: float = 60.0) -> None:
    """Until the queue is empty and nobody holds the processing lock."""
    import fcntl

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        queue = neo_dir / "queue.jsonl"
        if not queue.exists() or queue.stat().st_size == 0:
            lock = neo_dir / "outcomes.lock"
            if not lock.exists():
                return
            with open(lock, "a") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return
                except OSError:
                    pass
        time.sleep(0.01)


FRAMEWORK_FILES = r"(?i)\.(py|pyi|js|jsx|mjs|cjs|ts|mts|cts|tsx|go|rs|java)$"   # neo-guard's `files:`


def noop_config(stages: bool) -> dict:
    """The framework with no-op hooks: one at pre-commit for the staged languages (as neo-guard
    runs), and with *stages* one more at post-commit and post-merge (as neo-outcomes runs)."""
    hooks = [{"id": "noop", "name": "no-op", "entry": "true", "language": "system", "pass_filenames": False,
              "files": FRAMEWORK_FILES, "stages": ["pre-commit"]}]
    if stages:
        hooks.append({"id": "noop-after", "name": "no-op after", "entry": "true", "language": "system",
                      "pass_filenames": False, "always_run": True, "stages": ["post-commit", "post-merge"]})
    return {"repos": [{"repo": "local", "hooks": hooks}]}


def neo_config(published: Path) -> dict:
    """git-neo's published hooks (`.pre-commit-hooks.yaml`) as local hooks run from PATH: the
    framework's `language: python` would run the same entries from a virtualenv of its own."""
    import yaml

    hooks = [dict(hook, language="system") for hook in yaml.safe_load(published.read_text())]
    return {"repos": [{"repo": "local", "hooks": hooks}]}


class Setup:
    """One way of committing, in a repository of its own (a copy of the seeded one), so that
    each keeps the history its own hooks made: `bin` goes first on PATH."""

    def __init__(self, key: str, label: str, repo: Path, env: dict, change: str = "source") -> None:
        self.key, self.label, self.repo, self.env, self.change = key, label, repo, env, change
        self.times: list[float] = []
        self.cpu: list[float] = []


def make_setups(root: Path, seed: Path, env: dict, args, baseline: Path | None) -> list[Setup]:
    """Copies of *seed* with: no hooks, `git neo install`, the framework with no-op hooks (one
    hook; git-neo's stages), the framework with git-neo's hooks, and the same two git-neo
    setups with the --baseline code; plus the README-only commits of issue 8."""
    import yaml

    def copy(key: str) -> Path:
        repo = root / f"repo-{key}"
        shutil.copytree(seed, repo, symlinks=True)
        return repo

    def framework(repo: Path, config: dict, types: list[str], run_env: dict) -> None:
        (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        git(repo, "add", ".pre-commit-config.yaml", env=run_env)
        git(repo, "commit", "-qm", "framework config", "--no-verify", env=run_env)
        subprocess.run([str(Path(VENV_BIN) / "pre-commit"), "install", *[a for t in types for a in ("-t", t)]],
                       cwd=repo, env=run_env, check=True, capture_output=True, timeout=120)

    def native(repo: Path, run_env: dict) -> None:
        subprocess.run(["git-neo", "install"], cwd=repo, env=run_env, check=True, capture_output=True, timeout=120)

    setups = [Setup("plain", "plain commit (no hooks)", copy("plain"), env)]
    setups.append(Setup("native", "git-neo native hooks (`git neo install`)", copy("native"), env))
    native(setups[-1].repo, env)
    setups.append(Setup("noop", "framework, one no-op hook (pre-commit)", copy("noop"), env))
    framework(setups[-1].repo, noop_config(False), ["pre-commit"], env)
    setups.append(Setup("noop-stages", "framework, no-op hooks at git-neo's stages", copy("noop-stages"), env))
    framework(setups[-1].repo, noop_config(True), ["pre-commit", "post-commit", "post-merge"], env)
    setups.append(Setup("framework", "framework + git-neo (neo-guard, neo-outcomes)", copy("framework"), env))
    framework(setups[-1].repo, neo_config(ROOT / ".pre-commit-hooks.yaml"), ["pre-commit", "post-commit", "post-merge"],
              env)
    if baseline is not None:
        base_env = {**env, "PATH": str(baseline / "bin") + os.pathsep + env["PATH"], "PYTHONPATH": str(baseline)}
        setups.append(Setup("base-native", "  baseline: native hooks", copy("base-native"), base_env))
        native(setups[-1].repo, base_env)
        setups.append(Setup("base-framework", "  baseline: framework + git-neo", copy("base-framework"), base_env))
        framework(setups[-1].repo, neo_config(baseline / ".pre-commit-hooks.yaml"),
                  ["pre-commit", "post-commit", "post-merge"], base_env)
    if args.readme:
        setups.append(Setup("readme-plain", "README only, no hooks", copy("readme-plain"), env, "readme"))
        setups.append(Setup("readme-native", "README only, native hooks", copy("readme-native"), env, "readme"))
        native(setups[-1].repo, env)
    return setups


def baseline_code(root: Path, rev: str) -> Path:
    """git-neo at *rev* (its `neo_git`, `hooks/` and `.pre-commit-hooks.yaml`) in *root*/baseline,
    with `bin/git-neo` and `bin/git-neo-guard` as the console scripts an install writes; the
    setups that use it put the folder on PYTHONPATH, ahead of this checkout."""
    target = root / "baseline"
    (target / "bin").mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "neo_git", "hooks", ".pre-commit-hooks.yaml"],
                             check=True, capture_output=True, timeout=120).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True, timeout=120)
    python = Path(VENV_BIN) / "python"
    scripts = {"git-neo": "neo_git.cli:run"}
    if (target / "hooks" / "framework").is_dir():   # the framework's entries are shell scripts there
        for script in (target / "hooks" / "framework").iterdir():
            shutil.copy(script, target / "bin" / script.name)
    else:
        scripts["git-neo-guard"] = "neo_git.githooks.supervise:main"
    for name, entry in scripts.items():
        module, func = entry.split(":")
        script = target / "bin" / name
        script.write_text(f"#!{python}\nimport sys\nfrom {module} import {func}\nsys.exit({func}())\n")
        script.chmod(0o755)
    return target


def busy_in(root: Path) -> bool:
    """Is any process other than this one working in *root* (a detached worker)? Linux /proc."""
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != me:
            try:
                if os.readlink(f"/proc/{entry.name}/cwd").startswith(str(root)):
                    return True
            except OSError:
                continue
    return False


def settle(root: Path, neo_dir: Path, timeout: float = 120.0) -> None:
    """Until every detached worker has finished (the next commit never competes with one)."""
    deadline = time.monotonic() + timeout
    if os.path.isdir("/proc"):
        while busy_in(root) and time.monotonic() < deadline:
            time.sleep(0.02)
    else:
        wait_for_worker(neo_dir, timeout)


def change_files(setup: Setup, i: int, staged: int, files: int) -> None:
    """Commit *i*'s change: *staged* modules (new content each time), or a README line."""
    repo = setup.repo
    if setup.change == "readme":
        paths = [repo / "README.md"]
    else:
        paths = [repo / "app" / f"pkg{k}" / f"mod{(i * staged + k) % files // 10 * 10 + k}.py" for k in range(staged)]
    for path in paths:
        with path.open("a") as handle:
            handle.write(f"\n\ndef extra_{i}(x):\n    return x * {i}\n" if path.suffix == ".py" else f"line {i}\n")
    git(repo, "add", *map(str, paths), env=setup.env)


def bench_commits(root: Path, setups: list[Setup], rounds: int, warmup: int, staged: int, files: int) -> None:
    """`git commit` wall and CPU time in each setup, round-robin (every setup sees the same load);
    the first *warmup* rounds are not counted (caches, the framework's store)."""
    for i in range(warmup + rounds):
        for setup in setups:
            change_files(setup, i, staged, files)
            args = ["git", "commit", "-qm", f"c{i}"]
            cpu_before, started = child_cpu(), time.perf_counter()
            proc = subprocess.run(args, cwd=setup.repo, env=setup.env, capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, timeout=300)
            took, used = time.perf_counter() - started, child_cpu() - cpu_before
            if proc.returncode != 0:
                raise RuntimeError(f"{setup.label}: git commit failed: {proc.stdout}{proc.stderr}")
            if i >= warmup:
                setup.times.append(took)
                setup.cpu.append(used)
            settle(root, setup.repo / ".git" / "neo")


def commit_table(setups: list[Setup], staged: int, files: int) -> tuple[str, dict]:
    """The table of medians, and {key: added median seconds over the plain commit of its kind}."""
    plain = {s.change: median(s.times) for s in setups if s.key in ("plain", "readme-plain")}
    plain_cpu = {s.change: median(s.cpu) for s in setups if s.key in ("plain", "readme-plain")}
    added = {s.key: median(s.times) - plain[s.change] for s in setups}
    rows = []
    for s in setups:
        extra = "" if s.key in ("plain", "readme-plain") else f"+{ms(added[s.key])}"
        extra_cpu = "" if s.key in ("plain", "readme-plain") else f"+{ms(median(s.cpu) - plain_cpu[s.change])}"
        rows.append([s.label, ms(median(s.times)), ms(p90(s.times)), extra, ms(median(s.cpu)), extra_cpu])
    title = f"git commit, {staged} Python files staged, {files:,}-file repository"
    return table([title, "median", "p90", "added", "CPU", "CPU added"], rows), added


GUARD_PROBE = """
import sys, time
started, started_cpu = time.perf_counter(), time.process_time()
import importlib
for name in sys.argv[1].split(","):
    importlib.import_module(name)
imported, imported_cpu = time.perf_counter(), time.process_time()
from neo_git.githooks.guard import check_commit
result = check_commit().result
done, done_cpu = time.perf_counter(), time.process_time()
print(imported - started, done - imported, imported_cpu - started_cpu, done_cpu - imported_cpu, int(result.ok),
      ",".join(sorted(sys.modules)))
"""


def stage_sources(repo: Path, env: dict, staged: int, tag: str) -> None:
    """Modify *staged* source files and `git add` them (what the guard will look at): new
    blobs each time, so every guard run parses them as a real commit's guard does."""
    paths = [repo / "app" / f"pkg{k}" / f"mod{500 + k}.py" for k in range(staged)]
    for path in paths:
        with path.open("a") as handle:
            handle.write(f"\n\ndef staged_{tag}(x):\n    return x\n")
    git(repo, "add", *map(str, paths), env=env)


def bench_guard(repo: Path, env: dict, rounds: int, staged: int) -> dict[str, list[float]]:
    """The guard process on a staged change, and its breakdown (see the module docstring)."""
    from neo_git.health import snapshot_commit
    from neo_git.identity import open_repository

    snapshot_commit(open_repository(repo), "HEAD")   # HEAD's state is cached, as after any earlier commit
    stage_sources(repo, env, staged, "modules")
    python = str(Path(VENV_BIN) / "python")
    hook_env = {**env, "GIT_INDEX_FILE": str(repo / ".git" / "index")}   # as git sets it for the hook
    # which modules a guard run loads (beyond a bare interpreter's): imported first, in the probe
    probe = subprocess.run([python, "-c", GUARD_PROBE, "neo_git.cli"], cwd=repo, env=hook_env, check=True,
                           capture_output=True, text=True).stdout.split()
    bare = set(subprocess.run([python, "-c", "import sys; print(','.join(sorted(sys.modules)))"], cwd=repo,
                              env=hook_env, check=True, capture_output=True, text=True).stdout.strip().split(","))
    loaded = [m for m in probe[5].split(",") if m not in bare and "." not in m]   # top-level packages
    ours = [m for m in probe[5].split(",") if m.startswith("neo_git.")]
    ordered = ["neo_git.cli", "neo_git.githooks.runner", "neo_git.githooks.guard"] + ours + \
        [m for m in loaded if m not in ("neo_git", "__main__")]
    results: dict[str, list[float]] = {name: [] for name in (
        "interpreter", "imports", "check", "guard process", "interpreter CPU", "imports CPU", "check CPU",
        "guard CPU")}
    for run in range(rounds):
        cpu_before, started = child_cpu(), time.perf_counter()
        subprocess.run([python, "-c", "pass"], cwd=repo, env=hook_env, check=True)
        results["interpreter"].append(time.perf_counter() - started)
        results["interpreter CPU"].append(child_cpu() - cpu_before)
        stage_sources(repo, env, staged, f"probe{run}")
        out = subprocess.run([python, "-c", GUARD_PROBE, ",".join(ordered)], cwd=repo, env=hook_env, check=True,
                             capture_output=True, text=True).stdout.split()
        results["imports"].append(float(out[0]))
        results["check"].append(float(out[1]))
        results["imports CPU"].append(float(out[2]))
        results["check CPU"].append(float(out[3]))
        stage_sources(repo, env, staged, f"guard{run}")
        cpu_before, started = child_cpu(), time.perf_counter()
        subprocess.run([str(Path(VENV_BIN) / "git-neo"), "hook", "pre-commit", "--block-exit", "86", "--timeout-ms",
                        "10000"], cwd=repo, env=hook_env, capture_output=True, stdin=subprocess.DEVNULL)
        results["guard process"].append(time.perf_counter() - started)
        results["guard CPU"].append(child_cpu() - cpu_before)
    git(repo, "commit", "-qm", "staged for the guard bench", "--no-verify", env=env)
    results["modules"] = loaded   # type: ignore[assignment]
    return results


def bench_worker(repo: Path, env: dict, fact_ids: list[str], rounds: int) -> tuple[list[float], list[float]]:
    from neo_git.health import snapshot_commit
    from neo_git.identity import open_repository, repository_paths
    from neo_git.outcomes.processing import process_commits
    from neo_git.outcomes.suggestions import record_suggestion

    repo_obj = open_repository(repo)
    snapshot_commit(repo_obj, "HEAD")   # warm health cache
    empty = repo.parent / "no-hooks"
    in_process, as_process, process_cpu = [], [], []
    for i in range(rounds * 2):
        code = (f"def retry_{i}(fn, attempts={i + 2}):\n    for attempt in range(attempts):\n"
                f"        try:\n            return fn()\n        except OSError:\n"
                f"            if attempt == attempts - 1:\n                raise\n")
        path = f"app/pkg{i % 10}/mod{i % 10}.py"
        repo_obj = open_repository(repo)
        record_suggestion(repo_obj, repository_paths(repo_obj), file=path, code=code,
                          fact_ids=fact_ids[2 * i % 50: 2 * i % 50 + 2], description=f"retry {i}")
        with (repo / path).open("a") as handle:
            handle.write("\n\n" + code)
        git(repo, "-c", f"core.hooksPath={empty}", "commit", "-qam", f"adopt {i}", env=env)
        sha = git(repo, "rev-parse", "HEAD").strip()
        if i % 2 == 0:
            started = time.perf_counter()
            [result] = process_commits(open_repository(repo), [sha], catch_up=False)
            in_process.append(time.perf_counter() - started)
            assert not result.errors and any(r.get("verdict") == "accepted" for r in result.records), result
        else:
            cpu_before, started = child_cpu(), time.perf_counter()
            subprocess.run([str(Path(VENV_BIN) / "git-neo"), "hook", "post-commit", sha], cwd=repo, check=True,
                           env={**env, "NEO_HOOK_SYNC": "1"}, capture_output=True, stdin=subprocess.DEVNULL)
            as_process.append(time.perf_counter() - started)
            process_cpu.append(child_cpu() - cpu_before)
    return in_process, as_process, process_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=15, help="counted commits per setup (default 15)")
    parser.add_argument("--warmup", type=int, default=2, help="uncounted commits per setup first (default 2)")
    parser.add_argument("--files", type=int, default=1000, help="Python modules in the repository (default 1,000)")
    parser.add_argument("--staged", type=int, default=5, help="source files staged per commit (default 5)")
    parser.add_argument("--baseline", metavar="REV",
                        help="also time git-neo's hooks as they were at REV (e.g. main), alternated with these")
    parser.add_argument("--no-readme", dest="readme", action="store_false",
                        help="leave out the README-only commits (issue 8's rows)")
    parser.add_argument("--guard-runs", type=int, default=15, help="runs of the guard process alone (0: skip)")
    parser.add_argument("--facts", type=int, default=5000, help="facts in the project store (default 5,000)")
    parser.add_argument("--worker-commits", type=int, default=8, help="commits per worker variant (0: skip)")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    with scratch_dir("neo-hook-bench-", args.keep) as root:
        return _run(args, root)


def _run(args: argparse.Namespace, root: Path) -> int:
    """One benchmark run inside its scratch folder."""
    baseline = baseline_code(root, args.baseline) if args.baseline else None
    home = root / "home"
    isolated_home(home, PATH=VENV_BIN + os.pathsep + os.environ.get("PATH", ""),
                  PRE_COMMIT_HOME=str(root / "pre-commit-home"))
    os.environ.pop("NEO_DISABLE", None)
    # Child processes keep their bytecode under the scratch folder, as an installed package
    # has it, instead of compiling git-neo's modules on every hook run (a session may export
    # PYTHONDONTWRITEBYTECODE=1: that alone added ~40 ms to each guard run).
    os.environ["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    env = dict(os.environ)
    print(machine_info())
    load_before = os.getloadavg()
    repo = make_repo(root, args.files)
    started = time.perf_counter()
    fact_ids = seed_facts(repo, args.facts)
    print(f"repository: {args.files} modules; store: {args.facts:,} facts (seeded in {time.perf_counter() - started:.1f} s)")
    subprocess.run(["git-neo", "health"], cwd=repo, env=env, check=True, capture_output=True, timeout=600)  # HEAD's state
    setups = make_setups(root, repo, env, args, baseline)
    bench_commits(root, setups, args.commits, args.warmup, args.staged, args.files)
    text, added = commit_table(setups, args.staged, args.files)
    load_after = os.getloadavg()
    print()
    print(text)
    print()
    print(f"native hooks / framework's one no-op hook: {ratio(added['native'], added['noop'])} (target <= 0.5x)"
          + (f"; baseline {ratio(added['base-native'], added['noop'])}" if baseline else ""))
    print(f"framework + git-neo / framework's no-op hooks at the same stages: "
          f"{ratio(added['framework'], added['noop-stages'])} (target <= 1.2x; added costs over "
          f"the plain commit)" + (f"; baseline {ratio(added['base-framework'], added['noop-stages'])}" if baseline else ""))
    if args.readme:
        print(f"README-only commit, native hooks: +{ms(added['readme-native'])} over no hook (target <= 15 ms)")
    print(f"load average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in load_before)} before the commits, "
          f"{', '.join(f'{x:.1f}' for x in load_after)} after ({os.cpu_count()} cpus; wall times on a shared "
          f"machine stretch with it, CPU times much less)")
    os.chdir(repo)
    (root / "no-hooks").mkdir()
    if args.guard_runs:
        guard = bench_guard(repo, env, args.guard_runs, args.staged)
        rows = [[name, ms(median(guard[name])), ms(p90(guard[name])), ms(median(guard[name + " CPU"]))]
                for name in ("interpreter", "imports", "check")]
        rows.append(["guard process (git-neo hook pre-commit)", ms(median(guard["guard process"])),
                     ms(p90(guard["guard process"])), ms(median(guard["guard CPU"]))])
        print()
        print(table([f"guard, {args.staged} staged files of {args.files:,} (HEAD's state stored)", "median", "p90",
                     "CPU (median)"], rows))
        print(f"packages the guard imports: {', '.join(guard['modules'])}")
    if args.worker_commits:
        in_process, as_process, process_cpu = bench_worker(repo, env, fact_ids, args.worker_commits)
        rows = [["process_commits (in-process)", ms(median(in_process)), ms(p90(in_process)), ""],
                ["git-neo hook post-commit (process)", ms(median(as_process)), ms(p90(as_process)),
                 ms(median(process_cpu))]]
        print()
        print(table([f"worker per commit ({args.facts:,} facts, warm health cache)", "median", "p90", "CPU (median)"],
                    rows))
        print(f"worker target < 1 s (measured {ms(median(as_process))} wall, {ms(median(process_cpu))} CPU)")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
