"""A damaged facts ref is never read as "no facts yet" (issue 37, deliverable 2).

Whatever the damage (packed or loose, garbage, dangling, wrong object type, symbolic, a folder,
deleted with its reflog left), every command is a `fatal:` + `hint:` pointing at `git neo
doctor --fix`, nothing is written, and `doctor --fix` puts the last good tip back (from the
reflog, a remote's tracking ref, or a fetch). A repository that never had facts still reads as
empty. Real git, real pygit2, real bare remotes.
"""
from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.git import git
from tests.helpers.plumbing import REF, neo

COMMANDS = (["list"], ["recall", "HTTP"], ["add", "new rule", "body"], ["init"], ["why", "0000"],
            ["export", "out.json"], ["review"], ["sync"], ["push"], ["verify"], ["report"], ["gc"])


def _loose(repo: Path) -> Path:
    return repo / ".git" / "refs" / "neo" / "facts"


def _reflog(repo: Path) -> Path:
    return repo / ".git" / "logs" / "refs" / "neo" / "facts"


def _packed(repo: Path) -> Path:
    return repo / ".git" / "packed-refs"


def _snapshot(repo: Path) -> tuple:
    """Everything a write to the ref would change: the loose file (or folder), packed-refs, the reflog."""
    loose = _loose(repo)
    state = ("link:" + os.readlink(loose) if loose.is_symlink() else "dir" if loose.is_dir()
             else loose.read_bytes() if loose.exists() else None)
    packed = _packed(repo).read_bytes() if _packed(repo).exists() else None
    return state, packed, _reflog(repo).read_bytes() if _reflog(repo).is_file() else None


def _pack(repo: Path, value: str, every_line: bool = False) -> None:
    """`git pack-refs --all`, then overwrite the facts ref's packed id (or every ref's) with *value*."""
    git(repo, "pack-refs", "--all")
    text = _packed(repo).read_text(encoding="utf-8")
    pattern = r"^[0-9a-f]{40} " if every_line else r"^[0-9a-f]{40} (?=refs/neo/facts$)"
    _packed(repo).write_text(re.sub(pattern, value + " ", text, flags=re.M), encoding="utf-8")


def _damage(repo: Path, kind: str) -> None:
    loose = _loose(repo)
    if kind == "packed-garbage":
        _pack(repo, "zzzz")
    elif kind == "packed-every-line":
        _pack(repo, "z" * 40, every_line=True)
    elif kind == "packed-missing-commit":
        _pack(repo, "1234567890" * 4)
    elif kind == "loose-garbage":
        loose.write_text("garbage\n", encoding="utf-8")
    elif kind == "deleted-with-reflog":
        loose.unlink()
    elif kind == "folder":
        loose.unlink()
        (loose / "stray").mkdir(parents=True)
    elif kind == "link-loop":
        loose.unlink()
        os.symlink("facts.loop", loose)
        os.symlink("facts", loose.with_name("facts.loop"))
    elif kind == "symbolic":
        git(repo, "symbolic-ref", REF, "refs/heads/main")
    elif kind == "blob":
        blob = git(repo, "hash-object", "-w", "README.md").strip()
        git(repo, "update-ref", REF, blob)
    elif kind == "tree":
        git(repo, "update-ref", REF, git(repo, "rev-parse", "HEAD^{tree}").strip())
    elif kind == "missing-commit":
        loose.write_text("1234567890" * 4 + "\n", encoding="utf-8")
    elif kind == "source-commit":
        git(repo, "update-ref", REF, "HEAD")
    else:  # pragma: no cover
        raise AssertionError(kind)


KINDS = ("packed-garbage", "packed-every-line", "packed-missing-commit", "loose-garbage", "deleted-with-reflog",
         "folder", "link-loop", "symbolic", "blob", "tree", "missing-commit", "source-commit")


