"""The pre-commit shim: Python starts only when a staged file has a language health knows,
and the guard has a hard time limit that holds even when git-neo itself hangs."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from neo_git.cli import main
from neo_git.health.languages import EXTENSIONS
from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import VENV_BIN

ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "hooks" / "pre-commit"
DEEP = ("def f(x):\n    if x:\n        for i in x:\n            while i:\n                if i:\n"
        "                    with x:\n                        return i\n")


def fake_bin(folder: Path, git_neo: str, *, timeout: bool = True) -> str:
    """A PATH of one folder: git, sleep (and coreutils timeout unless told not to), and a
    `git-neo` script with the given body."""
    folder.mkdir()
    for tool in ("git", "sleep") + (("timeout",) if timeout else ()):
        os.symlink(shutil.which(tool), folder / tool)
    script = folder / "git-neo"
    script.write_text(git_neo)
    script.chmod(0o755)
    return str(folder)


def counting_git_neo(log: Path) -> str:
    """A `git-neo` that notes each start in *log*, then runs the real one."""
    return f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{VENV_BIN}/git-neo" "$@"\n'


def commit(repo: Path, path: str, env: dict, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "commit", "-qm", "change", *extra], cwd=repo, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def installed(repo: Path, monkeypatch) -> Path:
    monkeypatch.chdir(repo)
    assert main(["install"]) == 0
    return repo


def test_a_readme_or_lock_file_commit_never_starts_python(repo_with_commit, monkeypatch, tmp_path):
    repo = installed(repo_with_commit, monkeypatch)
    starts, trace = tmp_path / "starts.log", tmp_path / "trace.log"
    path = fake_bin(tmp_path / "bin", counting_git_neo(starts)) + os.pathsep + os.environ["PATH"]
    env = {"PATH": path, "NEO_HOOK_TRACE": str(trace), "NEO_HOOK_SYNC": "1"}
    for name, text in (("README.md", "more\n"), ("poetry.lock", "[[package]]\n"), ("docs/a.py.txt", "x\n")):
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text(text)
        git(repo, "add", name)
        git(repo, "rm", "-q", "--cached", "--ignore-unmatch", "nothing")
        proc = commit(repo, name, env)
        assert proc.returncode == 0, proc.stderr
    pre_commit_starts = [line for line in (starts.read_text() if starts.exists() else "").splitlines()
                         if line.startswith("hook pre-commit")]
    assert pre_commit_starts == []
    assert trace.read_text().splitlines() == ["pre-commit: no staged source file: skipped"] * 3
    # deleting a source file adds no cycle either
    commit_files(repo, {"gone.py": "X = 1\n"}, "a module")
    trace.write_text("")
    git(repo, "rm", "-q", "gone.py")
    assert commit(repo, "gone.py", env).returncode == 0
    assert trace.read_text().splitlines() == ["pre-commit: no staged source file: skipped"]
    # …while a staged source file (any case of its extension) does start the guard
    (repo / "Tool.PY").write_text(DEEP)
    git(repo, "add", "Tool.PY")
    proc = commit(repo, "Tool.PY", env)
    assert proc.returncode == 1 and "nesting 5" in proc.stderr
    assert "pre-commit --block-exit 86 --timeout-ms 10000" in starts.read_text()
    lines = trace.read_text().splitlines()
    assert [line for line in lines if not line.startswith("pre-commit: guard: ")][-2:] == [
        "pre-commit: guard started (limit 10000 ms)", "pre-commit: guard exited 86"]
    # in between, the guard itself says where its time went; a blocked commit has no post-commit
    # worker, so what it measured is written once it has answered
    steps = [line.split(" at ")[0] for line in lines if line.startswith("pre-commit: guard: ")]
    assert steps == ["pre-commit: guard: modules imported", "pre-commit: guard: staged change read (1 file(s))",
                     "pre-commit: guard: HEAD and the index measured", "pre-commit: guard: judged",
                     "pre-commit: guard: done: blocks",
                     "pre-commit: guard: answered; 1 result(s) and 0 state(s) written in the background"]


def test_the_shim_knows_exactly_the_languages_health_knows():
    patterns = set(re.findall(r"':\(icase\)\*(\.[a-z]+)'", SHIM.read_text()))
    assert patterns == set(EXTENSIONS)


def test_the_shim_decides_the_limit_with_the_python_sides_numbers():
    """The shim reads neo.guardTimeoutMs in sh (no interpreter runs before the limit is armed):
    its default and maximum are githooks/limit.py's."""
    from neo_git.githooks.limit import DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS

    numbers = dict(re.findall(r"\b(default_ms|max_ms)=(\d+)", SHIM.read_text()))
    assert numbers == {"default_ms": str(DEFAULT_TIMEOUT_MS), "max_ms": str(MAX_TIMEOUT_MS)}


