"""True end-to-end runs of the detached worker: 20 commits back to back, workers overlapping."""
from __future__ import annotations

import json
import os
import time

from tests.helpers.git import git
from tests.helpers.outcomes import BASE, VENV_BIN, note, setup_repo, suggest

N = 20


def test_twenty_back_to_back_commits_lose_nothing(repo_with_commit, monkeypatch):
    repo = repo_with_commit
    git(repo, "config", "neo.autoGc", "false")   # counts below are of outcome facts, untouched by upkeep
    fact_id = setup_repo(repo)
    from neo_git.githooks.install import install
    from neo_git.identity import open_repository

    # the hand-off shims only: the synchronous pre-commit guard is tested on its own
    install(open_repository(repo), names=("post-commit", "post-merge", "post-rewrite"))
    env = {"PATH": VENV_BIN + os.pathsep + os.environ["PATH"]}   # detached workers (no NEO_HOOK_SYNC)
    body = BASE
    commits = []
    for i in range(N):
        code = f"def step_{i}(value):\n    total = value * {i + 2}\n    return total - {i}\n"
        suggest(repo, code, [fact_id], description=f"step {i}")
        body += "\n\n" + code
        (repo / "src" / "db.py").write_text(body)
        git(repo, "commit", "-qam", f"step {i}", env=env)
        commits.append(git(repo, "rev-parse", "HEAD").strip())
    ledger = repo / ".git" / "neo" / "processed.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            done = json.loads(ledger.read_text())["commits"]
        except (OSError, ValueError, KeyError):
            done = {}
        if all(c in done for c in commits):
            break
        time.sleep(0.2)
    # every commit has its accepted outcome, and every one of them moved the fact
    for commit in commits:
        assert [r["verdict"] for r in note(repo, commit) if r["type"] == "outcome"] == ["accepted"], commit
    from neo_git.store import FactStore

    store = FactStore.open(repo)
    assert store.get(fact_id).metadata.success_count == N
    assert len([f for f in store.list(kind="review") if "outcome" in f.tags]) == N
    log = (repo / ".git" / "neo" / "hook.log").read_text()
    assert "internal error" not in log