@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_ref_is_a_fatal_nothing_writes_and_doctor_fix_restores_the_last_good_tip(team_repo, capsys, kind):
    repo, ids = team_repo
    good = git(repo, "rev-parse", REF).strip()
    commits = git(repo, "rev-list", "--count", REF).strip()
    git(repo, "remote", "add", "origin", str(repo.parent / "no-such-remote.git"))
    _damage(repo, kind)
    before = _snapshot(repo)
    for args in COMMANDS:
        result = neo(capsys, *args)
        assert result.code == 1, (kind, args, result.out, result.err)
        assert "fatal:" in result.err and "hint:" in result.err, (kind, args, result.err)
        # With every packed line broken, HEAD (a branch) is gone too: commands reading code say that first.
        if not (kind == "packed-every-line" and args[0] in ("report", "verify")):
            assert "doctor --fix" in result.err, (kind, args, result.err)
        assert "no facts yet" not in result.out, (kind, args)
        assert _snapshot(repo) == before, (kind, args)      # nothing wrote: no new history over the real one
    doctor = neo(capsys, "doctor")
    assert doctor.code == 1 and good[:12] in doctor.out, (kind, doctor.out)
    fixed = neo(capsys, "doctor", "--fix")
    assert fixed.code == (1 if kind == "packed-every-line" else 0), (kind, fixed.out, fixed.err)
    assert "restore refs/neo/facts to " + good[:12] in fixed.out
    assert _loose(repo).read_text(encoding="utf-8").strip() == good     # the last good tip, not a new root
    if kind == "packed-every-line":
        # Other refs' lines still hold no id: reported with what to do, never rewritten by git-neo.
        assert "refs/heads/main" in fixed.out and "hold" in fixed.out
        return
    assert git(repo, "rev-list", "--count", REF).strip() == commits
    listed = neo(capsys, "list")
    assert listed.code == 0 and all(i in listed.out for i in ids), listed
    assert "doctor restored the last good tip" in _reflog(repo).read_text(encoding="utf-8")
    added = neo(capsys, "add", "Logging", "Structured logs only.")
    assert added.code == 0, added.err
    assert git(repo, "rev-parse", f"{REF}^").strip() == good            # the next add builds on the real history
    assert neo(capsys, "doctor").code == 0


def test_a_repository_that_never_had_facts_still_reads_as_empty(repo_with_commit, capsys, monkeypatch):
    monkeypatch.chdir(repo_with_commit)
    listed = neo(capsys, "list")
    assert listed.code == 0 and "no facts yet" in listed.out
    assert neo(capsys, "doctor").code == 0
    assert neo(capsys, "add", "First rule", "body").code == 0
    assert git(repo_with_commit, "rev-list", "--count", REF).strip() in ("1", "2")


def test_a_fresh_clone_before_its_first_sync_reads_as_empty(team_repo, tmp_path, capsys, monkeypatch):
    """A remote's tracking ref alone is not evidence of loss: a clone has it before it has facts."""
    repo, _ = team_repo
    bare = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "push", "-q", str(bare), "main", f"{REF}:{REF}")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    git(clone, "fetch", "-q", "origin", f"{REF}:refs/remotes/origin/neo/facts")
    monkeypatch.chdir(clone)
    listed = neo(capsys, "list")
    assert listed.code == 0 and "no facts yet" in listed.out, listed


def test_a_ref_gone_with_its_reflog_but_remembered_by_the_parse_cache_is_a_fatal(team_repo, capsys):
    repo, ids = team_repo
    assert neo(capsys, "list").code == 0          # reads the ref, writes the parse cache
    assert list((repo / ".git" / "neo" / "cache").glob("facts-refs_neo_facts.*.bin"))
    git(repo, "update-ref", "-d", REF)            # deletes the reflog too
    assert not _reflog(repo).exists()
    for args in (["list"], ["add", "new rule", "body"]):
        result = neo(capsys, *args)
        assert result.code == 1 and "parse cache" in result.err and "doctor --fix" in result.err, result
    assert not _loose(repo).exists()


def test_doctor_fix_restores_from_the_remotes_tracking_ref_when_the_reflog_holds_nothing_good(team_repo, capsys):
    repo, ids = team_repo
    good = git(repo, "rev-parse", REF).strip()
    git(repo, "remote", "add", "origin", "/nonexistent")
    git(repo, "update-ref", "refs/remotes/origin/neo/facts", good)
    git(repo, "update-ref", REF, git(repo, "hash-object", "-w", "README.md").strip())
    _reflog(repo).write_text("", encoding="utf-8")     # nothing good in the reflog
    assert neo(capsys, "list").code == 1
    fixed = neo(capsys, "doctor", "--fix")
    assert fixed.code == 0 and "refs/remotes/origin/neo/facts" in fixed.out, fixed
    assert git(repo, "rev-parse", REF).strip() == good
    assert all(i in neo(capsys, "list").out for i in ids)


