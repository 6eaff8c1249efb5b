"""Agent hooks under stress: the time limit counts from the agent's spawn (start-up included),
is enforced before anything heavy is imported, and a payload whose pipe never closes is read
with a deadline."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from tests.agents.helpers import payload


def _spawn(repo, data: bytes, *, close: bool, env: dict | None = None) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "neo_git.cli", "hook", "agent", "prompt-submit",
                             "--agent", "claude"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=repo, env={**os.environ, **(env or {})})
    proc.stdin.write(data)
    proc.stdin.flush()
    if close:
        proc.stdin.close()
    return proc


def _finish(proc: subprocess.Popen, timeout: float) -> bytes:
    """Its stdout once it exits (its stdin may still be open: the agent never closed it)."""
    proc.wait(timeout=timeout)
    return proc.stdout.read()


def _facts(repo) -> None:
    from neo_git.store import FactStore

    FactStore.open(repo).add("HTTP client", "All outbound HTTP goes through httpx with a 30 s timeout.",
                             kind="decision")


def test_a_whole_payload_on_a_pipe_that_never_closes_is_answered(repo_with_commit):
    _facts(repo_with_commit)
    data = json.dumps(payload("claude_user_prompt_submit", repo_with_commit, prompt="which HTTP client?")).encode()
    proc = _spawn(repo_with_commit, data, close=False, env={"NEO_AGENT_HOOK_TIMEOUT_MS": "20000"})
    try:
        out = _finish(proc, 15)     # returns long before the 20 s limit: no EOF needed
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert "httpx" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_half_a_payload_on_an_open_pipe_ends_at_the_limit_with_no_output(repo_with_commit):
    proc = _spawn(repo_with_commit, b'{"session_id": "s", "hook_event_', close=False,
                  env={"NEO_AGENT_HOOK_TIMEOUT_MS": "1500"})
    try:
        out = _finish(proc, 30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out == b""
    log = (repo_with_commit / ".git" / "neo" / "hook.log").read_text(encoding="utf-8")
    assert "not JSON" in log or "time limit" in log   # read with a deadline: what arrived is all there is


def test_the_limit_counts_from_the_spawn_not_from_the_imports(tmp_path):
    # A process that spent longer than the limit before arming it exits at once, 0, silently.
    script = ("import os, time; os.environ['NEO_AGENT_HOOK_TIMEOUT_MS'] = '300'; time.sleep(0.6)\n"
              "from neo_git.agents.deadline import arm_at_start\narm_at_start()\n"
              "time.sleep(10); print('still running')")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=tmp_path, timeout=30)
    assert proc.returncode == 0 and proc.stdout == b""
    assert time.monotonic() - start < 8                # not the 10 s sleep
    # One with time left is stopped when the budget since its spawn runs out, not later.
    script = script.replace("'300'", "'1500'")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=tmp_path, timeout=30)
    assert proc.returncode == 0 and proc.stdout == b""
    assert time.monotonic() - start < 8


def test_twenty_hooks_at_once_all_end_cleanly(repo_with_commit):
    _facts(repo_with_commit)
    procs = []
    for n in range(20):
        data = json.dumps(payload("claude_user_prompt_submit", repo_with_commit, session_id=f"s{n}",
                                  prompt="which HTTP client?")).encode()
        procs.append(_spawn(repo_with_commit, data, close=n % 2 == 0))   # half never close stdin
    outputs = []
    try:
        for proc in procs:
            out = _finish(proc, 60)
            outputs.append((proc.returncode, out))
    finally:
        for proc in procs:
            proc.kill()
    # 0, or 1 from the last-resort backstop (faulthandler ends a process stuck in a C call past
    # the deadline; agents treat it as a non-blocking hook error): never a hang, never a crash.
    assert {code for code, _ in outputs} <= {0, 1}
    for _code, out in outputs:                         # an answer, or nothing (out of time): never half
        if out.strip():
            assert "hookSpecificOutput" in json.loads(out)
    log = repo_with_commit / ".git" / "neo" / "hook.log"
    assert not log.exists() or "Traceback" not in log.read_text(encoding="utf-8")   # only time limits, no bug
