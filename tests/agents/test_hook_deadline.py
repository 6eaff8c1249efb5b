"""Agent hooks under stress without the agent's server: the limit counts from the spawn, the
process the agent waits for never does the heavy work (a forked child does, and is stopped at
the limit), a payload whose pipe never closes is read with a deadline, and every ending is
exit 0 — with the answer, or with nothing."""
from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import time

from tests.helpers.agents import finish, payload, spawn_hook

HTTP_BODY = "All outbound HTTP goes through httpx with a 30 s timeout."


def _facts(repo) -> None:
    from neo_git.store import FactStore

    FactStore.open(repo).add("HTTP client", HTTP_BODY, kind="decision")


def _prompt(repo, session: str = "s") -> bytes:
    return json.dumps(payload("claude_user_prompt_submit", repo, session_id=session,
                              prompt="which HTTP client?")).encode()


def _log(repo) -> str:
    log = repo / ".git" / "neo" / "hook.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


def test_a_whole_payload_on_a_pipe_that_never_closes_is_answered(repo_with_commit):
    _facts(repo_with_commit)
    proc = spawn_hook("prompt-submit", "claude", _prompt(repo_with_commit), repo_with_commit, close=False,
                      env={"NEO_AGENT_HOOK_TIMEOUT_MS": "20000"})
    code, out, _ = finish(proc, 15)     # returns long before the 20 s limit: no EOF needed
    assert code == 0 and HTTP_BODY in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_half_a_payload_on_an_open_pipe_ends_at_the_limit_with_no_output(repo_with_commit):
    started = time.monotonic()
    proc = spawn_hook("prompt-submit", "claude", b'{"session_id": "s", "hook_event_', repo_with_commit, close=False,
                      env={"NEO_AGENT_HOOK_TIMEOUT_MS": "1500"})
    code, out, err = finish(proc, 30)
    assert code == 0 and out == b"" and err == b""
    assert time.monotonic() - started < 20         # ended with its stdin still open (the hang: finish's 30 s)
    assert "not JSON" in _log(repo_with_commit)    # read with a deadline: what arrived is all there is


def test_the_limit_counts_from_the_spawn_not_from_the_imports(tmp_path):
    # A process that spent longer than the limit before arming it exits at once, 0, silently.
    script = ("import os, time; os.environ['NEO_AGENT_HOOK_TIMEOUT_MS'] = '300'; time.sleep(0.6)\n"
              "from neo_git.agents.deadline import Clock\nClock.start()\n"
              "time.sleep(60); print('still running')")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=tmp_path, timeout=90)
    assert proc.returncode == 0 and proc.stdout == b""
    assert time.monotonic() - start < 30               # not the 60 s sleep
    # One with time left is stopped when the budget since its spawn runs out, not later.
    script = script.replace("'300'", "'1500'")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=tmp_path, timeout=90)
    assert proc.returncode == 0 and proc.stdout == b""
    assert time.monotonic() - start < 30


def test_a_child_stuck_past_the_limit_is_stopped_and_the_hook_exits_0_silently(repo_with_commit):
    # The session's turn record lock is held: the forked child waits on it (up to 5 s), the hook must not.
    from neo_git.agents.turn_store import session_file
    from neo_git.identity import open_repository, repository_paths

    _facts(repo_with_commit)
    turns = session_file(repository_paths(open_repository(repo_with_commit)), "claude", "s")
    lock = turns.with_name(turns.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        code, out, err = finish(spawn_hook("prompt-submit", "claude", _prompt(repo_with_commit), repo_with_commit,
                                           env={"NEO_AGENT_HOOK_TIMEOUT_MS": "800"}), 30)
        ended = time.monotonic() - started
    assert code == 0 and out == b"" and err == b""
    assert ended < 4.5                                 # the child alone would have waited 5 s for the lock
    assert "stopped at the time limit" in _log(repo_with_commit)


def test_twenty_hooks_at_once_without_a_server_all_exit_0_with_an_answer_or_nothing(repo_with_commit, monkeypatch):
    monkeypatch.delenv("NEO_AGENT_HOOK_TIMEOUT_MS", raising=False)   # the real limit, 1.5 s
    _facts(repo_with_commit)
    started = time.monotonic()
    procs = [spawn_hook("prompt-submit", "claude", _prompt(repo_with_commit, f"s{n}"), repo_with_commit,
                        close=n % 2 == 0) for n in range(20)]         # half never close stdin
    results = [finish(proc, 60) for proc in procs]
    assert [code for code, _, _ in results] == [0] * 20               # never the last-resort exit 1 any more
    for _code, out, err in results:                                   # an answer, or nothing: never half, never noise
        assert err == b""
        if out.strip():
            assert HTTP_BODY in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert time.monotonic() - started < 45                            # all ended, none hung on its open stdin
    assert "Traceback" not in _log(repo_with_commit)                  # only time limits, no bug
