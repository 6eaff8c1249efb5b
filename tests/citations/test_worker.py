"""The commit worker re-verifies citations in the background: `git commit` never waits for it,
and a worker killed in the middle leaves nothing half-written (the next one finishes the job)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.citations import CONFIG, citations, cited_repo, facts_log, process
from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import VENV_BIN

KILL_AT = r"""
import os, sys
sys.path.insert(0, {root!r})
from neo_git.citations import recording
where = {where!r}
if where == "before-write":
    recording.Recheck.write = lambda self, message: os._exit(9)
else:   # after the facts commit, before the commit's note gets its citation lines
    recording._notes = lambda *a, **k: os._exit(9)
from neo_git.identity import open_repository
from neo_git.outcomes.processing import process_commits
r = open_repository({repo!r})
process_commits(r, [str(r.head.target)])
"""


def _killed_worker(repo: Path, where: str) -> None:
    root = str(Path(__file__).resolve().parents[2])
    proc = subprocess.run([sys.executable, "-c", KILL_AT.format(root=root, where=where, repo=str(repo))],
                          cwd=repo, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 9, proc.stderr


def _ledger(repo: Path) -> dict:
    try:
        return json.loads((repo / ".git" / "neo" / "processed.json").read_text())["commits"]
    except FileNotFoundError:
        return {}


def _citation_notes(repo: Path, rev: str) -> list[dict]:
    text = git(repo, "notes", "--ref=neo", "show", rev, check=False)
    return [r for r in (json.loads(line) for line in text.splitlines() if line.strip()) if r["type"] == "citation"]


def test_a_worker_killed_before_writing_leaves_the_facts_as_they_were(repo_with_commit):
    repo = repo_with_commit
    fact_id = cited_repo(repo)
    before = facts_log(repo)
    commit = commit_files(repo, {"src/app/config.py": CONFIG.replace("attempts=3", "attempts=5")}, "5")
    _killed_worker(repo, "before-write")
    assert facts_log(repo) == before and citations(repo, fact_id)[0]["state"] == "verified"
    assert commit not in _ledger(repo)
    process(repo)   # the next worker does it all, once
    assert citations(repo, fact_id)[0]["state"] == "changed"
    assert len(facts_log(repo)) == len(before) + 1
    assert [n["state"] for n in _citation_notes(repo, commit)] == ["changed"]


def test_a_worker_killed_after_the_facts_commit_still_gets_its_note_written_once(repo_with_commit):
    repo = repo_with_commit
    fact_id = cited_repo(repo)
    before = facts_log(repo)
    commit = commit_files(repo, {"src/app/config.py": CONFIG.replace("attempts=3", "attempts=5")}, "5")
    _killed_worker(repo, "at-the-note")
    # the facts commit is whole (compare-and-swap of one ref), the ledger was not saved
    assert citations(repo, fact_id)[0]["state"] == "changed" and len(facts_log(repo)) == len(before) + 1
    assert commit not in _ledger(repo) and _citation_notes(repo, commit) == []   # its outcome line is there
    process(repo)
    assert len(facts_log(repo)) == len(before) + 1        # nothing recorded twice
    assert [n["state"] for n in _citation_notes(repo, commit)] == ["changed"]
    process(repo)
    assert [n["state"] for n in _citation_notes(repo, commit)] == ["changed"]


def test_git_commit_does_not_wait_for_verification(repo_with_commit, tmp_path):
    """The shim hands off to a detached worker: a git-neo that takes 20 s to start (a cold disk, a
    huge store) does not hold up the commit, and the states are recorded when it is done."""
    repo = repo_with_commit
    fact_id = cited_repo(repo)
    from neo_git.githooks.install import install
    from neo_git.identity import open_repository

    install(open_repository(repo), names=("post-commit",))
    slow = tmp_path / "slow-bin"
    slow.mkdir()
    (slow / "git-neo").write_text(f"#!/bin/sh\nsleep 15\nexec {VENV_BIN}/git-neo \"$@\"\n")
    (slow / "git-neo").chmod(0o755)
    env = {**os.environ, "PATH": str(slow) + os.pathsep + os.environ["PATH"]}
    env.pop("NEO_HOOK_SYNC", None)
    (repo / "src/app/config.py").write_text(CONFIG.replace("attempts=3", "attempts=5"))
    started = time.monotonic()
    subprocess.run(["git", "commit", "-qam", "5 attempts"], cwd=repo, env=env, check=True, timeout=60,
                   stdin=subprocess.DEVNULL, capture_output=True)
    assert time.monotonic() - started < 10   # the worker sleeps 15 s first: the commit never waits for it
    assert citations(repo, fact_id)[0]["state"] == "verified"   # not yet: the worker is still starting
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and citations(repo, fact_id)[0]["state"] != "changed":
        time.sleep(0.3)
    assert citations(repo, fact_id)[0]["state"] == "changed"
