"""Turn records: start / progress / terminal semantics, freshness and TTL."""
from __future__ import annotations

import json
import time

from neo_git.agents.turn_store import session_file
from neo_git.agents.turns import (
    TurnSettings,
    finish_turn,
    load_turns,
    newest_per_agent,
    progress_turn,
    start_turn,
)
from neo_git.cli import main
from neo_git.identity import open_repository, repository_paths

SETTINGS = TurnSettings(fresh_seconds=60, ttl_seconds=3600)


def test_start_progress_terminal_and_states_over_time(repo_with_commit):
    paths = repository_paths(open_repository(repo_with_commit))
    assert progress_turn(paths, "claude", "s1", settings=SETTINGS, now=1000) is None  # progress never starts one
    turn = start_turn(paths, "claude", "s1", settings=SETTINGS, now=1000)
    assert turn.status(1030) == "active" and turn.status(1061) == "stale"
    moved = progress_turn(paths, "claude", "s1", settings=SETTINGS, now=1050)
    assert moved.started_at == 1000 and moved.last_progress_at == 1050 and moved.status(1100) == "active"
    second = start_turn(paths, "claude", "s1", settings=SETTINGS, now=1200)   # a new prompt: the old turn ends
    first, newest = load_turns(paths)
    assert first.terminal_state == "interrupted" and newest.turn_id == second.turn_id
    closed = finish_turn(paths, "claude", "s1", "completed", now=1300)
    assert closed.turn_id == second.turn_id and closed.status(1300) == "finished"
    assert finish_turn(paths, "claude", "s1", "completed", now=1301) is None      # nothing open any more
    assert closed.status(1200 + 3600) == "expired"
    start_turn(paths, "codex", "s9", settings=SETTINGS, now=10_000)                # prunes the expired rows
    assert [t.agent for t in load_turns(paths)] == ["codex"]


def test_turns_command_shows_newest_per_session(repo_with_commit, monkeypatch, capsys):
    monkeypatch.chdir(repo_with_commit)
    paths = repository_paths(open_repository(repo_with_commit))
    start_turn(paths, "claude", "a")
    start_turn(paths, "claude", "a")
    start_turn(paths, "codex", "b")
    assert len(newest_per_agent(load_turns(paths))) == 2
    assert main(["turns", "--json"]) == 0
    views = json.loads(capsys.readouterr().out)
    assert {(v["agent"], v["status"]) for v in views} == {("claude", "active"), ("codex", "active")}
    assert main(["turns"]) == 0 and "claude" in capsys.readouterr().out


def test_a_corrupt_turns_file_is_set_aside_and_recording_goes_on(repo_with_commit):
    paths = repository_paths(open_repository(repo_with_commit))
    start_turn(paths, "codex", "other")
    path = session_file(paths, "claude", "s")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[[[", encoding="utf-8")
    assert [t.session_id for t in load_turns(paths)] == ["other"]     # the other sessions still read
    start_turn(paths, "claude", "s")
    assert sorted(t.session_id for t in load_turns(paths)) == ["other", "s"]
    assert list(path.parent.glob(path.name + ".corrupt-*"))


def test_a_single_turns_file_from_before_is_split_into_session_files(repo_with_commit):
    paths = repository_paths(open_repository(repo_with_commit))
    now = time.time()
    rows = [{"turn_id": f"t{n}", "session_id": f"s{n % 2}", "agent": "claude", "started_at": now - 100 + n,
             "last_progress_at": now - 100 + n, "fresh_until": now + 200, "expires_at": now + 3600,
             "terminal_state": None if n == 3 else "completed", "ended_at": None, "injected": []} for n in range(4)]
    (paths.neo_dir).mkdir(parents=True, exist_ok=True)
    (paths.neo_dir / "turns.json").write_text(json.dumps({"version": 1, "turns": rows}), encoding="utf-8")
    assert [t.turn_id for t in load_turns(paths)] == ["t0", "t1", "t2", "t3"]   # read as it is
    start_turn(paths, "claude", "s1", turn_id="t4", now=now)                     # the first write splits it
    assert not (paths.neo_dir / "turns.json").exists()
    by_id = {t.turn_id: t for t in load_turns(paths)}
    assert sorted(by_id) == ["t0", "t1", "t2", "t3", "t4"]
    assert by_id["t3"].terminal_state == "interrupted"                           # s1's open turn, closed by t4
    assert session_file(paths, "claude", "s0").exists() and session_file(paths, "claude", "s1").exists()


def test_twenty_sessions_write_their_own_files_and_expired_sessions_are_swept(repo_with_commit):
    paths = repository_paths(open_repository(repo_with_commit))
    t0 = time.time()
    start_turn(paths, "claude", "old", settings=TurnSettings(ttl_seconds=60), now=t0)
    for n in range(20):
        start_turn(paths, "codex", f"s{n}", now=t0 + 1)
    assert len({session_file(paths, "codex", f"s{n}") for n in range(20)}) == 20
    assert sorted(t.session_id for t in load_turns(paths)) == sorted(["old"] + [f"s{n}" for n in range(20)])
    start_turn(paths, "codex", "next", now=t0 + 3700)             # an hour on: the next start sweeps
    assert not session_file(paths, "claude", "old").exists()      # its only turn expired
    assert sorted(t.session_id for t in load_turns(paths)) == sorted(["next"] + [f"s{n}" for n in range(20)])