def test_the_framework_hook_runs_only_for_those_files():
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    guard = hooks["neo-guard"]
    assert "always_run" not in guard and guard["pass_filenames"] is False
    pattern = re.compile(guard["files"])
    for extension in EXTENSIONS:
        assert pattern.search(f"src/module{extension}") and pattern.search(f"src/MODULE{extension.upper()}")
    for other in ("README.md", "poetry.lock", "package.json", "a.py.txt", "pyproject.toml", "x.json"):
        assert not pattern.search(other)


HANGING = f"#!{sys.executable}\nimport time\ntime.sleep(60)\n"   # a git-neo that never answers


def hanging_commit(repo: Path, tmp_path: Path, monkeypatch, *, timeout: bool) -> tuple[subprocess.CompletedProcess, float]:
    repo = installed(repo, monkeypatch)
    git(repo, "config", "neo.guardTimeoutMs", "1500")
    (repo / "app.py").write_text("X = 1\n")
    git(repo, "add", "app.py")
    env = {"PATH": fake_bin(tmp_path / "bin", HANGING, timeout=timeout)}
    started = time.monotonic()
    proc = commit(repo, "app.py", env)
    return proc, time.monotonic() - started


def test_a_hanging_git_neo_cannot_hold_up_the_commit(repo_with_commit, tmp_path, monkeypatch):
    proc, took = hanging_commit(repo_with_commit, tmp_path, monkeypatch, timeout=True)
    assert proc.returncode == 0, proc.stderr
    assert "no answer within 1500 ms (neo.guardTimeoutMs), commit allowed" in proc.stderr
    assert took < 30, took          # the limit (1.5 s) plus git on a loaded machine, far from the hang's 60 s
    assert git(repo_with_commit, "log", "-1", "--format=%s").strip() == "change"


def test_without_coreutils_timeout_a_watchdog_holds_the_limit(repo_with_commit, tmp_path, monkeypatch):
    proc, took = hanging_commit(repo_with_commit, tmp_path, monkeypatch, timeout=False)
    assert proc.returncode == 0, proc.stderr
    assert "no answer within 1500 ms (neo.guardTimeoutMs), commit allowed" in proc.stderr
    assert took < 30, took          # whole seconds: the limit rounds up to 2 s; the hang takes 60


def test_with_neo_strict_a_time_out_blocks(repo_with_commit, tmp_path, monkeypatch):
    git(repo_with_commit, "config", "neo.strict", "true")
    proc, took = hanging_commit(repo_with_commit, tmp_path, monkeypatch, timeout=True)
    assert proc.returncode == 1 and "blocking (neo.strict=true)" in proc.stderr
    assert took < 30, took


