"""Turn records: start / progress / terminal semantics, freshness and TTL."""
from __future__ import annotations

import json

from neo_git.agents.turns import (
    TurnSettings, finish_turn, load_turns, newest_per_agent, progress_turn, start_turn,
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
    path = paths.neo_dir / "turns.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[[[", encoding="utf-8")
    assert load_turns(paths) == []
    start_turn(paths, "claude", "s")
    assert len(load_turns(paths)) == 1
    assert list(paths.neo_dir.glob("turns.json.corrupt-*"))
