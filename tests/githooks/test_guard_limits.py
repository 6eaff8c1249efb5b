"""Issue 37: the guard's time limit is a validated number and it ends the guard's whole process
tree. A bad `neo.guardTimeoutMs` never breaks a commit (the default is used, with one warning);
a guard whose descendants hang never holds a caller that reads git's output through a pipe."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neo_git.cli import main
from tests.helpers.git import git
from tests.helpers.outcomes import VENV_BIN

ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "hooks" / "pre-commit"
BAD_LIMITS = ["99999999999999999999", "-5", "0", "ten", "010", "1e3", "3600001"]


def _installed(repo: Path, monkeypatch) -> Path:
    monkeypatch.chdir(repo)
    assert main(["install"]) == 0
    return repo


def _commit(repo: Path, env: dict) -> tuple[subprocess.CompletedProcess, float]:
    """`git commit` with stdout and stderr read through pipes to the end (as `git commit | cat`)."""
    started = time.monotonic()
    proc = subprocess.run(["git", "commit", "-qm", "change"], cwd=repo, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return proc, time.monotonic() - started


def _stage(repo: Path, name: str = "app.py") -> None:
    (repo / name).write_text("X = 1\n")
    git(repo, "add", name)


@pytest.mark.parametrize("value", BAD_LIMITS)
def test_a_bad_guard_time_limit_never_breaks_a_commit(repo_with_commit, monkeypatch, value):
    repo = _installed(repo_with_commit, monkeypatch)
    git(repo, "config", "neo.guardTimeoutMs", value)
    _stage(repo)
    proc, _ = _commit(repo, {"PATH": VENV_BIN + os.pathsep + os.environ["PATH"]})
    assert proc.returncode == 0, proc.stderr
    assert "Illegal number" not in proc.stderr and "Traceback" not in proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "neo.guardTimeoutMs" in line]
    assert len(warnings) == 1 and "10000" in warnings[0], proc.stderr
    assert git(repo, "log", "-1", "--format=%s").strip() == "change"


def test_a_git_integer_suffix_is_read_as_git_reads_it(repo_with_commit, monkeypatch, tmp_path):
    repo = _installed(repo_with_commit, monkeypatch)
    git(repo, "config", "neo.guardTimeoutMs", "20k")
    trace = tmp_path / "trace.log"
    _stage(repo)
    proc, _ = _commit(repo, {"PATH": VENV_BIN + os.pathsep + os.environ["PATH"], "NEO_HOOK_TRACE": str(trace)})
    assert proc.returncode == 0 and "neo.guardTimeoutMs" not in proc.stderr, proc.stderr
    assert "pre-commit: guard started (limit 20480 ms)" in trace.read_text()


def test_the_python_side_falls_back_with_one_warning(repo_with_commit, monkeypatch, capfd):
    """`git-neo hook pre-commit` without --timeout-ms (a hook of one's own calling it) reads the
    setting itself: a bad value is the default, with one warning."""
    monkeypatch.chdir(repo_with_commit)
    git(repo_with_commit, "config", "neo.guardTimeoutMs", "99999999999999999999")
    _stage(repo_with_commit)
    assert main(["hook", "pre-commit"]) == 0
    err = capfd.readouterr().err
    assert err.count("neo.guardTimeoutMs") == 1 and "internal error" not in err, err


def _fake_bin(folder: Path, git_neo: str, *, timeout: bool) -> str:
    folder.mkdir()
    for tool in ("git", "sleep", "ps", "awk", "sh") + (("timeout",) if timeout else ()):
        os.symlink(shutil.which(tool), folder / tool)
    script = folder / "git-neo"
    script.write_text(git_neo)
    script.chmod(0o755)
    return str(folder)


# A guard that hangs in a grandchild: the child git-neo starts it and waits. Both hold git's stderr.
HANGING_TREE = "#!/bin/sh\nsleep 30\n"
HANGING_PYTHON_TREE = (f"#!{sys.executable}\nimport subprocess\n"
                       "subprocess.run(['sleep', '30'])\n")


@pytest.mark.parametrize("timeout", [True, False], ids=["coreutils-timeout", "watchdog"])
@pytest.mark.parametrize("body", [HANGING_TREE, HANGING_PYTHON_TREE], ids=["sh", "python"])
def test_the_time_limit_ends_the_guards_descendants_too(repo_with_commit, tmp_path, monkeypatch, timeout, body):
    repo = _installed(repo_with_commit, monkeypatch)
    git(repo, "config", "neo.guardTimeoutMs", "1500")
    _stage(repo)
    proc, took = _commit(repo, {"PATH": _fake_bin(tmp_path / "bin", body, timeout=timeout)})
    assert proc.returncode == 0, proc.stderr
    assert "no answer within 1500 ms (neo.guardTimeoutMs), commit allowed" in proc.stderr
    assert took < 15, f"the caller read git's output for {took:.1f} s (the hang is 30 s)"


def test_the_framework_entry_ends_the_guards_descendants_too(repo_with_commit, tmp_path, monkeypatch):
    """`git-neo-guard` (the framework's neo-guard: the pre-commit shim, installed as a script) as the
    framework runs it, read through a pipe."""
    git(repo_with_commit, "config", "neo.guardTimeoutMs", "1500")
    _stage(repo_with_commit)
    env = {**os.environ, "PATH": _fake_bin(tmp_path / "bin", HANGING_PYTHON_TREE, timeout=True), "PRE_COMMIT": "1"}
    started = time.monotonic()
    proc = subprocess.run([str(Path(VENV_BIN) / "git-neo-guard")], cwd=repo_with_commit, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    took = time.monotonic() - started
    assert proc.returncode == 0 and "commit allowed" in proc.stderr, proc.stderr
    assert took < 15, f"the caller read the hook's output for {took:.1f} s (the hang is 30 s)"
