"""`git neo add --cite/--path`, `git neo verify [--rev] [--json]`, `git neo recall --file`, and the
`stale` review items through the CLI, as a user runs them."""
from __future__ import annotations

import json

import pytest

from neo_git.cli import main
from tests.helpers.citations import CONFIG, process
from tests.helpers.git import commit_files, git


@pytest.fixture
def repo(repo_with_commit, monkeypatch):
    monkeypatch.chdir(repo_with_commit)
    commit_files(repo_with_commit, {"src/app/config.py": CONFIG, "migrations/001.sql": "CREATE TABLE t (id int);\n"})
    assert main(["init", "--json"]) == 0
    return repo_with_commit


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def add(capsys, *argv) -> str:
    code, out, err = run(capsys, "add", "--json", *argv)
    assert code == 0, err
    return json.loads(out)["id"]


def test_the_issue_walkthrough(repo, capsys):
    cited = add(capsys, "--kind", "pattern", "Config loading retries", "load_config retries 3 times with backoff",
                "--cite", "src/app/config.py:load_config")
    scoped = add(capsys, "--kind", "constraint", "No ORM in migrations", "Migrations use raw SQL only.",
                 "--path", "migrations/**")
    code, out, _ = run(capsys, "verify")
    assert code == 0 and "ok       src/app/config.py:load_config" in out and "1 verified" in out
    code, out, _ = run(capsys, "verify", "--json")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert json.loads(out) == {"rev": head, "facts": [{"id": cited, "citations": [
        {"path": "src/app/config.py", "symbol": "load_config", "state": "verified", "since": head}]}]}
    code, out, _ = run(capsys, "recall", "how is config loaded?", "--file", "src/app/config.py", "--json")
    result = json.loads(out)
    assert result["valid_facts"][0]["id"] == cited and result["file_facts"] == [cited]
    assert scoped not in [f["id"] for f in result["constraints"]]
    code, out, _ = run(capsys, "recall", "anything", "--file", "migrations/002.sql", "--json")
    assert scoped in [f["id"] for f in json.loads(out)["constraints"]]
    code, out, _ = run(capsys, "show", cited)
    assert "Cites:      src/app/config.py:load_config (verified since" in out


def test_citing_what_does_not_exist_is_exit_1_with_close_matches(repo, capsys):
    before = git(repo, "rev-parse", "refs/neo/facts").strip()
    code, _, err = run(capsys, "add", "x", "--cite", "src/app/confg.py:load_config")
    assert code == 1 and "fatal: cannot cite src/app/confg.py" in err and "hint: did you mean src/app/config.py?" in err
    code, _, err = run(capsys, "add", "x", "--cite", "src/app/config.py:load_confg")
    assert code == 1 and "no function, method or class load_confg" in err and "did you mean load_config?" in err
    code, _, err = run(capsys, "add", "x", "--cite", "src/app/config.py:merge_all")
    assert code == 1 and "Settings.merge" in err
    code, _, err = run(capsys, "add", "x", "--cite", "migrations/001.sql:create")
    assert code == 1 and "cite the whole file" in err
    code, _, err = run(capsys, "add", "x", "--cite", "src/app/config.py:90-99")
    assert code == 1 and "has 16 lines" in err
    code, _, err = run(capsys, "add", "--scope", "global", "x", "--cite", "src/app/config.py")
    assert code == 1 and "cannot cite code" in err
    assert git(repo, "rev-parse", "refs/neo/facts").strip() == before    # nothing was written


def test_cite_paths_are_relative_to_the_current_directory_like_git(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo / "src")
    fact = add(capsys, "Settings merge", "merge overlays", "--cite", "app/config.py:Settings.merge")
    code, out, _ = run(capsys, "show", fact, "--json")
    [citation] = json.loads(out)["metadata"]["citations"]
    assert citation["path"] == "src/app/config.py" and citation["symbol"] == "Settings.merge"


