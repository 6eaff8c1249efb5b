"""Neo v2.0 import/export: round trip, idempotence, all-or-nothing, inline embeddings."""
from __future__ import annotations

import json

import pytest

from neo_git.cli import main
from neo_git.errors import NeoError
from neo_git.transfer import export_envelope, import_file
from tests.helpers.git import git
from tests.helpers.store import HTTP_NEW, HTTP_OLD, commit_messages, neo_home, open_store, snapshot_tree


def _populate(store):
    store.add("HTTP client", HTTP_OLD, kind="decision")
    store.add("HTTP client", HTTP_NEW, kind="decision")
    store.add("Secrets", "Never commit secrets.", kind="constraint", scope="global")
    store.add("Current task", "Refactoring the flag loader.", scope="session")
    store.add("Review rule", "Two approvals under payments/.", scope="org", tags=["seed"])


def _fresh_repo(tmp_path, monkeypatch, name):
    home = tmp_path / f"home-{name}"
    monkeypatch.setenv("NEO_HOME", str(home / ".neo"))
    repo = tmp_path / name
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    return repo


def test_export_then_import_into_a_fresh_home_round_trips(repo_with_commit, tmp_path, monkeypatch):
    source = open_store(repo_with_commit)
    _populate(source)
    envelope = export_envelope(source, include_invalid=True)
    assert envelope["version"] == "2.0" and len(envelope["facts"]) == 5
    assert all("embedding" not in f for f in envelope["facts"])
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(envelope), encoding="utf-8")

    target_repo = _fresh_repo(tmp_path, monkeypatch, "target")
    target = open_store(target_repo)
    summary = import_file(target, path)
    assert summary["added"] == {"global": 1, "org": 1, "project": 2, "session": 1}
    assert summary["skipped_existing"] == 0
    assert sorted(f.to_dict()["id"] for f in target.list(include_invalid=True)) == \
        sorted(f["id"] for f in envelope["facts"])
    assert export_envelope(target, include_invalid=True) == envelope
    assert (tmp_path / "home-target" / ".neo" / "facts" / "facts_global.json").exists()


def test_importing_twice_adds_nothing(repo_with_commit, tmp_path, monkeypatch):
    source = open_store(repo_with_commit)
    _populate(source)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(export_envelope(source, include_invalid=True)), encoding="utf-8")
    target_repo = _fresh_repo(tmp_path, monkeypatch, "target")
    target = open_store(target_repo)
    import_file(target, path)
    commits = commit_messages(target_repo)
    home_before = snapshot_tree(neo_home() / "facts")
    again = import_file(target, path)
    assert again["added"] == {} and again["skipped_existing"] == 5
    assert commit_messages(target_repo) == commits
    assert snapshot_tree(neo_home() / "facts") == home_before
    assert len(target.list(include_invalid=True)) == 5


def test_a_file_with_one_invalid_fact_imports_nothing_and_names_it(repo_with_commit, tmp_path):
    store = open_store(repo_with_commit)
    store.init()
    entries = [
        {"id": "1111111111111111", "subject": "Fine", "body": "ok", "kind": "pattern", "scope": "project"},
        {"id": "2222222222222222", "subject": "Also fine", "body": "ok", "kind": "pattern", "scope": "global"},
        {"id": "3333333333333333", "subject": "Broken", "body": "x", "kind": "rumour", "scope": "project"},
    ]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"version": "2.0", "facts": entries}), encoding="utf-8")
    refs_before = snapshot_tree(repo_with_commit / ".git" / "refs")
    with pytest.raises(NeoError) as info:
        import_file(store, path)
    assert "fact #2" in info.value.message and "invalid kind" in info.value.message
    assert "nothing was imported" in info.value.message
    assert snapshot_tree(repo_with_commit / ".git" / "refs") == refs_before
    assert not (neo_home() / "facts" / "facts_global.json").exists()
    assert store.list(include_invalid=True) == []


