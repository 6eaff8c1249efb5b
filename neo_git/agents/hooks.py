"""`git neo hook agent <event> --agent claude|codex`: what the agents' hook configurations run.

Events: session-start, prompt-submit, pre-tool-use, post-tool-use, stop, stop-failure, session-end (the
agent's own `hook_event_name` in the payload wins when present). Every hook is fail-soft:
on any internal error, a missing repository, a corrupt store or a held lock it exits 0
with no output and writes one line to `.git/neo/hook.log`. A hard time limit
(`neo.agentHookTimeoutMs`, default 1.5 s) is enforced inside the process with a timer
signal, so a slow disk or a huge store can never stall the agent.

Output follows the agents' shared wire format: context goes out as
`{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Sequence

from neo_git.agents.deadline import DEFAULT_TIMEOUT_MS, deadline
from neo_git.agents.payload import EVENTS, PayloadError, parse_payload, text_field
from neo_git.hooklog import append_hook_log

STDIN_SHARE = 0.5   # at most this share of the limit waits for the payload (an agent that never closes stdin)
AGENTS = ("claude", "codex")
OUR_EVENTS = ("session-start", "prompt-submit", "pre-tool-use", "post-tool-use", "stop", "stop-failure",
              "session-end")


class _TimeUp(BaseException):
    """Raised by the timer signal: the hook ran out of time (not an Exception, so no handler
    inside the store swallows it)."""


def _arm(seconds: float, log_dir: list | None = None) -> None:
    """Arm the limit. In a process of its own (armed at start, `deadline.arm_at_start`) expiry
    ends the process at once, exit 0, after one fixed log line: unwinding through the store's
    `finally` blocks, or redacting a message, takes CPU a starved machine does not give. Called
    in-process (tests, a library caller) it raises `_TimeUp` instead."""
    owned = deadline() is not None

    def on_alarm(signum, frame):  # noqa: ARG001 - signal handler signature
        if not owned:
            raise _TimeUp()
        from neo_git.agents.deadline import expire

        expire(log_dir[0] if log_dir else None)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(0.05, seconds))


def _disarm() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)


def read_payload(stdin: Any, deadline: float) -> bytes:
    """The hook's JSON payload: read until stdin closes, or as soon as what arrived parses as
    one JSON object (an agent may keep the pipe open), or *deadline* (monotonic) passes."""
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return stdin.read()   # an in-memory stream (tests, a library caller): it ends by itself
    import select

    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        data = b"".join(chunks)
        if data.rstrip().endswith(b"}"):
            try:
                json.loads(data)
                break   # a whole payload: do not wait for the agent to close the pipe
            except ValueError:
                continue
    return b"".join(chunks)


def _parse_args(args: Sequence[str]) -> tuple[str, str, dict]:
    event, agent, extra = "", "claude", {}
    rest = list(args)
    while rest:
        item = rest.pop(0)
        if item == "--agent" and rest:
            agent = rest.pop(0)
        elif item.startswith("--agent="):
            agent = item.split("=", 1)[1]
        elif item.startswith("--") and "=" in item:
            key, value = item[2:].split("=", 1)
            extra[key] = value
        elif not event:
            event = item
    return event, agent, extra


def run_agent_hook(args: Sequence[str], stdin: Any = None, stdout: Any = None) -> int:
    """Run one agent hook; always returns 0 (errors go to the hook log)."""
    if os.environ.get("NEO_DISABLE") == "1":
        return 0
    event, agent, extra = _parse_args(args)
    stdin = sys.stdin.buffer if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    neo_dir = None
    log_dir: list = [None]   # where an expiry logs, once the repository is known
    try:
        limit_ms = int(os.environ.get("NEO_AGENT_HOOK_TIMEOUT_MS") or DEFAULT_TIMEOUT_MS)
    except ValueError:
        limit_ms = DEFAULT_TIMEOUT_MS
    # The budget started when the agent spawned us (`deadline.arm_at_start`); called in-process
    # (tests, a library caller), it starts now.
    spawned = deadline()
    started = spawned - limit_ms / 1000 if spawned is not None and stdin is None else time.monotonic()
    try:
        left = limit_ms / 1000 - (time.monotonic() - started)
        if left <= 0.05 and event != "finish-detached":
            raise _TimeUp()   # start-up alone used the budget (a machine running many hooks at once)
        _arm(left if event != "finish-detached" else limit_ms / 1000, log_dir)
        if event == "finish-detached":  # the detached half of session-end (see _detach_finish)
            _finish_detached({**extra, "agent": agent})
            return 0
        payload = parse_payload(read_payload(stdin, started + limit_ms / 1000 * STDIN_SHARE))
        event = EVENTS.get(text_field(payload, "hook_event_name"), event)
        if event not in OUR_EVENTS:
            raise PayloadError(f"unknown agent hook event {event!r} (valid: {', '.join(OUR_EVENTS)})")
        if agent not in AGENTS:
            raise PayloadError(f"unknown agent {agent!r} (valid: {', '.join(AGENTS)})")
        from neo_git.agents.handlers import HookContext

        context = HookContext.open(agent, payload)
        if context is None:
            return 0  # not a repository: nothing to remember here
        neo_dir = log_dir[0] = context.paths.neo_dir
        remaining = limit_ms / 1000 - (time.monotonic() - started)
        configured = context.timeout_ms(limit_ms)
        if configured != limit_ms:
            _arm(max(0.05, configured / 1000 - (time.monotonic() - started)), log_dir)
        elif remaining <= 0:
            raise _TimeUp()
        output = context.handle(event)
        _disarm()
        if output is not None:
            stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
            stdout.flush()
    except _TimeUp:
        append_hook_log(neo_dir or _cwd_neo_dir(), f"agent {agent} {event}: stopped at the time limit ({limit_ms} ms); no output")
    except PayloadError as exc:
        append_hook_log(neo_dir or _cwd_neo_dir(), f"agent {agent} {event}: {exc}")
    except Exception as exc:  # noqa: BLE001 - fail-soft: an agent hook never breaks the agent
        append_hook_log(neo_dir or _cwd_neo_dir(), f"agent {agent} {event}: {type(exc).__name__}: {exc}")
    finally:
        _disarm()
    return 0


def _cwd_neo_dir():
    """`.git/neo` of the directory the agent started us in (where the log belongs when the
    payload itself was unreadable); None outside a repository."""
    try:
        from neo_git.identity import open_repository, repository_paths

        return repository_paths(open_repository()).neo_dir
    except BaseException:  # noqa: BLE001 - only choosing where to log
        return None


def detach_finish(agent: str, session_id: str, cwd: str, state: str) -> None:
    """Close a turn from a detached process (agents kill slow session-end hooks)."""
    subprocess.Popen(
        [sys.executable, "-m", "neo_git.cli", "hook", "agent", "finish-detached", f"--agent={agent}",
         f"--session={session_id}", f"--cwd={cwd}", f"--state={state}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True)


def _finish_detached(extra: dict) -> None:
    from neo_git.agents.turns import finish_turn
    from neo_git.identity import open_repository, repository_paths

    paths = repository_paths(open_repository(extra.get("cwd") or "."))
    try:
        finish_turn(paths, extra.get("agent", "claude"), extra.get("session", ""), extra.get("state", "completed"))
    except Exception as exc:  # noqa: BLE001
        append_hook_log(paths.neo_dir, f"agent session-end (detached): {type(exc).__name__}: {exc}")
