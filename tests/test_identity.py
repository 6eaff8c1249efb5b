"""Org id from the remote, project id from the root commit (stable across clones),
recorded in the ref's meta.json; repository paths for worktrees."""
from __future__ import annotations

import json

import pytest

from neo_git import identity
from tests.helpers.git import commit_files, git
from tests.helpers.store import REF, open_store


@pytest.mark.parametrize("url, org", [
    ("https://github.com/acme/api", "acme"),
    ("https://github.com/Acme/api.git", "acme"),
    ("https://x-access-token:ghp_secret123@github.com/acme/api.git", "acme"),
    ("https://user@gitlab.example.com:8443/platform-team/svc.git", "platform-team"),
    ("git@github.com:acme/api.git", "acme"),
    ("git@github.com:acme/api", "acme"),
    ("ssh://git@github.com:22/acme/api.git", "acme"),
    ("ssh://git@github.com/acme/api", "acme"),
    ("/srv/git/api.git", "unknown"),
    ("file:///srv/git/api.git", "unknown"),
    ("https://github.com/api", "unknown"),
    ("", "unknown"),
])
def test_org_from_url(url, org):
    assert identity.org_from_url(url) == org


def test_credentials_never_end_up_in_the_org(repo_with_commit):
    git(repo_with_commit, "remote", "add", "origin", "https://bob:hunter2hunter2@github.com/acme/api.git")
    store = open_store(repo_with_commit)
    assert store.org_id == "acme"
    fact = store.add("Review rule", "Two approvals.", scope="org")
    assert fact.org_id == "acme"
    assert "hunter2" not in json.dumps(fact.to_dict())


def test_no_remote_is_unknown(repo_with_commit):
    assert open_store(repo_with_commit).org_id == "unknown"


def test_origin_is_preferred_over_other_remotes(repo_with_commit):
    git(repo_with_commit, "remote", "add", "aaa-fork", "git@github.com:someone/api.git")
    git(repo_with_commit, "remote", "add", "origin", "git@github.com:acme/api.git")
    git(repo_with_commit, "remote", "add", "upstream", "git@github.com:upstream-org/api.git")
    assert open_store(repo_with_commit).org_id == "acme"


def test_without_origin_another_remote_is_used(repo_with_commit):
    git(repo_with_commit, "remote", "add", "upstream", "git@github.com:upstream-org/api.git")
    assert open_store(repo_with_commit).org_id == "upstream-org"


def test_project_id_is_the_root_commit_and_recorded_in_meta(repo_with_commit):
    root = git(repo_with_commit, "rev-list", "--max-parents=0", "HEAD").strip()
    commit_files(repo_with_commit, {"b.txt": "b\n"}, "second")
    store = open_store(repo_with_commit)
    assert store.project_id == root[:16]
    fact = store.add("Layout", "Code lives under src/.")
    assert fact.project_id == root[:16]
    meta = json.loads(git(repo_with_commit, "show", f"{REF}:meta.json"))
    assert meta["project_id"] == root[:16]


def test_project_id_is_stable_across_a_clone(repo_with_commit, tmp_path):
    store = open_store(repo_with_commit)
    fact = store.add("Layout", "Code lives under src/.")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo_with_commit), str(clone))
    assert open_store(clone).project_id == store.project_id  # from the root commit alone
    git(clone, "fetch", "-q", "origin", f"{REF}:{REF}")
    cloned = open_store(clone)
    assert cloned.project_id == store.project_id
    assert [f.id for f in cloned.list()] == [fact.id]


def test_project_id_chosen_before_the_first_commit_stays(git_repo, tmp_path):
    store = open_store(git_repo)
    fact = store.add("Build tool", "We build with hatch.")
    recorded = json.loads(git(git_repo, "show", f"{REF}:meta.json"))["project_id"]
    assert fact.project_id == recorded and len(recorded) == 16
    commit_files(git_repo, {"README.md": "hi\n"}, "first")
    assert open_store(git_repo).project_id == recorded
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(git_repo), str(clone))
    git(clone, "fetch", "-q", "origin", f"{REF}:{REF}")
    assert open_store(clone).project_id == recorded


def test_worktree_paths_share_the_common_dir(repo_with_commit, tmp_path):
    wt = tmp_path / "wt"
    git(repo_with_commit, "worktree", "add", "-q", "--detach", str(wt))
    main_paths = identity.find_repository_paths(repo_with_commit)
    wt_paths = identity.find_repository_paths(wt)
    assert wt_paths.common_dir == main_paths.common_dir == (repo_with_commit / ".git").resolve()
    assert wt_paths.neo_dir == main_paths.neo_dir
    assert wt_paths.session_file != main_paths.session_file
    assert wt_paths.workdir == wt.resolve()


def test_author_comes_from_git(repo_with_commit, monkeypatch):
    monkeypatch.delenv("GIT_AUTHOR_NAME")
    monkeypatch.delenv("GIT_AUTHOR_EMAIL")
    git(repo_with_commit, "config", "user.name", "Grace Hopper")
    git(repo_with_commit, "config", "user.email", "grace@example.com")
    fact = open_store(repo_with_commit).add("Layout", "Code lives under src/.")
    assert fact.metadata.author == "Grace Hopper <grace@example.com>"


def test_neo_home_override(monkeypatch, tmp_path):
    monkeypatch.setenv("NEO_HOME", str(tmp_path / "elsewhere"))
    assert identity.neo_home() == tmp_path / "elsewhere"
    monkeypatch.delenv("NEO_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert identity.neo_home() == tmp_path / ".neo"


def test_project_id_recorded_when_an_import_creates_the_ref(repo_with_commit, tmp_path):
    from neo_git.transfer import import_file

    root = git(repo_with_commit, "rev-list", "--max-parents=0", "HEAD").strip()
    path = tmp_path / "facts.json"
    path.write_text(json.dumps([{"id": "1234567890abcdef", "subject": "Layout", "kind": "pattern",
                                 "scope": "project"}]), encoding="utf-8")
    import_file(open_store(repo_with_commit), path)
    assert json.loads(git(repo_with_commit, "show", f"{REF}:meta.json"))["project_id"] == root[:16]


def test_neo_org_in_git_config_names_the_org(repo_with_commit):
    from neo_git import identity

    repo = identity.open_repository(repo_with_commit)
    assert identity.org_id(repo) == "unknown"
    git(repo_with_commit, "remote", "add", "origin", "https://github.com/acme/api.git")
    assert identity.org_id(identity.open_repository(repo_with_commit)) == "acme"
    git(repo_with_commit, "config", "neo.org", "Platform Team")
    assert identity.org_id(identity.open_repository(repo_with_commit)) == "platform-team"
