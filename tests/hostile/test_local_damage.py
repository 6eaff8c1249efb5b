"""Local damage is a clear error and a fix: a garbage ref file, orphaned ref locks, held locks."""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time

import pytest

from tests.helpers.git import git
from tests.helpers.plumbing import REF, neo


def _ref_file(repo):
    return repo / ".git" / "refs" / "neo" / "facts"


def test_a_garbage_ref_file_is_a_fatal_with_a_hint_and_reads_never_write(team_repo, capsys):
    repo, ids = team_repo
    good = git(repo, "rev-parse", REF).strip()
    commits = git(repo, "rev-list", "--count", REF).strip()
    _ref_file(repo).write_text("garbage\n", encoding="utf-8")
    for args in (["list"], ["show", ids[0]], ["recall", "HTTP"], ["add", "new rule", "body"], ["why", ids[0]],
                 ["health"], ["review"], ["export", str(repo / "out.json")]):
        result = neo(capsys, *args)
        if args == ["health"]:
            assert result.code in (0, 1), result.err      # health reads the code, not the facts
            continue
        assert result.code == 1, (args, result.err)
        assert "fatal:" in result.err and "hint:" in result.err and "doctor --fix" in result.err, args
        assert _ref_file(repo).read_text(encoding="utf-8") == "garbage\n", args
    doctor = neo(capsys, "doctor")
    assert doctor.code == 1 and "does not hold a commit id" in doctor.out and good[:12] in doctor.out
    fixed = neo(capsys, "doctor", "--fix")
    assert fixed.code == 0, fixed.err
    assert git(repo, "rev-parse", REF).strip() == good                     # the last good tip, not a new root
    assert git(repo, "rev-list", "--count", REF).strip() == commits
    listed = neo(capsys, "list")
    assert all(i in listed.out for i in ids)
    assert "doctor restored" in (repo / ".git" / "logs" / "refs" / "neo" / "facts").read_text(encoding="utf-8")
    assert neo(capsys, "doctor").code == 0


def test_a_garbage_ref_without_a_usable_reflog_is_left_alone_with_a_hint(team_repo, capsys):
    repo, _ = team_repo
    (repo / ".git" / "logs" / "refs" / "neo" / "facts").write_text("", encoding="utf-8")
    for cache in (repo / ".git" / "neo" / "cache").glob("facts-*"):
        cache.unlink()   # the parse cache would name the lost tip (tests/hostile/test_ref_damage.py)
    _ref_file(repo).write_text("garbage\n", encoding="utf-8")
    assert neo(capsys, "doctor", "--fix").code == 1
    assert _ref_file(repo).read_text(encoding="utf-8") == "garbage\n"
    assert "lost-found" in neo(capsys, "doctor").out


def test_a_fresh_orphaned_ref_lock_is_cleared_by_doctor_fix(team_repo, capsys):
    repo, _ = team_repo
    lock = repo / ".git" / "refs" / "neo" / "facts.lock"
    lock.write_text("", encoding="utf-8")
    past = time.time() - 10                     # orphaned 10 s ago: far younger than a minute
    os.utime(lock, (past, past))
    refused = neo(capsys, "add", "a rule", "a body")
    assert refused.code == 1 and "doctor --fix" in refused.err
    fixed = neo(capsys, "doctor", "--fix")
    assert fixed.code == 0 and "facts.lock" in fixed.out
    assert not lock.exists()
    assert neo(capsys, "add", "a rule", "a body").code == 0


def test_a_ref_lock_a_live_process_holds_is_not_removed(team_repo, capsys):
    repo, _ = team_repo
    lock = repo / ".git" / "refs" / "neo" / "facts.lock"
    lock.write_text("", encoding="utf-8")
    past = time.time() - 120
    os.utime(lock, (past, past))
    holder = subprocess.Popen([sys.executable, "-c", "import sys,time; f=open(sys.argv[1]); time.sleep(60)", str(lock)])
    try:
        deadline = time.time() + 10
        while time.time() < deadline and not any(
                os.path.realpath(f"/proc/{holder.pid}/fd/{fd}") == str(lock)
                for fd in os.listdir(f"/proc/{holder.pid}/fd")):
            time.sleep(0.05)
        neo(capsys, "doctor", "--fix")
        assert lock.exists()
    finally:
        holder.kill()
        holder.wait()


@pytest.fixture
def held(tmp_path):
    """Hold an flock on a path from another process until the test ends."""
    procs = []

    def hold(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen([sys.executable, "-c", (
            "import fcntl,os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR|os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(120)"), str(path)],
            stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "held"
        procs.append(proc)
        fd = os.open(path, os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(fd)
    yield hold
    for proc in procs:
        proc.kill()
        proc.wait()


def test_a_held_vector_cache_lock_never_makes_recall_wait(team_repo, held, capsys, monkeypatch):
    repo, _ = team_repo
    from neo_git.identity import neo_home

    vectors = neo_home() / "cache" / "vectors"
    neo(capsys, "recall", "warm the cache")          # creates the cache folder for this embedder
    folders = [p for p in vectors.iterdir() if p.is_dir()]
    assert folders
    for folder in folders:
        (folder / "vectors.bin").unlink(missing_ok=True)   # cold: recall must embed and append
        held(folder / "lock")
    start = time.monotonic()
    result = neo(capsys, "recall", "a question about something never embedded before, zebra")
    assert result.code == 0, result.err
    assert time.monotonic() - start < 3.0
    assert "HTTP client" in neo(capsys, "recall", "HTTP client").out


def test_a_held_access_count_lock_makes_recall_skip_the_counts(team_repo, held, capsys):
    repo, ids = team_repo
    held(repo / ".git" / "neo" / "access.json.lock")
    start = time.monotonic()
    result = neo(capsys, "recall", "HTTP client")
    assert result.code == 0, result.err
    assert time.monotonic() - start < 3.0


def test_a_held_global_facts_lock_is_a_clear_error_within_five_seconds(team_repo, held, capsys):
    repo, _ = team_repo
    from neo_git.identity import neo_home

    held(neo_home() / "facts" / "facts_global.json.lock")
    start = time.monotonic()
    result = neo(capsys, "add", "--scope", "global", "a global rule", "a body")
    assert time.monotonic() - start < 7.0
    assert result.code == 1 and "fatal:" in result.err and "lock" in result.err and "hint:" in result.err
