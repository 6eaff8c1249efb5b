"""The pre-commit gate: blocks only what a staged change introduces."""
from __future__ import annotations

import os
import subprocess

from neo_git.cli import main
from tests.conftest import commit_files, git
from tests.outcome_helpers import hook_env

DEEP = ("def f(x):\n    if x:\n        for i in x:\n            while i:\n                if i:\n"
        "                    with x:\n                        return i\n")


def check(repo, monkeypatch, capsys) -> tuple[int, str]:
    monkeypatch.chdir(repo)
    code = main(["health", "--staged", "--check"])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_new_cycle_blocks_and_names_the_modules(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    commit_files(repo, {"pkg/a.py": "def a():\n    return 1\n", "pkg/b.py": "from pkg import a\n"}, "modules")
    (repo / "pkg" / "a.py").write_text("from pkg import b\n\n\ndef a():\n    return 1\n")
    git(repo, "add", "pkg/a.py")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 1
    assert "new import cycle" in text and "pkg/a.py" in text and "pkg/b.py" in text


def test_what_was_already_there_never_blocks(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    commit_files(repo, {"pkg/a.py": "from pkg import b\n", "pkg/b.py": "from pkg import a\n", "deep.py": DEEP},
                 "old debt")
    (repo / "deep.py").write_text(DEEP + "\n\ndef g():\n    return 2\n")     # touched, still as deep
    (repo / "pkg" / "b.py").write_text("from pkg import a\n\nX = 1\n")        # cycle unchanged
    git(repo, "add", "-A")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 0, text


def test_deep_nesting_in_a_touched_file_blocks(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    (repo / "deep.py").write_text(DEEP)
    git(repo, "add", "deep.py")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 1 and "deep.py:6: nesting 5 is above neo.maxNesting=4" in text
    git(repo, "config", "neo.maxNesting", "6")
    assert check(repo, monkeypatch, capsys)[0] == 0


def test_a_new_god_file_blocks(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    git(repo, "config", "neo.godFileFunctions", "3")
    (repo / "big.py").write_text("".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(5)))
    git(repo, "add", "big.py")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 1 and "big.py: becomes a god file" in text


def test_the_shim_blocks_a_real_commit_and_internal_errors_pass(repo_with_commit, monkeypatch):
    repo = repo_with_commit
    monkeypatch.chdir(repo)
    assert main(["install"]) == 0
    (repo / "deep.py").write_text(DEEP)
    git(repo, "add", "deep.py")
    env = {**os.environ, **hook_env(NEO_HOOK_SYNC="1")}
    proc = subprocess.run(["git", "commit", "-qm", "deep"], cwd=repo, env=env, capture_output=True, text=True)
    assert proc.returncode == 1 and "nesting 5" in proc.stderr
    # an internal error (a corrupt index file named by GIT_INDEX_FILE) warns and lets the commit through...
    (repo / "bad-index").write_bytes(b"DIRC" + b"\xff" * 64)
    broken = {**env, "GIT_INDEX_FILE": str(repo / "bad-index")}
    proc = subprocess.run(["git-neo", "hook", "pre-commit"], cwd=repo, env=broken, capture_output=True, text=True)
    assert proc.returncode == 0 and "internal error" in proc.stderr
    # ...unless neo.strict=true
    git(repo, "config", "neo.strict", "true")
    proc = subprocess.run(["git-neo", "hook", "pre-commit"], cwd=repo, env=broken, capture_output=True, text=True)
    assert proc.returncode == 1