def test_the_guard_process_imports_only_what_it_needs(repo_with_commit):
    """No CLI parser, no facts, no logging, and no pygit2 (git's plumbing commands read the
    staged change: health/plumbing.py): a guard run pays for sqlite, tree-sitter and the
    health modules it uses."""
    repo = repo_with_commit
    (repo / "app.py").write_text("import os\n\n\ndef f():\n    return os.sep\n")
    git(repo, "add", "app.py")
    probe = ("import sys\nfrom neo_git.cli import main\ncode = main(['hook', 'pre-commit'])\n"
             "print(code, ' '.join(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / "index")}).stdout.split()
    code, modules = out[0], set(out[1:])
    assert code == "0" and "neo_git.health.scan" in modules       # the check did run
    assert not modules & {"neo_git.facts", "neo_git.cli.parser", "argparse", "logging", "pygit2",
                          "neo_git.store", "numpy", "tomllib"}


GUARD = Path(VENV_BIN) / "git-neo-guard"   # the framework's neo-guard entry, as installed


def test_the_framework_entries_are_the_shims_as_installed():
    """neo-guard runs the pre-commit shim itself, neo-outcomes a shell hand-off: no Python starts
    just to start another one. (An editable install copies them: after editing a shim, run
    `pip install -e .` again.)"""
    assert GUARD.read_bytes() == SHIM.read_bytes()
    outcomes = ROOT / "hooks" / "framework" / "git-neo-outcomes"
    assert (Path(VENV_BIN) / "git-neo-outcomes").read_bytes() == outcomes.read_bytes()
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["neo-guard"]["entry"] == "git-neo-guard" and hooks["neo-outcomes"]["entry"] == "git-neo-outcomes"


def framework_guard(repo: Path, path: str) -> subprocess.CompletedProcess:
    """`git-neo-guard` as the framework runs it (PRE_COMMIT=1, no arguments), with *path* as PATH."""
    return subprocess.run([str(GUARD)], cwd=repo, env={**os.environ, "PATH": path, "PRE_COMMIT": "1"},
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_the_framework_entry_supervises_a_hanging_guard(repo_with_commit, tmp_path):
    """The framework blocks on any exit but 0, so a guard that hangs past neo.guardTimeoutMs lets
    the commit through, as the shell shim does."""
    repo = repo_with_commit
    git(repo, "config", "neo.guardTimeoutMs", "1500")
    (repo / "app.py").write_text("X = 1\n")
    git(repo, "add", "app.py")
    path = fake_bin(tmp_path / "bin", HANGING)
    started = time.monotonic()
    proc = framework_guard(repo, path)
    assert proc.returncode == 0 and time.monotonic() - started < 30   # the hang takes 60 s
    assert "no answer within 1500 ms (neo.guardTimeoutMs), commit allowed" in proc.stderr
    git(repo, "config", "neo.strict", "true")
    proc = framework_guard(repo, path)
    assert proc.returncode == 1 and "blocking (neo.strict=true)" in proc.stderr


def test_the_framework_entry_blocks_only_when_the_guard_does(repo_with_commit, tmp_path):
    repo = repo_with_commit
    commit_files(repo, {"app/__init__.py": "", "app/a.py": "X = 1\n", "app/b.py": "from app import a\n"}, "modules")
    path = VENV_BIN + os.pathsep + os.environ["PATH"]
    assert framework_guard(repo, path).returncode == 0                 # nothing staged to judge
    (repo / "app" / "a.py").write_text("from app import b\n")
    git(repo, "add", "app/a.py")
    proc = framework_guard(repo, path)
    assert proc.returncode == 1 and "new import cycle" in proc.stderr  # a new import-time cycle
    dying = fake_bin(tmp_path / "bin", "#!/bin/sh\nexit 3\n")          # a guard that dies at start
    assert framework_guard(repo, dying).returncode == 0


def test_what_a_blocked_guard_measured_is_kept_once_it_has_answered(repo_with_commit, monkeypatch):
    """The hook writes nothing while the commit waits. A blocked commit has no post-commit worker,
    so what it measured (the staged file's result; HEAD's state, which nothing had stored) is
    written by a detached process after the hook has answered, for the retry to start from."""
    import sqlite3

    repo = installed(repo_with_commit, monkeypatch)
    (repo / "deep.py").write_text(DEEP)
    git(repo, "add", "deep.py")
    proc = commit(repo, "deep.py", {"PATH": VENV_BIN + os.pathsep + os.environ["PATH"]})   # not NEO_HOOK_SYNC
    assert proc.returncode == 1 and "nesting 5" in proc.stderr
    head_tree = bytes.fromhex(git(repo, "rev-parse", "HEAD^{tree}").strip())
    blob = bytes.fromhex(git(repo, "rev-parse", ":deep.py").strip())
    cache = repo / ".git" / "neo" / "health.sqlite"
    found = (0, 0)
    deadline = time.monotonic() + 60
    while found != (1, 1) and time.monotonic() < deadline:
        time.sleep(0.1)
        if cache.exists():
            with sqlite3.connect(f"{cache.as_uri()}?mode=ro", uri=True) as conn:
                found = (conn.execute("SELECT COUNT(*) FROM file_results WHERE blob = ?", (blob,)).fetchone()[0],
                         conn.execute("SELECT COUNT(*) FROM snapshot_states WHERE tree = ?",
                                      (head_tree,)).fetchone()[0])
    assert found == (1, 1)