def test_stale_facts_are_marked_rank_below_and_enter_review(repo, capsys):
    stale = add(capsys, "--kind", "pattern", "Config loading retries", "load_config retries 3 times with backoff",
                "--cite", "src/app/config.py:load_config")
    fresh = add(capsys, "--kind", "decision", "Config file reading", "load_config reads from a slow mount",
                "--cite", "src/app/config.py:Settings.merge")
    changed = commit_files(repo, {"src/app/config.py": CONFIG.replace("attempts=3", "attempts=5")}, "5 attempts")
    process(repo)
    code, out, _ = run(capsys, "recall", "load_config retries 3 times with backoff", "--json")
    result = json.loads(out)
    ids = [f["id"] for f in result["valid_facts"]]
    assert ids.index(fresh) < ids.index(stale)           # though the stale one matches the words better
    assert result["stale"][stale].startswith("cited code changed since ")
    code, out, _ = run(capsys, "recall", "load_config retries 3 times with backoff")
    assert "[stale: cited code changed since" in out
    code, out, _ = run(capsys, "list")
    assert f"{stale}" in out and "[stale:" in out.split(stale)[1].splitlines()[0]
    code, out, _ = run(capsys, "review")
    assert f"{stale} is stale" in out and f"cited code changed in {changed[:7]}" in out
    assert "keep | retire | update" in out

    code, out, _ = run(capsys, "review", "keep", stale)
    assert code == 0 and "re-anchored" in out
    code, out, _ = run(capsys, "verify", "--json")
    assert [c["state"] for f in json.loads(out)["facts"] if f["id"] == stale for c in f["citations"]] == ["verified"]
    assert main(["review", "--json"]) == 0 and json.loads(capsys.readouterr().out) == []


def test_review_retire_and_update_of_a_stale_fact(repo, capsys):
    one = add(capsys, "Retries", "load_config retries 3 times", "--cite", "src/app/config.py:load_config")
    two = add(capsys, "--kind", "decision", "Merge order", "other wins", "--cite", "src/app/config.py:Settings.merge")
    commit_files(repo, {"src/app/config.py": CONFIG.replace("attempts=3", "attempts=5")
                        .replace("{**self.__dict__, **other}", "{**other, **self.__dict__}")}, "both change")
    process(repo)
    code, out, err = run(capsys, "review", "update", one)
    assert code == 1 and "needs what is true now" in err
    code, out, _ = run(capsys, "review", "update", one, "load_config retries 5 times", "--json")
    new = json.loads(out)["by"]
    code, out, _ = run(capsys, "show", new, "--json")
    shown = json.loads(out)
    assert shown["supersedes"] == one and shown["body"] == "load_config retries 5 times"
    assert shown["metadata"]["citations"][0]["state"] == "verified"
    code, out, _ = run(capsys, "review", "retire", two)
    assert code == 0
    code, out, _ = run(capsys, "show", two, "--json")
    assert json.loads(out)["is_valid"] is False
    assert main(["review", "--json"]) == 0 and json.loads(capsys.readouterr().out) == []


def test_verify_against_an_older_revision_only_reports(repo, capsys):
    add(capsys, "Retries", "load_config retries 3 times", "--cite", "src/app/config.py:load_config")
    first = git(repo, "rev-parse", "HEAD").strip()
    second = commit_files(repo, {"src/app/config.py": CONFIG.replace("attempts=3", "attempts=5")}, "5")
    before = git(repo, "rev-parse", "refs/neo/facts").strip()
    code, out, _ = run(capsys, "verify", "--rev", first, "--json")
    assert json.loads(out)["facts"][0]["citations"][0]["state"] == "verified"
    code, out, _ = run(capsys, "verify", "--json")   # HEAD: no worker ran, verify finds and records it
    [row] = json.loads(out)["facts"][0]["citations"]
    assert row["state"] == "changed" and row["since"] == second
    assert git(repo, "rev-parse", "refs/neo/facts").strip() != before
    code, _, err = run(capsys, "verify", "--rev", "no-such-rev")
    assert code == 1 and "unknown revision" in err
