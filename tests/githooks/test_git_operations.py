"""With the hooks installed, every history-changing git command succeeds — even when git-neo
is missing, ~/.neo is corrupt, the store ref is locked or absent — and outcome state
follows merges, squashes, amends and cherry-picks."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from neo_git.cli import main
from tests.conftest import commit_files, git
from tests.outcome_helpers import BASE, RETRY, VENV_BIN, note, setup_repo, suggest

SQUASH_SECOND = "sed -i -e '2s/^pick/squash/'"


def run(repo: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"git {' '.join(args)} failed: {proc.stderr}"
    return proc


def history_operations(repo: Path, env: dict) -> dict[str, str]:
    """commit, merge, rebase -i with a squash, amend, cherry-pick; returns commit ids."""
    ids = {}

    def commit_here(repo: Path, files: dict[str, str], message: str) -> None:
        # every commit runs the hooks with the test's PATH (CI has git-neo on its own PATH)
        for name, text in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
            run(repo, env, "add", "--", name)
        run(repo, env, "commit", "-q", "-m", message)

    (repo / "src" / "db.py").write_text(BASE + "\n\n" + RETRY)
    run(repo, env, "commit", "-qam", "adopt retry")
    ids["commit"] = run(repo, env, "rev-parse", "HEAD").stdout.strip()
    run(repo, env, "checkout", "-q", "-b", "feature")
    commit_here(repo, {"src/feature.py": "def feature():\n    return 1\n"}, "feature")
    run(repo, env, "checkout", "-q", "main")
    commit_here(repo, {"src/other.py": "def other():\n    return 2\n"}, "other")
    run(repo, env, "merge", "-q", "--no-edit", "feature")
    commit_here(repo, {"src/one.py": "def one():\n    return 1\n"}, "one")
    commit_here(repo, {"src/two.py": "def two():\n    return 2\n"}, "two")
    run(repo, {**env, "GIT_SEQUENCE_EDITOR": SQUASH_SECOND, "GIT_EDITOR": "true"}, "rebase", "-q", "-i", "HEAD~2")
    ids["squashed"] = run(repo, env, "rev-parse", "HEAD").stdout.strip()
    run(repo, env, "commit", "-q", "--amend", "-m", "one and two")
    ids["amended"] = run(repo, env, "rev-parse", "HEAD").stdout.strip()
    run(repo, env, "checkout", "-q", "-b", "side", "HEAD~1")
    commit_here(repo, {"src/side.py": "def side():\n    return 3\n"}, "side")
    side = run(repo, env, "rev-parse", "HEAD").stdout.strip()
    run(repo, env, "checkout", "-q", "main")
    run(repo, env, "cherry-pick", side)
    ids["picked"] = run(repo, env, "rev-parse", "HEAD").stdout.strip()
    assert run(repo, env, "status", "--porcelain").stdout == ""
    assert (repo / "src" / "side.py").is_file() and (repo / "src" / "two.py").is_file()
    return ids


@pytest.fixture
def installed(repo_with_commit, monkeypatch):
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    monkeypatch.chdir(repo)
    assert main(["install"]) == 0
    return repo, fact_id


def test_outcome_state_follows_every_history_operation(installed):
    repo, fact_id = installed
    suggest(repo, RETRY, [fact_id])
    env = {**os.environ, "PATH": VENV_BIN + os.pathsep + os.environ["PATH"], "NEO_HOOK_SYNC": "1"}
    ids = history_operations(repo, env)
    assert [r["verdict"] for r in note(repo, ids["commit"]) if r["type"] == "outcome"] == ["accepted"]
    # the squash and the amend carry the notes of what they replaced; nothing counted twice
    squashed = note(repo, ids["amended"])
    assert {r["file"] for r in squashed if r.get("verdict") == "independent"} >= {"src/one.py", "src/two.py"}
    assert note(repo, ids["picked"])
    from neo_git.store import FactStore

    assert FactStore.open(repo).get(fact_id).metadata.success_count == 1
    log = (repo / ".git" / "neo" / "hook.log").read_text()
    assert "internal error" not in log and "post-rewrite rebase" in log and "post-rewrite amend" in log


def test_everything_succeeds_when_git_neo_is_not_on_path(installed):
    repo, _ = installed
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    assert subprocess.run(["sh", "-c", "command -v git-neo"], env=env).returncode != 0
    history_operations(repo, env)
    assert not (repo / ".git" / "neo" / "hook.log").exists()


def test_everything_succeeds_with_a_corrupt_home_a_locked_and_absent_store(installed, isolated_env):
    repo, fact_id = installed
    suggest(repo, RETRY, [fact_id])
    neo_home = Path(os.environ["NEO_HOME"])
    (neo_home / "facts").mkdir(parents=True, exist_ok=True)
    (neo_home / "facts" / "facts_global.json").write_text("{not json")
    (neo_home / "config.json").write_text("[broken")
    git(repo, "update-ref", "-d", "refs/neo/facts")                    # absent...
    lock = repo / ".git" / "refs" / "neo" / "facts.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")                                                 # ...and locked
    env = {**os.environ, "PATH": VENV_BIN + os.pathsep + os.environ["PATH"], "NEO_HOOK_SYNC": "1"}
    ids = history_operations(repo, env)
    log = (repo / ".git" / "neo" / "hook.log").read_text()
    assert "will retry" in log                                          # the worker ran, failed softly
    lock.unlink()
    # once the lock is gone the next worker catches up on what was left behind
    commit_files(repo, {"src/later.py": "def later():\n    return 0\n"}, "later")
    from tests.outcome_helpers import process_head

    process_head(repo)
    verdicts = [r["verdict"] for r in note(repo, ids["commit"]) if r["type"] == "outcome"]
    assert verdicts == ["accepted"]
