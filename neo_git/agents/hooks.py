"""`git neo hook agent <event> --agent claude|codex`: what the agents' hook configurations run.

Events: session-start, prompt-submit, pre-tool-use, post-tool-use, stop, stop-failure, session-end (the
agent's own `hook_event_name` in the payload wins when present). Every hook is fail-soft:
on any internal error, a missing repository, a corrupt store or a held lock it exits 0
with no output and writes one line to `.git/neo/hook.log`. A hard time limit
(`neo.agentHookTimeoutMs`, default 1.5 s) counts from the agent's spawn.

As a process (what agents run) the hook is `agents/hook_process.py`: it asks the agent's
`git neo mcp` server, or a child it forks (`answer_in_child`, here), and always exits 0 on
time. `run_agent_hook` is the same hook inside the caller's process (tests, benchmarks, a
library caller), limited by a timer signal that raises `_TimeUp`.

Output follows the agents' shared wire format: context goes out as
`{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from neo_git.agents.deadline import DEFAULT_TIMEOUT_MS, LIMIT_ENV
from neo_git.agents.gitdir import cwd_neo_dir
from neo_git.agents.payload import PayloadError, check_event, parse_payload
from neo_git.agents.wire import STDIN_SHARE, Reader, parse_hook_args, read_payload
from neo_git.hooklog import append_hook_log

if TYPE_CHECKING:  # pragma: no cover
    import _socket


class _TimeUp(BaseException):
    """Raised by the timer signal: the hook ran out of time (not an Exception, so no handler
    inside the store swallows it)."""


def _arm(seconds: float) -> None:
    def on_alarm(signum, frame):  # signal handler signature
        raise _TimeUp()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(0.05, seconds))


def _disarm() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)


def run_agent_hook(args: Sequence[str], stdin: Any = None, stdout: Any = None) -> int:
    """Run one agent hook in this process; always returns 0 (errors go to the hook log)."""
    if os.environ.get("NEO_DISABLE") == "1":
        return 0
    event, agent, extra = parse_hook_args(args)
    stdin = sys.stdin.buffer if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    neo_dir = None
    try:
        limit_ms = int(os.environ.get(LIMIT_ENV) or DEFAULT_TIMEOUT_MS)
    except ValueError:
        limit_ms = DEFAULT_TIMEOUT_MS
    started = time.monotonic()
    try:
        if event == "finish-detached":  # the detached half of session-end (see turns.detach_finish)
            _finish_detached({**extra, "agent": agent})
            return 0
        _arm(limit_ms / 1000)
        payload = parse_payload(read_payload(stdin, started + limit_ms / 1000 * STDIN_SHARE))
        event = check_event(event, agent, payload)
        from neo_git.agents.handlers import HookContext

        context = HookContext.open(agent, payload)
        if context is None:
            return 0  # not a repository: nothing to remember here
        neo_dir = context.paths.neo_dir
        if not os.environ.get(LIMIT_ENV):
            configured = context.timeout_ms(limit_ms)
            if configured != limit_ms:
                limit_ms = configured
                _arm(max(0.05, configured / 1000 - (time.monotonic() - started)))
        answer = context.handle(event)
        _disarm()   # all or nothing: the line is written whole, then what was given is recorded
        if answer.output is not None:
            stdout.write(json.dumps(answer.output, ensure_ascii=False) + "\n")
            stdout.flush()
            answer.delivered()
    except _TimeUp:
        append_hook_log(neo_dir or cwd_neo_dir(), f"agent {agent} {event}: stopped at the time limit ({limit_ms} ms); no output")
    except PayloadError as exc:
        append_hook_log(neo_dir or cwd_neo_dir(), f"agent {agent} {event}: {exc}")
    except Exception as exc:  # noqa: BLE001 - fail-soft: an agent hook never breaks the agent
        append_hook_log(neo_dir or cwd_neo_dir(), f"agent {agent} {event}: {type(exc).__name__}: {exc}")
    finally:
        _disarm()
    return 0


def answer_in_child(conn: socket.socket | _socket.socket, request: dict, raw: bytes) -> NoReturn:
    """The forked child of a hook process with no server to ask: answer the hook here, over
    *conn*, in the server's words (`hook_answer.answer_hook`), then exit. The agent's pipes
    stay with the parent alone (the agent waits for their end, and the parent may have to
    leave without this child), so stdin, stdout and stderr become /dev/null."""
    try:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)   # the parent's clock; its timer did not fork
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        from neo_git.agents.hook_answer import answer_hook

        answer_hook(conn, Reader(conn), request, raw, warm_up=_warm_up_elsewhere)
    except BaseException:  # noqa: BLE001 - a child never unwinds into its parent's code
        pass
    finally:
        os._exit(0)


def _warm_up_elsewhere(repo, paths, event: str):
    from neo_git.agents.warm import warm_up_elsewhere  # only a child that opened a repository loads it

    return warm_up_elsewhere(repo, paths, event)


def _finish_detached(extra: dict) -> None:
    from neo_git.agents.turns import finish_turn
    from neo_git.identity import open_repository, repository_paths

    paths = repository_paths(open_repository(extra.get("cwd") or "."))
    try:
        finish_turn(paths, extra.get("agent", "claude"), extra.get("session", ""), extra.get("state", "completed"))
    except Exception as exc:  # noqa: BLE001
        append_hook_log(paths.neo_dir, f"agent session-end (detached): {type(exc).__name__}: {exc}")
