"""Case 6: import applies the scope cap itself and says what it evicted."""
from __future__ import annotations

import json

from tests.helpers.plumbing import neo
from tests.helpers.store import open_store


def _facts_file(path, n, start=0):
    facts = [{"id": f"{i:016x}", "subject": f"imported fact number {i}", "body": f"detail {i}",
              "kind": "pattern", "scope": "project", "metadata": {"confidence": 0.3}}
             for i in range(start, start + n)]
    path.write_text(json.dumps({"version": "2.0", "facts": facts}))
    return path


def test_import_evicts_down_to_the_cap_and_names_the_evicted(team_repo, tmp_path):
    from neo_git.transfer import import_file

    repo, ids = team_repo
    store = open_store(repo, project=20)
    summary = import_file(store, _facts_file(tmp_path / "facts.json", 30))
    evicted = summary["evicted"]["project"]
    assert len(evicted) == 12  # 2 + 30 valid facts, cap 20
    assert ids[1] not in evicted  # a constraint is never evicted
    fresh = open_store(repo, project=20)
    valid = fresh.list(scope="project")
    assert len(valid) == 20
    after = fresh.add_detailed("One more fact", "unrelated words entirely")
    assert len(after.evicted) <= 1


def test_cli_import_reports_evictions(team_repo, tmp_path, capsys):
    path = _facts_file(tmp_path / "many.json", 520)
    result = neo(capsys, "import", str(path))
    assert result.code == 0, result.err
    assert "evicted 22 project" in result.out  # 522 valid, cap 500
    listed = neo(capsys, "list", "--scope", "project", "--json")
    assert len(json.loads(listed.out)) == 500
    added = neo(capsys, "add", "--json", "Yet another fact", "different words here")
    assert len(json.loads(added.out)["evicted"]) <= 1


def test_import_over_the_cap_never_evicts_a_teammates_fact(repo_with_commit, tmp_path, monkeypatch):
    """As for an add (issue 35), the cap bounds the importer's own facts: a teammate's facts are
    neither counted nor evicted by an import."""
    from neo_git.transfer import import_file

    def as_author(email):
        for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
            monkeypatch.setenv(name, email)

    as_author("teammate@example.com")
    theirs = [open_store(repo_with_commit).add(f"Teammate fact {i}", f"their words number {i}", kind="pattern").id
              for i in range(5)]
    as_author("me@example.com")
    store = open_store(repo_with_commit, project=10)
    summary = import_file(store, _facts_file(tmp_path / "facts.json", 12))
    assert len(summary["evicted"]["project"]) == 2          # my 12 imported facts, my cap 10
    valid = {f.id for f in open_store(repo_with_commit).list(scope="project")}
    assert set(theirs) <= valid
