"""`git neo install [--uninstall]`: chaining, exact restore, core.hooksPath, worktrees."""
from __future__ import annotations

import os
import stat
import subprocess

from neo_git.cli import main
from tests.helpers.git import git
from tests.helpers.outcomes import hook_env

USER_HOOK = b"#!/bin/sh\n# my own hook\necho \"user hook ran: $*\" >> \"$(git rev-parse --git-dir)/user-hook.log\"\n"


def _snapshot(folder):
    return {p.name: (p.read_bytes(), stat.S_IMODE(p.lstat().st_mode)) for p in sorted(folder.iterdir())}


def test_round_trip_restores_existing_hooks_byte_for_byte(repo_with_commit, monkeypatch):
    repo = repo_with_commit
    hooks = repo / ".git" / "hooks"
    (hooks / "post-commit").write_bytes(USER_HOOK)
    (hooks / "post-commit").chmod(0o750)
    (hooks / "pre-commit").write_bytes(b"#!/bin/sh\nexit 0\r\n")   # odd bytes survive too
    (hooks / "pre-commit").chmod(0o700)
    before = _snapshot(hooks)
    git(repo, "config", "notes.rewriteRef", "refs/notes/commits")
    monkeypatch.chdir(repo)
    assert main(["install"]) == 0
    assert "git-neo hook shim" in (hooks / "post-commit").read_text()
    assert (hooks / "post-commit.neo-chained").read_bytes() == USER_HOOK
    assert git(repo, "config", "--get-all", "notes.rewriteRef").split() == ["refs/notes/commits", "refs/notes/neo"]
    assert main(["install"]) == 0          # a second install chains nothing twice
    assert (hooks / "post-commit.neo-chained").read_bytes() == USER_HOOK
    assert main(["install", "--uninstall"]) == 0
    assert _snapshot(hooks) == before
    assert git(repo, "config", "--get-all", "notes.rewriteRef").split() == ["refs/notes/commits"]


def test_chained_hooks_run_and_a_failing_pre_commit_still_blocks(repo_with_commit, monkeypatch):
    repo = repo_with_commit
    hooks = repo / ".git" / "hooks"
    (hooks / "post-commit").write_bytes(USER_HOOK)
    (hooks / "post-commit").chmod(0o755)
    (hooks / "pre-commit").write_bytes(b"#!/bin/sh\necho no >&2\nexit 1\n")
    (hooks / "pre-commit").chmod(0o755)
    monkeypatch.chdir(repo)
    assert main(["install"]) == 0
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    env = hook_env(NEO_HOOK_SYNC="1")
    proc = subprocess.run(["git", "commit", "-qm", "blocked"], cwd=repo, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1                                   # the user's own pre-commit said no
    (hooks / "pre-commit.neo-chained").chmod(0o644)               # not executable: git would skip it too
    git(repo, "commit", "-qm", "goes through", env=env)
    assert "user hook ran" in (repo / ".git" / "user-hook.log").read_text()


def test_hooks_path_inside_the_work_tree_is_refused(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    git(repo, "config", "core.hooksPath", ".githooks")
    monkeypatch.chdir(repo)
    assert main(["install"]) == 1
    err = capsys.readouterr().err
    assert "core.hooksPath" in err and "hint:" in err
    assert not (repo / ".githooks").exists()


def test_hooks_path_outside_the_work_tree_is_used(repo_with_commit, tmp_path, monkeypatch):
    repo = repo_with_commit
    shared = tmp_path / "shared-hooks"
    git(repo, "config", "core.hooksPath", str(shared))
    monkeypatch.chdir(repo)
    assert main(["install"]) == 0
    assert (shared / "post-commit").is_file() and not (repo / ".git" / "hooks" / "post-commit").exists()
    assert main(["install", "--uninstall"]) == 0
    assert list(shared.iterdir()) == []


def test_linked_worktree_commits_are_processed(repo_with_commit, tmp_path, monkeypatch):
    from tests.helpers.outcomes import BASE, RETRY, note, setup_repo, suggest

    repo = repo_with_commit
    fact_id = setup_repo(repo)
    other = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(other))
    monkeypatch.chdir(other)
    assert main(["install"]) == 0
    assert (repo / ".git" / "hooks" / "post-commit").is_file()      # the common hooks folder
    suggest(other, RETRY, [fact_id])
    (other / "src" / "db.py").write_text(BASE + RETRY)
    git(other, "commit", "-qam", "adopt in a worktree", env=hook_env(NEO_HOOK_SYNC="1"))
    assert [r["verdict"] for r in note(other) if r["type"] == "outcome"] == ["accepted"]
    assert (repo / ".git" / "neo" / "hook.log").is_file()


def test_uninstall_leaves_a_hook_that_is_no_longer_ours(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    monkeypatch.chdir(repo)
    assert main(["install"]) == 0
    (repo / ".git" / "hooks" / "post-merge").write_text("#!/bin/sh\n# replaced by hand\n")
    assert main(["install", "--uninstall"]) == 0
    assert "replaced by hand" in (repo / ".git" / "hooks" / "post-merge").read_text()
    assert "not our shim" in capsys.readouterr().err
