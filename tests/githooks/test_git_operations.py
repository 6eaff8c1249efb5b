"""With the hooks installed, every history-changing git command succeeds — even when git-neo
is missing, ~/.neo is corrupt, the store ref is locked or absent — and outcome state
follows merges, squashes, amends and cherry-picks."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import RETRY, VENV_BIN, history_operations, note, suggest


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
    from tests.helpers.outcomes import process_head

    process_head(repo)
    verdicts = [r["verdict"] for r in note(repo, ids["commit"]) if r["type"] == "outcome"]
    assert verdicts == ["accepted"]
