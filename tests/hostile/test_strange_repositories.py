"""Strange repositories: a clear error or a correct result, never exit 3."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.git import commit_files, git
from tests.helpers.plumbing import neo

NON_UTF8 = os.fsdecode(b"caf\xe9.py")       # a file name git stores as bytes that are not UTF-8


def test_a_symlink_loop_named_agents_md(repo_with_commit, capsys, monkeypatch):
    monkeypatch.chdir(repo_with_commit)
    os.symlink("AGENTS.md", repo_with_commit / "AGENTS.md")
    (repo_with_commit / "CLAUDE.md").write_text("# Rules\n\n## Tests\n\nrun the tests before pushing\n")
    for args in (["init"], ["ingest"]):
        result = neo(capsys, *args)
        assert result.code == 0, (args, result.err)
        assert "AGENTS.md" in result.err and "loop" in result.err
    assert "Rules › Tests" in neo(capsys, "list").out


def test_a_non_utf8_file_name_in_suggest_and_the_worker(repo_with_commit, capsys, monkeypatch, tmp_path):
    from tests.helpers.outcomes import process_head

    monkeypatch.chdir(repo_with_commit)
    neo(capsys, "init")
    code = "def grand_total(items, tax):\n    return sum(items) * (1 + tax)\n"
    code_file = tmp_path / "code.py"
    code_file.write_text(code)
    result = neo(capsys, "suggest", "--file", NON_UTF8, "--code-file", str(code_file), "--description", "totals")
    assert result.code == 0, result.err
    assert "\\xe9" in result.out or "caf" in result.out
    (repo_with_commit / NON_UTF8).write_text(code)
    git(repo_with_commit, "add", "-A")
    git(repo_with_commit, "commit", "-q", "-m", "ship the totals")
    [first] = process_head(repo_with_commit)
    assert not first.errors, first.errors
    assert [r["verdict"] for r in first.records if r["type"] == "outcome"] == ["accepted"]
    outcomes = neo(capsys, "outcomes")
    assert outcomes.code == 0 and "ACCEPTED    caf\\xe9.py" in outcomes.out
    listed = neo(capsys, "list", "--kind", "review")
    assert "caf\\xe9.py" in listed.out


def test_a_commit_the_worker_cannot_process_is_failed_once_and_never_blocks(repo_with_commit, monkeypatch):
    from neo_git.errors import InvalidFact
    from neo_git.outcomes import confidence
    from neo_git.outcomes.ledger import Ledger
    from tests.helpers.outcomes import process_head, setup_repo, suggest

    fact_id = setup_repo(repo_with_commit)
    code = "def retry_twice(fn):\n    return fn() or fn()\n"
    suggest(repo_with_commit, code, [fact_id])
    commit_files(repo_with_commit, {"src/db.py": code}, "takes the advice")
    bad = git(repo_with_commit, "rev-parse", "HEAD").strip()
    real = confidence.review_fact

    def broken(*args, **kwargs):
        raise InvalidFact("facts: subject is not valid UTF-8")

    monkeypatch.setattr("neo_git.outcomes.processing.review_fact", broken, raising=False)
    monkeypatch.setattr(confidence, "review_fact", broken)
    [result] = process_head(repo_with_commit)
    assert result.errors and "not be tried again" in result.errors[-1]
    ledger = Ledger(repo_with_commit / ".git" / "neo")
    assert ledger.commits[bad]["via"] == "failed" and bad not in ledger.retry
    monkeypatch.setattr(confidence, "review_fact", real)
    monkeypatch.setattr("neo_git.outcomes.processing.review_fact", real, raising=False)
    code2 = "def retry_thrice(fn):\n    return fn() or fn() or fn()\n"
    suggest(repo_with_commit, code2, [fact_id])
    commit_files(repo_with_commit, {"src/db.py": code2}, "takes more advice")
    results = process_head(repo_with_commit)
    assert [r.commit for r in results if not r.skipped] == [git(repo_with_commit, "rev-parse", "HEAD").strip()]
    assert not results[-1].errors and any(r["type"] == "outcome" for r in results[-1].records)


def test_a_separate_git_dir_uses_the_work_tree_git_uses(tmp_path, capsys, monkeypatch):
    work, gitdir = tmp_path / "work", tmp_path / "store.git"
    git(tmp_path, "init", "-q", "--separate-git-dir", str(gitdir), str(work))
    git(work, "config", "user.name", "T"), git(work, "config", "user.email", "t@example.com")
    (work / "CLAUDE.md").write_text("# Rules\n\n## Pushing\n\nnever push to main directly\n")
    commit_files(work, {"src/a.py": "x = 1\n"}, "first")
    monkeypatch.chdir(work)
    installed = neo(capsys, "install")
    assert installed.code == 0, installed.err
    ingested = neo(capsys, "ingest")
    assert ingested.code == 0 and "CLAUDE.md" in ingested.out
    assert "Rules › Pushing" in neo(capsys, "list").out
    from neo_git.identity import open_repository, repository_paths

    paths = repository_paths(open_repository())
    assert paths.workdir == work.resolve() and paths.git_dir == gitdir.resolve()
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
           "NEO_HOOK_SYNC": "1"}
    proc = subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "second"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert '"type":"commit"' in git(work, "notes", "--ref=neo", "show", "HEAD", check=False)


def test_a_sha256_repository_is_a_clear_refusal(tmp_path, capsys, monkeypatch):
    repo = tmp_path / "sha"
    proc = subprocess.run(["git", "init", "-q", "--object-format=sha256", str(repo)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip("this git cannot make sha256 repositories")
    git(repo, "config", "user.name", "T"), git(repo, "config", "user.email", "t@example.com")
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    monkeypatch.chdir(repo)
    for args in (["init"], ["list"], ["add", "a", "b"], ["install"], ["health"], ["doctor"], ["recall", "x"]):
        result = neo(capsys, *args)
        assert result.code == 1, (args, result.err)
        assert "sha256" in result.err and "not supported" in result.err and "hint:" in result.err, args


@pytest.mark.parametrize("bare", [False, True])
def test_an_empty_repository_never_crashes(tmp_path, capsys, monkeypatch, bare):
    repo = tmp_path / "empty"
    git(tmp_path, "init", "-q", *(["--bare"] if bare else []), str(repo))
    monkeypatch.chdir(repo)
    commands = [["init"], ["list"], ["add", "a rule", "a body"], ["recall", "rule"], ["health"],
                ["health", "--json"], ["doctor"], ["review"], ["outcomes"], ["export", str(tmp_path / "x.json")],
                ["ingest"], ["show", "0123456789abcdef"], ["sync"], ["install"], ["turns"], ["gc"],
                ["list", "--untrusted"], ["trust", "list"]]
    for args in commands:
        result = neo(capsys, *args)
        assert result.code in (0, 1), (args, result.code, result.err)
        if result.code == 1:
            assert "fatal:" in result.err and "hint:" in result.err, (args, result.err)
