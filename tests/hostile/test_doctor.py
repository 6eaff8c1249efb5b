"""`git neo doctor [--fix]`: the ref is checked and reported, local leftovers repaired."""
from __future__ import annotations

import json
import os
import time

from neo_git.store.parse_cache import parse_cache_path
from tests.helpers.plumbing import edit_parse_cache, fact_dict, neo, push_files, ref_state
from tests.helpers.store import open_store


def _age(path, seconds=600):
    old = time.time() - seconds
    os.utime(path, (old, old))


def test_a_healthy_repository(team_repo, capsys):
    result = neo(capsys, "doctor")
    assert result.code == 0, result.out + result.err
    assert "no problems" in result.out


def test_the_ref_is_checked_and_only_reported(team_repo, capsys):
    repo, ids = team_repo
    a, b = "aaaa000000000001", "bbbb000000000002"
    push_files(repo, {
        f"facts/zz/{ids[0]}.json": fact_dict(ids[0], "misfiled twin"),
        "facts/cc/cccc000000000003.json": b"{broken",
        "facts/dd/dddd000000000004.json": fact_dict("dddd000000000004", "global here", scope="global"),
        "facts/ee/eeee000000000005.json": fact_dict("eeee000000000005", "dangling", depends_on=["ffff000000000006"]),
        f"facts/aa/{a}.json": fact_dict(a, "loop a", is_valid=False, superseded_by=b, supersedes=b),
        f"facts/bb/{b}.json": fact_dict(b, "loop b", is_valid=False, superseded_by=a, supersedes=a),
    })
    tip = ref_state(repo)
    result = neo(capsys, "doctor", "--fix")
    assert result.code == 1
    for fragment in (f"facts/zz/{ids[0]}.json", "facts/cc/cccc000000000003.json", "global",
                     "ffff000000000006", "loops through aaaa000000000001, bbbb000000000002"):
        assert fragment in result.out, fragment
    assert "fatal:" in result.err and "hint:" in result.err
    assert ref_state(repo) == tip, "the doctor never rewrites the shared ref"
    report = json.loads(neo(capsys, "doctor", "--json").out)
    assert len(report["problems"]) >= 5 and not report["fixed"]


def test_a_stale_lock_is_cleared_only_with_fix_and_only_when_nobody_holds_it(team_repo, capsys):
    repo, _ = team_repo
    lock = repo / ".git" / "refs" / "neo" / "facts.lock"
    lock.write_text("")
    _age(lock)
    held = open(lock)  # a live writer holds its lock open
    try:
        result = neo(capsys, "doctor", "--fix")
        assert lock.exists() and "facts.lock" not in result.out
    finally:
        held.close()
    dry = neo(capsys, "doctor")
    assert dry.code == 1 and "facts.lock" in dry.out and "would fix" in dry.out and lock.exists()
    fixed = neo(capsys, "doctor", "--fix")
    assert fixed.code == 0, fixed.out + fixed.err
    assert not lock.exists()
    assert neo(capsys, "add", "After the lock", "writes work again").code == 0


def test_orphaned_temp_files_are_removed_fresh_ones_kept(team_repo, isolated_env, capsys):
    repo, _ = team_repo
    orphan = repo / ".git" / "neo" / ".access.json.k3j2.tmp"
    orphan.write_text("{}")
    _age(orphan)
    home_orphan = isolated_env / ".neo" / "facts" / ".facts_global.json.x9.tmp"
    home_orphan.parent.mkdir(parents=True, exist_ok=True)
    home_orphan.write_text("[]")
    _age(home_orphan)
    fresh = repo / ".git" / "neo" / ".access.json.zz11.tmp"
    fresh.write_text("{}")  # a writer may be between write and rename right now
    dry = neo(capsys, "doctor")
    assert str(orphan) in dry.out and str(home_orphan) in dry.out and str(fresh) not in dry.out
    assert orphan.exists()
    assert neo(capsys, "doctor", "--fix").code == 0
    assert not orphan.exists() and not home_orphan.exists() and fresh.exists()


def test_caches_that_do_not_verify_are_reported_and_deleted(team_repo, isolated_env, capsys):
    repo, ids = team_repo
    open_store(repo).recall("http")  # parse cache and vector cache on disk
    snapshot = parse_cache_path(repo / ".git", "refs/neo/facts")

    def tamper(data):
        for _tree, entries in data["subtrees"].values():
            for entry in entries:
                if entry[2]:
                    entry[2]["body"] = "tampered"

    edit_parse_cache(snapshot, tamper)
    (vectors,) = (isolated_env / ".neo" / "cache" / "vectors").rglob("vectors.bin")
    raw = bytearray(vectors.read_bytes())
    raw[64 + 40] ^= 0xFF
    vectors.write_bytes(bytes(raw))
    dry = neo(capsys, "doctor")
    assert dry.code == 1
    assert "do not match the blobs" in dry.out and "fail their checksum" in dry.out
    fixed = neo(capsys, "doctor", "--fix")
    assert fixed.code == 0, fixed.out + fixed.err
    assert not snapshot.exists() and not vectors.exists()
    assert neo(capsys, "show", ids[0]).code == 0
