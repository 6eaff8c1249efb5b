"""Org facts stay in their org (issue 36): an export names the org of its org facts, and an
import writes them only into that org's scope; another org's (or an org-less repository) refuses
the file with a clear error, or leaves them out when asked."""
from __future__ import annotations

import json

import pytest

from neo_git.cli import main
from tests.helpers.git import commit_files, git
from tests.helpers.store import neo_home, open_store


def _repo(tmp_path, name: str, url: str | None):
    repo = tmp_path / name
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_files(repo, {"README.md": "hi\n"}, "initial")
    if url:
        git(repo, "remote", "add", "origin", url)
    return repo


@pytest.fixture
def exported(tmp_path, monkeypatch):
    acme = _repo(tmp_path, "acme-api", "https://github.com/acme/api.git")
    store = open_store(acme)
    vault = store.add("Secrets live in Vault", "never in env files", kind="constraint", scope="org")
    layout = store.add("Layout", "src/ holds the code", kind="pattern")
    path = tmp_path / "acme.json"
    monkeypatch.chdir(acme)
    assert main(["export", str(path)]) == 0
    return path, vault, layout


def test_export_names_the_org_of_its_org_facts(exported):
    path, vault, _ = exported
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["org"] == "acme"
    assert {f["id"]: f["org_id"] for f in data["facts"] if f["scope"] == "org"} == {vault.id: "acme"}


@pytest.mark.parametrize("url,org", [("https://github.com/globex/web.git", "globex"), (None, "unknown")])
def test_another_orgs_facts_are_refused_or_left_out_never_written_to_this_org(tmp_path, monkeypatch, capsys,
                                                                              exported, url, org):
    path, vault, layout = exported
    other = _repo(tmp_path, "other", url)
    monkeypatch.chdir(other)
    capsys.readouterr()
    assert main(["import", str(path)]) == 1
    err = capsys.readouterr().err
    assert "fatal:" in err and "acme" in err and "nothing was imported" in err and "hint:" in err
    org_file = neo_home() / "facts" / f"facts_org_{org}.json"
    assert not org_file.exists()                    # before: acme's constraint landed here
    store = open_store(other)
    assert vault.id not in {f.id for f in store.list(include_invalid=True)}

    assert main(["import", "--skip-other-orgs", str(path)]) == 0
    assert "left out 1 org fact(s) of acme" in capsys.readouterr().out
    store = open_store(other)
    assert {f.id for f in store.list(include_invalid=True)} >= {layout.id}
    assert vault.id not in {f.id for f in store.list(include_invalid=True)}
    assert vault.id not in {f.id for f in store.recall("where do secrets live").constraints}
    assert not org_file.exists()


def test_an_orgs_facts_import_into_the_same_org(tmp_path, monkeypatch, exported):
    path, vault, _ = exported
    (neo_home() / "facts" / "facts_org_acme.json").unlink()
    sibling = _repo(tmp_path, "acme-web", "git@github.com:acme/web.git")
    monkeypatch.chdir(sibling)
    assert main(["import", str(path)]) == 0
    assert open_store(sibling).get(vault.id).is_valid
