"""Commits made while `git-neo` is not on the hooks' PATH (a virtualenv that is not active,
an IDE) are recorded by the shims, from shell, and the next worker catches up on them."""
from __future__ import annotations

import os
import subprocess

from neo_git.cli import main
from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import RETRY, VENV_BIN, history_operations, note, suggest

NO_NEO = "/usr/bin:/bin"


def test_commits_without_git_neo_on_path_are_recorded_and_caught_up(installed):
    repo, fact_id = installed
    suggest(repo, RETRY, [fact_id])
    env = {**os.environ, "PATH": NO_NEO}
    assert subprocess.run(["sh", "-c", "command -v git-neo"], env=env).returncode != 0
    ids = history_operations(repo, env)
    missed = (repo / ".git" / "neo" / "missed.tsv").read_text().splitlines()
    hooks = [line.split("\t")[0] for line in missed]
    assert {"post-commit", "post-merge", "post-rewrite"} <= set(hooks)
    # the PATH the hooks saw (git puts its exec-path in front), the one that lacked git-neo
    assert all(line.split("\t")[4].endswith(":" + NO_NEO) for line in missed)
    assert ids["commit"] in missed[0] and note(repo, ids["commit"]) == []  # nothing processed yet

    # The next commit made with git-neo on PATH catches up on all of it, oldest first.
    with_neo = {**os.environ, "PATH": VENV_BIN + os.pathsep + os.environ["PATH"], "NEO_HOOK_SYNC": "1"}
    (repo / "src" / "later.py").write_text("def later():\n    return 0\n")
    git(repo, "add", "src/later.py")
    git(repo, "commit", "-qm", "later", env=with_neo)
    assert [r["verdict"] for r in note(repo, ids["commit"]) if r["type"] == "outcome"] == ["accepted"]
    assert {r["file"] for r in note(repo, ids["amended"]) if r.get("verdict") == "independent"} \
        >= {"src/one.py", "src/two.py"}                                    # the rewrites followed
    assert note(repo, ids["picked"])
    from neo_git.store import FactStore

    assert FactStore.open(repo).get(fact_id).metadata.success_count == 1
    log = (repo / ".git" / "neo" / "hook.log").read_text()
    assert "made while git-neo was not on the hooks' PATH (the last saw PATH=" in log and f":{NO_NEO})" in log
    assert "internal error" not in log
    neo_dir = repo / ".git" / "neo"
    assert not (neo_dir / "missed.tsv").exists() and not list(neo_dir.glob("rewrite-*.map"))


def test_doctor_reports_missed_commits_and_fix_catches_up(installed, capsys, monkeypatch):
    repo, fact_id = installed
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)     # git-neo on PATH for good, not through a venv
    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + os.environ["PATH"])
    suggest(repo, RETRY, [fact_id])
    (repo / "src" / "db.py").write_text((repo / "src" / "db.py").read_text() + "\n\n" + RETRY)
    git(repo, "commit", "-qam", "adopt retry", env={"PATH": NO_NEO})
    head = git(repo, "rev-parse", "HEAD").strip()
    capsys.readouterr()
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "1 commit was made while git-neo was not on the hooks' PATH (PATH=" in out and f":{NO_NEO})" in out
    assert "would fix with --fix: process the 1 missed hook run now" in out
    assert "`ln -s " in out and "/git-neo` makes it reachable there" in out or "`mkdir -p " in out
    assert main(["doctor", "--fix"]) == 0
    assert "fixed:   1 commit was made while git-neo was not on the hooks' PATH" in capsys.readouterr().out
    assert [r["verdict"] for r in note(repo, head) if r["type"] == "outcome"] == ["accepted"]
    assert not (repo / ".git" / "neo" / "missed.tsv").exists()


def test_a_commit_with_git_neo_on_path_records_nothing(installed):
    repo, _ = installed
    commit_files(repo, {"src/x.py": "def x():\n    return 1\n"}, "x")   # conftest's git: the test's PATH
    assert not (repo / ".git" / "neo" / "missed.tsv").exists()
