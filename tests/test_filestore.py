"""Global/org/session scope files: envelope, merge-on-save, bad entries kept,
corrupt files moved aside and never overwritten."""
from __future__ import annotations

import json
import os

import pytest

from neo_git.errors import CorruptStore
from neo_git.store.filestore import FileStore
from tests.helpers.store import neo_home, open_store, snapshot_tree


def _global_file():
    return neo_home() / "facts" / "facts_global.json"


def test_global_facts_are_stored_in_the_neo_envelope(repo_with_commit):
    store = open_store(repo_with_commit)
    fact = store.add("Commit style", "Conventional commits, imperative mood.", scope="global")
    data = json.loads(_global_file().read_bytes())
    assert data["version"] == "2.0"
    assert data["facts"] == [fact.to_dict()]
    assert fact.org_id is None and fact.project_id is None


def test_org_facts_go_to_the_org_file(repo_with_commit):
    from tests.helpers.git import git

    git(repo_with_commit, "remote", "add", "origin", "git@github.com:Acme/api.git")
    store = open_store(repo_with_commit)
    fact = store.add("Review rule", "Two approvals for anything under payments/.", scope="org")
    data = json.loads((neo_home() / "facts" / "facts_org_acme.json").read_bytes())
    assert [f["id"] for f in data["facts"]] == [fact.id]
    assert fact.org_id == "acme"


def test_two_stores_never_lose_each_others_facts(repo_with_commit):
    first = open_store(repo_with_commit)
    second = open_store(repo_with_commit)
    first.list(scope="global")
    second.list(scope="global")
    a = first.add("Python version", "Target Python 3.12 everywhere.", scope="global")
    b = second.add("Formatter", "ruff format, line length 100.", scope="global")
    ids = {f["id"] for f in json.loads(_global_file().read_bytes())["facts"]}
    assert ids == {a.id, b.id}


def test_invalid_entries_are_skipped_with_a_warning_and_kept_on_save(repo_with_commit):
    store = open_store(repo_with_commit)
    good = store.add("Python version", "Target Python 3.12 everywhere.", scope="global")
    data = json.loads(_global_file().read_bytes())
    bad = {"id": "not-an-id", "subject": "teammate's broken fact", "kind": "pattern", "scope": "global"}
    data["facts"].append(bad)
    _global_file().write_text(json.dumps(data), encoding="utf-8")
    assert [f.id for f in store.list(scope="global")] == [good.id]
    assert any("fact #1 skipped" in w and "invalid id" in w for w in store.warnings)
    other = store.add("Formatter", "ruff format, line length 100.", scope="global")
    saved = json.loads(_global_file().read_bytes())["facts"]
    assert bad in saved and {f.get("id") for f in saved} == {good.id, other.id, "not-an-id"}


def test_bare_list_file_is_accepted(repo_with_commit):
    store = open_store(repo_with_commit)
    fact = store.add("Python version", "Target Python 3.12 everywhere.", scope="global")
    _global_file().write_text(json.dumps([fact.to_dict()]), encoding="utf-8")
    assert store.list(scope="global") == [fact]


def _corrupt_and_expect_fatal(store, content: bytes):
    _global_file().parent.mkdir(parents=True, exist_ok=True)
    _global_file().write_bytes(content)
    with pytest.raises(CorruptStore) as info:
        store.list()
    assert "moved it to" in info.value.message and info.value.hint
    return info.value


@pytest.mark.parametrize("content", [b'{"version": "2.0", "facts": [', b"\xff\xfe not utf8", b'{"facts": 3}'])
def test_corrupt_file_is_moved_aside_byte_for_byte(repo_with_commit, content):
    store = open_store(repo_with_commit)
    _corrupt_and_expect_fatal(store, content)
    asides = sorted(_global_file().parent.glob("facts_global.json.corrupt-*"))
    assert len(asides) == 1 and asides[0].read_bytes() == content
    assert not _global_file().exists()


def test_corrupt_file_is_not_overwritten_by_an_add(repo_with_commit):
    store = open_store(repo_with_commit)
    _global_file().parent.mkdir(parents=True, exist_ok=True)
    _global_file().write_bytes(b"{oops")
    with pytest.raises(CorruptStore):
        store.add("Formatter", "ruff format, line length 100.", scope="global")
    asides = list(_global_file().parent.glob("facts_global.json.corrupt-*"))
    assert [p.read_bytes() for p in asides] == [b"{oops"]
    assert not _global_file().exists()  # the failed add wrote nothing


def test_two_corrupt_files_in_a_row_are_both_kept(repo_with_commit):
    store = open_store(repo_with_commit)
    _corrupt_and_expect_fatal(store, b"{first")
    _corrupt_and_expect_fatal(store, b"{second")
    asides = sorted(p.read_bytes() for p in _global_file().parent.glob("facts_global.json.corrupt-*"))
    assert asides == [b"{first", b"{second"]


def test_corrupt_file_leaves_other_scopes_untouched(repo_with_commit):
    store = open_store(repo_with_commit)
    project = store.add("Docker layer caching order", "Copy the lock file before the sources.")
    before = snapshot_tree(repo_with_commit / ".git" / "refs")
    _corrupt_and_expect_fatal(store, b"[{]")
    assert snapshot_tree(repo_with_commit / ".git" / "refs") == before
    assert store.list(scope="project") == [project]


def test_session_scope_lives_in_the_worktree_git_dir(repo_with_commit):
    store = open_store(repo_with_commit)
    fact = store.add("Current task", "Refactoring the flag loader.", scope="session")
    data = json.loads((repo_with_commit / ".git" / "neo" / "session.json").read_bytes())
    assert [f["id"] for f in data["facts"]] == [fact.id]
    assert fact.project_id == store.project_id


def test_file_store_directory_in_the_way_is_a_clear_error(tmp_path):
    path = tmp_path / "facts_global.json"
    path.mkdir()
    with pytest.raises(CorruptStore):
        FileStore(path).load()
    assert path.is_dir() and os.listdir(path) == []


def test_unchanged_file_is_not_parsed_again_and_a_write_is_seen(tmp_path):
    """Recall loads every scope per question: an unchanged file hands back the same facts."""
    from neo_git.facts import Fact as _Fact
    from neo_git.store.base import Change as _Change
    from neo_git.store.filestore import FileStore as _FileStore

    def fact(subject):
        return _Fact.from_dict({"id": __import__("secrets").token_hex(8), "subject": subject,
                                "kind": "pattern", "scope": "global"})

    path = tmp_path / "facts_global.json"
    writer, reader = _FileStore(path), _FileStore(path)
    first = fact("one")
    writer.transact(lambda facts: _Change((first,), "add"))
    a = reader.load().facts
    b = reader.load().facts
    assert a[first.id] is b[first.id]              # served from the parsed copy
    second = fact("two")
    writer.transact(lambda facts: _Change((second,), "add"))  # another writer replaces the file
    c = reader.load().facts
    assert set(c) == {first.id, second.id}
