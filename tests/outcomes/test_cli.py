"""`git neo suggest`, `git neo outcomes`, `git neo show` (outcome history), the hook runner."""
from __future__ import annotations

import json

from neo_git.cli import main
from neo_git.fileio import locked
from tests.helpers.git import commit_files
from tests.helpers.outcomes import BASE, RETRY, process_head, setup_repo


def test_suggest_then_commit_then_outcomes_and_show(repo_with_commit, monkeypatch, capsys, tmp_path):
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    code_file = tmp_path / "suggested.py"
    code_file.write_text(RETRY)
    monkeypatch.chdir(repo / "src")                         # a path typed in a subfolder is relative to it
    assert main(["suggest", "--file", "db.py", "--code-file", str(code_file), "--fact", fact_id,
                 "--description", "extract the retry loop", "--json"]) == 0
    recorded = json.loads(capsys.readouterr().out)
    assert recorded["file"] == "src/db.py" and recorded["fact_ids"] == [fact_id] and recorded["status"] == "pending"
    commit_files(repo, {"src/db.py": BASE + RETRY}, "extract retry loop")
    process_head(repo)
    assert main(["outcomes"]) == 0
    text = capsys.readouterr().out
    assert "ACCEPTED" in text and "src/db.py" in text and "extract the retry loop" in text
    assert f"fact {fact_id[:8]}: confidence 0.50 ->" in text
    assert main(["outcomes", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcomes"][0]["suggestion"] == recorded["id"] and data["pending"] == []
    assert main(["show", fact_id]) == 0
    shown = capsys.readouterr().out
    assert "Outcomes (commits that moved its confidence):" in shown and "accepted  src/db.py" in shown
    assert main(["show", fact_id, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["outcomes"][0]["verdict"] == "accepted"


def test_suggest_refuses_bad_input(repo_with_commit, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(repo_with_commit)
    empty = tmp_path / "empty.py"
    empty.write_text("  \n")
    assert main(["suggest", "--file", "a.py", "--code-file", str(empty)]) == 1
    assert "needs the code" in capsys.readouterr().err
    assert main(["suggest", "--file", "../outside.py", "--code-file", str(tmp_path / "missing.py")]) == 1
    assert main(["suggest", "--file", "a.py"]) == 2                  # --code-file or --diff-file is required
    (tmp_path / "c.py").write_text("x = 1\n")
    assert main(["suggest", "--file", "a.py", "--code-file", str(tmp_path / "c.py"), "--fact", "nothex"]) == 1
    assert "no fact 'nothex'" in capsys.readouterr().err       # ids and prefixes are looked up in the store


def test_hook_runner_is_fail_soft(repo_with_commit, monkeypatch, capsys):
    monkeypatch.chdir(repo_with_commit)
    assert main(["hook", "no-such-hook"]) == 0
    assert main(["hook", "post-commit", "0" * 40]) == 0              # not a commit: logged, exit 0
    monkeypatch.setenv("NEO_DISABLE", "1")
    assert main(["hook", "pre-commit"]) == 0


def test_work_queued_while_another_worker_holds_the_lock_is_not_lost(repo_with_commit, monkeypatch):
    from neo_git.githooks import runner
    from neo_git.githooks.runner import queue_and_drain
    from neo_git.identity import find_repository_paths
    from neo_git.outcomes.queue import drain

    repo = repo_with_commit
    monkeypatch.chdir(repo)
    head = commit_files(repo, {"m.py": "def m():\n    return 1\n"}, "m")
    neo_dir = find_repository_paths(repo).neo_dir
    with locked(neo_dir / "outcomes.lock"):             # another worker is busy
        queue_and_drain({"op": "commits", "trigger": "post-commit", "commits": [head], "catch_up": True})
        assert (neo_dir / "queue.jsonl").stat().st_size > 0
    assert drain(neo_dir, runner._process_items)      # the holder's final look takes it
    assert head in json.loads((neo_dir / "processed.json").read_text())["commits"]


def test_hook_log_is_rotated(tmp_path):
    from neo_git.hooklog import rotate_hook_log as _rotate_log

    log = tmp_path / "hook.log"
    log.write_bytes(b"x" * 2000)
    _rotate_log(log, limit=1000)
    assert not log.exists() and (tmp_path / "hook.log.1").stat().st_size == 2000


def test_post_merge_without_orig_head_processes_head(repo_with_commit, monkeypatch):
    from neo_git.identity import find_repository_paths
    from tests.helpers.git import git

    repo = repo_with_commit
    monkeypatch.chdir(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    assert main(["hook", "post-merge", "0", head, "ORIG_HEAD"]) == 0
    ledger = json.loads((find_repository_paths(repo).neo_dir / "processed.json").read_text())
    assert head in ledger["commits"]
