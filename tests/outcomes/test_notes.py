"""Outcome notes: appended (never replaced), de-duplicated by id, readable by git."""
from __future__ import annotations

import json

from neo_git.identity import open_repository
from neo_git.store.notes import add_records, move_note, read_note
from tests.helpers.git import commit_files, git


def test_records_append_to_a_note_git_wrote_and_repeat_ids_are_skipped(repo_with_commit):
    repo = repo_with_commit
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "notes", "--ref=neo", "add", "-m", "written by hand", head)
    r = open_repository(repo)
    assert add_records(r, head, [{"v": 1, "id": "a1", "ts": "t", "type": "commit"}]) == 1
    assert add_records(r, head, [{"v": 1, "id": "a1", "ts": "t", "type": "commit"}]) == 0
    text = git(repo, "notes", "--ref=neo", "show", head)
    assert text.splitlines()[0] == "written by hand"
    assert json.loads(text.splitlines()[-1])["id"] == "a1"
    assert git(repo, "log", "-1", "--notes=neo", "--format=%N").count('"id":"a1"') == 1


def test_fanned_out_notes_are_found_appended_in_place_and_moved(repo_with_commit):
    import pygit2

    repo = repo_with_commit
    r = open_repository(repo)
    commits = [commit_files(repo, {"f.txt": f"{i}\n"}, f"c{i}") for i in range(2)]
    # the layout git switches to for big notes trees: <2 hex>/<38 hex>
    first = commits[0]
    blob = r.create_blob(b'{"v":1,"id":"x0","ts":"t"}\n')
    inner = r.TreeBuilder()
    inner.insert(first[2:], blob, pygit2.GIT_FILEMODE_BLOB)
    outer = r.TreeBuilder()
    outer.insert(first[:2], inner.write(), pygit2.GIT_FILEMODE_TREE)
    sig = pygit2.Signature("t", "t@example.com")
    r.create_commit("refs/notes/neo", sig, sig, "fanned out", outer.write(), [])
    assert "x0" in git(repo, "notes", "--ref=neo", "show", first)          # git agrees on the layout
    assert [x["id"] for x in read_note(r, first)] == ["x0"]
    assert add_records(r, first, [{"v": 1, "id": "x1", "ts": "t"}]) == 1
    assert git(repo, "notes", "--ref=neo", "show", first).count('"id"') == 2
    assert git(repo, "ls-tree", "-r", "--name-only", "refs/notes/neo").split() == [f"{first[:2]}/{first[2:]}"]
    assert move_note(r, first, commits[1]) == 2
    assert sorted(x["id"] for x in read_note(r, commits[1])) == ["x0", "x1"]
