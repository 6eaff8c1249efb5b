"""Round trips keep the store sound (issue 17): export carries what its facts point at, import
cuts pointers at nothing, the doctor repairs local scopes and proposes the ref's fix."""
from __future__ import annotations

import json

from neo_git.cli import main
from neo_git.facts import Fact, FactScope
from neo_git.store import Change
from tests.helpers.git import git
from tests.helpers.store import HTTP_NEW, HTTP_OLD, open_store

REF = "refs/neo/facts"


def run(capsys, monkeypatch, cwd, *args):
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_export_then_import_elsewhere_leaves_no_dangling_pointer(repo_with_commit, tmp_path, capsys, monkeypatch):
    """The reproduction: `export f.json` then `import f.json` in another repository left a
    dangling `supersedes`; every later list/recall warned and `doctor` exited 1."""
    source = open_store(repo_with_commit)
    old = source.add("HTTP client", HTTP_OLD, kind="decision")
    new = source.add("HTTP client", HTTP_NEW, kind="decision", supersedes=old.id)
    path = tmp_path / "f.json"
    code, _, err = run(capsys, monkeypatch, repo_with_commit, "export", str(path))
    assert code == 0 and "1 retired fact" in err
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", "-b", "main", str(other))
    git(other, "commit", "-q", "--allow-empty", "-m", "init")
    assert run(capsys, monkeypatch, other, "import", str(path))[0] == 0
    code, out, err = run(capsys, monkeypatch, other, "list", "--all")
    assert code == 0 and "points at" not in err and old.id in out and new.id in out
    assert run(capsys, monkeypatch, other, "recall", "which http client?")[2] == ""
    code, out, err = run(capsys, monkeypatch, other, "doctor")
    assert code == 0, out + err
    assert open_store(other).get(new.id).supersedes == old.id


def test_import_cuts_a_pointer_at_a_fact_it_cannot_find_and_says_so(repo_with_commit, tmp_path, capsys, monkeypatch):
    entries = [{"id": "aaaaaaaaaaaaaaaa", "subject": "Cache", "body": "Redis.", "kind": "decision", "scope": "project",
                "supersedes": "bbbbbbbbbbbbbbbb", "depends_on": ["cccccccccccccccc"]}]
    path = tmp_path / "partial.json"
    path.write_text(json.dumps({"version": "2.0", "facts": entries}), encoding="utf-8")
    code, out, err = run(capsys, monkeypatch, repo_with_commit, "import", str(path))
    assert code == 0 and "cut 2 pointer(s)" in out and "bbbbbbbbbbbbbbbb" in out
    fact = open_store(repo_with_commit).get("aaaaaaaaaaaaaaaa")
    assert fact.supersedes is None and fact.depends_on == ()
    assert run(capsys, monkeypatch, repo_with_commit, "doctor")[0] == 0


def test_doctor_fix_cuts_dangling_pointers_in_local_scopes(repo_with_commit, isolated_env, capsys, monkeypatch):
    home = isolated_env / ".neo" / "facts"
    home.mkdir(parents=True, exist_ok=True)
    dangling = {"id": "dddddddddddddddd", "subject": "Editor", "body": "We use vim.", "kind": "pattern",
                "scope": "global", "supersedes": "eeeeeeeeeeeeeeee", "is_valid": True}
    (home / "facts_global.json").write_text(json.dumps({"version": "2.0", "facts": [dangling]}), encoding="utf-8")
    code, out, _ = run(capsys, monkeypatch, repo_with_commit, "doctor")
    assert code == 1 and "global facts point at facts that are not there" in out and "would fix" in out
    code, out, err = run(capsys, monkeypatch, repo_with_commit, "doctor", "--fix")
    assert code == 0, out + err
    assert open_store(repo_with_commit).get("dddddddddddddddd").supersedes is None


def test_doctor_proposes_the_ref_fix_as_a_commit_the_user_confirms(repo_with_commit, capsys, monkeypatch):
    store = open_store(repo_with_commit)
    kept = store.add("Logging", "Structured JSON logs.", kind="decision")
    broken = Fact.from_dict({**kept.to_dict(), "supersedes": "ffffffffffffffff"})
    store.transact(FactScope.PROJECT, lambda facts: Change((broken,), "plant a dangling pointer"))
    tip = git(repo_with_commit, "rev-parse", REF)
    code, out, err = run(capsys, monkeypatch, repo_with_commit, "doctor")
    assert code == 1 and "ffffffffffffffff" in out and "--fix --ref" in out
    assert run(capsys, monkeypatch, repo_with_commit, "doctor", "--fix")[0] == 1
    assert git(repo_with_commit, "rev-parse", REF) == tip          # --fix alone never rewrites the shared ref
    code, out, err = run(capsys, monkeypatch, repo_with_commit, "doctor", "--fix", "--ref")
    assert code == 1 and "proposed commit" in out and "needs your confirmation" in err
    assert git(repo_with_commit, "rev-parse", REF) == tip          # not confirmed: nothing written
    code, out, err = run(capsys, monkeypatch, repo_with_commit, "doctor", "--fix", "--ref", "--yes")
    assert code == 0, out + err
    assert "doctor: cut dangling pointers" in git(repo_with_commit, "log", "-1", "--format=%s", REF)
    assert open_store(repo_with_commit).get(kept.id).supersedes is None
    assert run(capsys, monkeypatch, repo_with_commit, "doctor")[0] == 0
