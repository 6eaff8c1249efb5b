"""Case 9: the smaller findings."""
from __future__ import annotations

import os
import time

import pytest

from tests.helpers.git import commit_files, git
from tests.helpers.plumbing import neo, ref_state


def test_a_stale_ref_lock_fails_fast_with_gits_own_wording(team_repo, capsys):
    repo, _ = team_repo
    lock = repo / ".git" / "refs" / "neo" / "facts.lock"
    lock.write_text("")
    old = time.time() - 60
    os.utime(lock, (old, old))  # left behind by a process killed a minute ago
    before = ref_state(repo)
    started = time.monotonic()
    result = neo(capsys, "add", "Layout", "Code lives under src/.")
    elapsed = time.monotonic() - started
    assert result.code == 1
    assert f"fatal: Unable to create '{lock}': File exists." in result.err
    assert "remove the file manually to continue" in result.err and "git neo doctor --fix" in result.err
    assert elapsed < 3, f"waited {elapsed:.1f} s on a stale lock"
    assert ref_state(repo) == before


def test_a_symbolic_facts_ref_fails_fast(team_repo, capsys):
    repo, _ = team_repo
    git(repo, "update-ref", "-d", "refs/neo/facts")
    git(repo, "symbolic-ref", "refs/neo/facts", "refs/heads/main")
    head = git(repo, "rev-parse", "refs/heads/main").strip()
    for argv in (["list"], ["add", "A fact", "body"]):
        started = time.monotonic()
        result = neo(capsys, *argv)
        assert time.monotonic() - started < 3
        assert result.code == 1, result.err
        assert "symbolic" in result.err and "hint:" in result.err
    assert git(repo, "rev-parse", "refs/heads/main").strip() == head


def test_a_relative_neo_home_is_refused(team_repo, capsys, monkeypatch):
    repo, _ = team_repo
    monkeypatch.setenv("NEO_HOME", "relative-home")
    result = neo(capsys, "add", "--scope", "global", "Global rule", "body")
    assert result.code == 1 and "NEO_HOME" in result.err and "hint:" in result.err
    assert not (repo / "relative-home").exists()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_scores_that_are_not_numbers_are_never_printed_as_nan(value):
    from neo_git.cli.output import score_label

    label = score_label(value)
    assert "nan" not in label.lower() and "inf" not in label.lower()
    assert score_label(0.4567) == "[0.46]"


def test_binary_python_without_an_early_nul_is_not_a_god_file(repo_with_commit, monkeypatch, capsys):
    import random

    rng = random.Random(3)
    body = bytes(rng.choice(list(range(1, 9)) + list(range(14, 32)) + list(range(127, 256)))
                 for _ in range(60_000)) + b"\n" * 5000
    data = b"x = 1\n" * 1500 + body  # 9,000 text bytes first: git's 8,000-byte sniff sees no NUL
    commit_files(repo_with_commit, {"blob.py": data})
    monkeypatch.chdir(repo_with_commit)
    result = neo(capsys, "health", "--json")
    assert result.code == 0, result.err
    import json

    report = json.loads(result.out)
    assert "blob.py" not in json.dumps(report.get("god_files", []))


def test_the_empty_query_hint_talks_about_a_question(team_repo, capsys):
    result = neo(capsys, "recall", "  ")
    assert result.code == 1
    assert "fact" not in result.err.split("hint:", 1)[1] and "git neo recall" in result.err


def test_model_pull_says_downloading_only_when_it_downloads(team_repo, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = neo(capsys, "model", "pull")
    assert result.code == 1, result.err
    assert "downloading" not in result.err