def test_doctor_fix_fetches_the_remotes_ref_when_nothing_here_is_good(team_repo, tmp_path, capsys):
    repo, ids = team_repo
    good = git(repo, "rev-parse", REF).strip()
    bare = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "push", "-q", str(bare), f"{REF}:{REF}")
    git(repo, "remote", "add", "origin", str(bare))
    _damage(repo, "deleted-with-reflog")
    for cache in (repo / ".git" / "neo" / "cache").glob("facts-*"):
        cache.unlink()    # nothing local remembers the lost tip: only the remote has it
    _reflog(repo).write_text("1234567890" * 4 + " " + "abcdef0123" * 4 + " x <x> 1 +0000\tjunk\n", encoding="utf-8")
    assert neo(capsys, "list").code == 1
    doctor = neo(capsys, "doctor")
    assert "fetch refs/neo/facts from origin" in doctor.out, doctor.out
    fixed = neo(capsys, "doctor", "--fix")
    assert fixed.code == 0, (fixed.out, fixed.err)
    assert git(repo, "rev-parse", REF).strip() == good
    assert all(i in neo(capsys, "list").out for i in ids)


def test_without_any_good_tip_doctor_fix_changes_nothing_and_says_where_to_look(team_repo, capsys):
    repo, _ = team_repo
    _damage(repo, "packed-garbage")
    _reflog(repo).write_text("", encoding="utf-8")
    before = _snapshot(repo)
    fixed = neo(capsys, "doctor", "--fix")
    assert fixed.code == 1 and "lost-found" in fixed.out, fixed
    assert _snapshot(repo) == before
    assert neo(capsys, "add", "x", "y").code == 1


def test_sync_from_a_damaged_clone_leaves_the_remotes_good_ref_alone(team_repo, tmp_path, capsys):
    repo, ids = team_repo
    bare = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    assert neo(capsys, "sync", "--remote", "origin").code == 0
    remote_tip = git(bare, "rev-parse", REF).strip()
    for kind in ("blob", "symbolic", "packed-garbage"):
        _damage(repo, kind)
        for args in (["sync"], ["push"], ["pull"]):
            result = neo(capsys, *args)
            assert result.code == 1 and "doctor --fix" in result.err, (kind, args, result)
            assert git(bare, "rev-parse", REF).strip() == remote_tip, (kind, args)
        assert neo(capsys, "doctor", "--fix").code == 0
        assert git(repo, "rev-parse", REF).strip() == remote_tip


def test_a_reader_waits_for_a_first_write_between_its_reflog_and_its_ref(team_repo):
    """libgit2 and git append to the reflog before renaming `<ref>.lock` over the ref: a reader in
    that instant sees a reflog but no ref, and must wait for the writer, not call it lost."""
    from neo_git.store import FactStore

    repo, _ = team_repo
    good = git(repo, "rev-parse", REF).strip()
    _loose(repo).unlink()
    lock = _loose(repo).with_name("facts.lock")
    lock.write_text(good + "\n", encoding="utf-8")

    def finish() -> None:
        time.sleep(0.3)
        os.replace(lock, _loose(repo))

    writer = threading.Thread(target=finish)
    writer.start()
    try:
        tip = FactStore.open(repo, embedder="hash").project_store.tip()
    finally:
        writer.join()
    assert str(tip) == good


