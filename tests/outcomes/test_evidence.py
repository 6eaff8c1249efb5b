"""Confidence moves only on real evidence (issue 17): retired facts never gain, every suggestion
whose file a commit changed gets an outcome, `suggest` checks the facts and the file."""
from __future__ import annotations

import json

from neo_git.cli import main
from neo_git.store import FactStore
from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import BASE, RETRY, fact, process_head, setup_repo, suggest

MAKE_STR = "def make_str(value):\n    return str(value)\n"


def _status(repo, suggestion_id):
    from neo_git.identity import open_repository, repository_paths
    from neo_git.outcomes.suggestions import load_suggestions

    return {s.id: s for s in load_suggestions(repository_paths(open_repository(repo)))}[suggestion_id]


def test_a_superseded_fact_gains_nothing_from_advice_that_ships(repo_with_commit):
    """The reproduction: a superseded fact linked to an edit rose to confidence 1.00 while invalid."""
    repo = repo_with_commit
    current = setup_repo(repo)
    store = FactStore.open(repo)
    old = store.add("Retry count", "Retry three times.", kind="decision", confidence=0.9)
    s = suggest(repo, RETRY, [current, old.id])
    store.add("Retry count", "Retry five times.", kind="decision", supersedes=old.id)
    commit_files(repo, {"src/db.py": BASE + RETRY}, "adopt")
    process_head(repo)
    assert _status(repo, s.id).status == "accepted"
    retired = fact(repo, old.id)
    assert not retired.is_valid
    assert (retired.metadata.confidence, retired.metadata.success_count) == (old.metadata.confidence, 0)
    assert fact(repo, current).metadata.success_count == 1         # the valid fact got the evidence


def test_a_commit_that_rewrote_the_suggested_function_gives_superseded(repo_with_commit, monkeypatch, capsys):
    """The reproduction: a commit that rewrote a suggested function left `0 outcome(s)`."""
    repo = repo_with_commit
    commit_files(repo, {"src/strings.py": MAKE_STR}, "strings")
    fact_id = FactStore.open(repo).add("Guard clauses", "Return early on None.").id
    s = suggest(repo, "def make_str(value):\n    if value is None:\n        return ''\n    return str(value)\n",
                [fact_id], file="src/strings.py")
    commit_files(repo, {"src/strings.py": "def make_str(item, default=''):\n    return default if item is None "
                                          "else format(item)\n"}, "rewrite make_str")
    before = fact(repo, fact_id).metadata
    process_head(repo)
    got = _status(repo, s.id)
    assert got.status == "superseded" and got.outcome["verdict"] == "superseded"
    after = fact(repo, fact_id).metadata
    assert (after.confidence, after.success_count) == (before.confidence, before.success_count)
    monkeypatch.chdir(repo)
    capsys.readouterr()
    assert main(["outcomes"]) == 0
    out = capsys.readouterr().out
    assert "SUPERSEDED" in out and "src/strings.py" in out and "pending:" not in out


def test_a_file_committed_or_deleted_without_the_suggestion_gives_abandoned(repo_with_commit):
    repo = repo_with_commit
    commit_files(repo, {"src/strings.py": MAKE_STR, "src/gone.py": MAKE_STR}, "strings")
    kept = suggest(repo, "def join_all(parts):\n    return ''.join(parts)\n", file="src/strings.py")
    dropped = suggest(repo, "def other(x):\n    return x * 2\n", file="src/gone.py")
    commit_files(repo, {"src/strings.py": MAKE_STR + "\n\ndef shout(text):\n    return text.upper()\n",
                        "src/gone.py": None}, "unrelated change, and a deletion")
    process_head(repo)
    assert _status(repo, kept.id).status == "abandoned"
    assert _status(repo, dropped.id).status == "abandoned"
    verdicts = {r.get("suggestion"): r.get("verdict") for r in
                (json.loads(line) for line in git(repo, "notes", "--ref=neo", "show", "HEAD").splitlines())}
    assert verdicts[kept.id] == verdicts[dropped.id] == "abandoned"


def test_suggest_takes_prefixes_and_refuses_unknown_retired_facts_and_outside_files(
        repo_with_commit, monkeypatch, capsys, tmp_path):
    repo = repo_with_commit
    current = setup_repo(repo)
    store = FactStore.open(repo)
    old = store.add("Retry count", "Retry three times.", kind="decision")
    new = store.add("Retry count", "Retry five times.", kind="decision", supersedes=old.id)
    code = tmp_path / "s.py"
    code.write_text(RETRY)
    monkeypatch.chdir(repo)
    capsys.readouterr()
    assert main(["suggest", "--file", "src/db.py", "--code-file", str(code), "--fact", current[:8], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fact_ids"] == [current]   # the 8-digit prefix `recall` prints
    assert main(["suggest", "--file", "src/db.py", "--code-file", str(code), "--fact", "ffffffffffffffff"]) == 1
    assert "no fact 'ffffffffffffffff'" in capsys.readouterr().err
    assert main(["suggest", "--file", "src/db.py", "--code-file", str(code), "--fact", old.id[:8]]) == 1
    err = capsys.readouterr().err
    assert "no longer valid" in err and new.id in err and "hint:" in err
    assert main(["suggest", "--file", str(tmp_path / "elsewhere.py"), "--code-file", str(code)]) == 1
    assert "outside the repository" in capsys.readouterr().err
    assert main(["suggest", "--file", "src/new_module.py", "--code-file", str(code)]) == 0
    assert "not in the work tree yet" in capsys.readouterr().err