def test_neo_files_with_inline_embeddings_import(repo_with_commit, tmp_path):
    store = open_store(repo_with_commit)
    entries = [
        {"id": "aaaaaaaaaaaaaaaa", "subject": "Docker layers", "body": "Copy the lock file first.",
         "kind": "pattern", "scope": "global", "confidence": 0.8, "created_at": "2024-05-01T10:00:00+00:00",
         "embedding": [0.01] * 768},
        {"id": "bbbbbbbbbbbbbbbb", "body": "Use structlog for logging.\nJSON in production.",
         "kind": "decision", "scope": "project", "embedding": [0.02] * 768},
    ]
    path = tmp_path / "neo.json"
    path.write_text(json.dumps({"version": "2.0", "facts": entries}), encoding="utf-8")
    summary = import_file(store, path)
    assert summary["added"] == {"global": 1, "project": 1}
    assert summary["embeddings"].startswith("ignored")
    docker = store.get("aaaaaaaaaaaaaaaa")
    assert docker.metadata.confidence == 0.8 and docker.metadata.created_at == "2024-05-01T10:00:00+00:00"
    assert store.get("bbbbbbbbbbbbbbbb").subject == "Use structlog for logging."
    assert "embedding" not in git(repo_with_commit, "show", "refs/neo/facts:facts/bb/bbbbbbbbbbbbbbbb.json")
    assert [f.id for f in store.recall("docker layers lock file").valid_facts][0] == "aaaaaaaaaaaaaaaa"


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b'{"version": "1.0", "facts": []}', b'"facts"'])
def test_a_corrupt_file_is_fatal(repo_with_commit, tmp_path, monkeypatch, capsys, content):
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    with pytest.raises(NeoError):
        import_file(open_store(repo_with_commit), path)
    monkeypatch.chdir(repo_with_commit)
    assert main(["import", str(path)]) == 1
    assert capsys.readouterr().err.startswith("fatal: ")
    assert path.read_bytes() == content


def test_import_into_one_scope_and_redaction(repo_with_commit, tmp_path):
    store = open_store(repo_with_commit)
    entries = [{"id": "cccccccccccccccc", "subject": "Deploy key", "kind": "pattern", "scope": "project",
                "body": "deploy with password=sup3rs3cretvalue"}]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(entries), encoding="utf-8")  # a bare list is accepted too
    summary = import_file(store, path, scope="global")
    assert summary["added"] == {"global": 1}
    fact = store.get("cccccccccccccccc")
    assert fact.scope.value == "global" and "sup3rs3cretvalue" not in fact.body


def test_cli_export_to_stdout_parses(repo_with_commit, monkeypatch, capsys):
    monkeypatch.chdir(repo_with_commit)
    _populate(open_store(repo_with_commit))
    capsys.readouterr()
    assert main(["export"]) == 0
    data = json.loads(capsys.readouterr().out)
    # the valid facts, and the retired one a valid fact supersedes (so an import keeps the pointer)
    valid = [f for f in data["facts"] if f["is_valid"]]
    carried = [f for f in data["facts"] if not f["is_valid"]]
    assert data["version"] == "2.0" and len(valid) == 4 and len(carried) == 1
    assert any(f["supersedes"] == carried[0]["id"] for f in valid)
    assert main(["export", "--all", "--scope", "project"]) == 0
    assert len(json.loads(capsys.readouterr().out)["facts"]) == 2


def test_entries_without_ids_are_not_duplicated_by_a_second_import(repo_with_commit, tmp_path):
    store = open_store(repo_with_commit)
    entries = [{"subject": "Docker layers", "body": "Copy the lock file first.", "kind": "pattern",
                "scope": "global"},
               {"body": "Use structlog for logging.", "kind": "decision", "scope": "project"}]
    path = tmp_path / "no-ids.json"
    path.write_text(json.dumps({"version": "2.0", "facts": entries}), encoding="utf-8")
    first = import_file(store, path)
    assert first["added"] == {"global": 1, "project": 1}
    again = import_file(store, path)
    assert again["added"] == {} and again["skipped_existing"] == 2
    assert len(store.list(include_invalid=True)) == 2


def test_a_lone_surrogate_in_a_file_is_named_and_nothing_imported(repo_with_commit, tmp_path):
    store = open_store(repo_with_commit)
    path = tmp_path / "surrogate.json"
    path.write_text('{"version": "2.0", "facts": ['
                    '{"id": "1111111111111111", "subject": "ok", "kind": "pattern", "scope": "global"},'
                    '{"id": "2222222222222222", "subject": "caf\\udce9", "kind": "pattern", "scope": "global"}]}',
                    encoding="utf-8")
    with pytest.raises(NeoError) as info:
        import_file(store, path)
    assert "fact #1" in info.value.message and "UTF-8" in info.value.message
    assert store.list(include_invalid=True) == []