@pytest.mark.parametrize("which", ["session", "global", "org"])
@pytest.mark.parametrize("damage", ["folder", "link-loop"])
def test_a_local_facts_file_replaced_by_a_folder_or_a_link_loop_is_moved_aside_and_rebuilt(
        team_repo, capsys, which, damage):
    from neo_git.identity import neo_home

    repo, ids = team_repo
    assert neo(capsys, "add", "--scope", which, f"{which} rule", "kept until damaged").code == 0
    folder = repo / ".git" / "neo" if which == "session" else neo_home() / "facts"
    path = folder / "session.json" if which == "session" else (
        folder / "facts_global.json" if which == "global" else next(folder.glob("facts_org_*.json")))
    path.unlink()
    if damage == "folder":
        path.mkdir()
    else:
        os.symlink(path.name + ".other", path)
        os.symlink(path.name, path.with_name(path.name + ".other"))
    for args in (["list"], ["recall", "rule"], ["add", "--scope", which, "another", "body"]):
        result = neo(capsys, *args)
        assert result.code == 1, (args, result)
        assert "fatal:" in result.err and "doctor --fix" in result.err, (args, result.err)
    assert path.is_dir() if damage == "folder" else path.is_symlink()     # nothing wrote over it
    doctor = neo(capsys, "doctor")
    assert doctor.code == 1 and str(path) in doctor.out
    fixed = neo(capsys, "doctor", "--fix")
    assert fixed.code == 0, (fixed.out, fixed.err)
    assert path.is_file() and not path.is_symlink()
    assert list(folder.glob(path.name + ".corrupt-*")), "the damaged thing is kept for inspection"
    assert neo(capsys, "add", "--scope", which, "after the repair", "body").code == 0
    listed = neo(capsys, "list")
    assert listed.code == 0 and "after the repair" in listed.out and all(i in listed.out for i in ids)


def test_doctor_fix_finds_a_ref_deleted_with_its_reflog_through_the_parse_cache(team_repo, capsys):
    """Nothing names the lost tip but the parse cache's folders: the unreachable facts commit
    whose `facts/` folders are exactly those is put back (an older one is not)."""
    repo, ids = team_repo
    good = git(repo, "rev-parse", REF).strip()
    assert neo(capsys, "list").code == 0          # reads the ref, writes the parse cache
    git(repo, "update-ref", "-d", REF)
    doctor = neo(capsys, "doctor")
    assert doctor.code == 1 and good[:12] in doctor.out, doctor.out
    fixed = neo(capsys, "doctor", "--fix")
    assert fixed.code == 0, (fixed.out, fixed.err)
    assert git(repo, "rev-parse", REF).strip() == good
    assert all(i in neo(capsys, "list").out for i in ids)


def test_a_bad_packed_line_under_a_good_loose_ref_is_dropped_and_the_loose_ref_kept(team_repo, capsys):
    """git reads the loose ref first, and so does git-neo; but git fails on every command that
    reads packed-refs while the line is there. The repair drops the line and keeps the loose
    ref, even when the reflog's newest entry is older than it."""
    repo, ids = team_repo
    git(repo, "pack-refs", "--all")
    older = git(repo, "rev-parse", REF).strip()
    assert neo(capsys, "add", "Logging", "Structured logs only.").code == 0     # a loose ref, newer
    tip = git(repo, "rev-parse", REF).strip()
    _pack_line = _packed(repo).read_text(encoding="utf-8").replace(f"{older} {REF}", f"zzzz {REF}")
    _packed(repo).write_text(_pack_line, encoding="utf-8")
    _reflog(repo).write_text(f"{'0' * 40} {older} x <x> 1 +0000\tolder\n", encoding="utf-8")
    assert neo(capsys, "list").code == 0                      # the loose ref reads fine
    doctor = neo(capsys, "doctor")
    assert doctor.code == 1 and "zzzz" in doctor.out and "loose ref" in doctor.out, doctor.out
    assert neo(capsys, "doctor", "--fix").code == 0
    assert "zzzz" not in _packed(repo).read_text(encoding="utf-8")
    assert git(repo, "rev-parse", REF).strip() == tip        # git reads packed-refs again, and the newer tip


@pytest.mark.parametrize("kind", ["loose-garbage", "packed-every-line"])
def test_doctors_closing_hint_says_the_damaged_ref_is_repaired_not_only_reported(team_repo, capsys, kind):
    """The ref's file is put back by --fix: the closing hint does not also say the facts ref's
    problems are "never rewritten", and after a repair that leaves only other refs' packed lines
    it does not blame the facts ref for them."""
    repo, _ = team_repo
    _damage(repo, kind)
    doctor = neo(capsys, "doctor")
    assert doctor.code == 1 and "`git neo doctor --fix` repairs 1 of them" in doctor.err, doctor.err
    assert "never rewritten" not in doctor.err, doctor.err
    fixed = neo(capsys, "doctor", "--fix")
    assert "never rewritten" not in fixed.err, fixed.err
