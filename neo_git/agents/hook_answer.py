"""Answering one agent hook for a hook process, in the words of `agents/wire.py`.

Two places answer: the agent's running `git neo mcp` server (the store, its facts and vectors
already in memory, shared with the MCP tools under one lock), and, when no server does, the
hook process's own forked child (`hooks.answer_in_child`). Either way the work is the same
`HookContext.handle`, and what the agent was given is recorded only after the hook process
says it printed it.
"""
from __future__ import annotations

import contextlib
import os
import socket
import threading
from dataclasses import dataclass
from typing import Any

from neo_git.agents.wire import MAX_PAYLOAD_BYTES, PROTOCOL, Hangup, Reader, parse_hook_args, send
from neo_git.hooklog import append_hook_log

ACK_GRACE = 0.5   # seconds past the hook's deadline to wait for its ack (it disarms before printing)


@dataclass
class ServedStore:
    """The MCP server's store as the hooks see it: one lock shared with the MCP tools, and the
    last `neo.agentHookTimeoutMs` read (announced at once to the next hook)."""

    store: Any
    lock: threading.Lock
    limit_ms: int | None = None


def read_request(reader: Reader, deadline: float) -> tuple[dict, bytes]:
    """A hook request and its payload bytes (Hangup when malformed)."""
    request = reader.line(deadline)
    size = request.get("size")
    if request.get("op") != "hook" or request.get("v") != PROTOCOL:
        raise Hangup(f"unknown request (op {str(request.get('op'))[:20]!r}, v {str(request.get('v'))[:5]})")
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_PAYLOAD_BYTES:
        raise Hangup("bad payload size")
    for key, kind in (("spawned", (int, float)), ("limit_ms", int), ("args", list)):
        if not isinstance(request.get(key), kind) or isinstance(request.get(key), bool):
            raise Hangup(f"bad {key}")
    return request, reader.exactly(size, deadline)


def answer_hook(conn: socket.socket, reader: Reader, request: dict, raw: bytes,
                served: ServedStore | None = None) -> None:
    """Answer one hook request on *conn*: announce the limit, answer, and once acknowledged
    record what the agent was given. *served*: the MCP server's store; None: open the
    repository here (a hook's child). Never raises for the hook's sake: failures are logged."""
    from neo_git.agents.handlers import Answer, HookContext
    from neo_git.agents.payload import PayloadError, check_event, parse_payload

    event, agent, _ = parse_hook_args(request["args"])
    spawned, limit = float(request["spawned"]), max(50, int(request["limit_ms"]))
    fixed = bool(request.get("limit_fixed"))
    if served is not None:
        mine = served.store.paths
        asked = request.get("git_dir")
        if mine is None or not isinstance(asked, str) or os.path.realpath(asked) != str(mine.git_dir):
            # Another worktree of this clone (its session facts, its branch): not this server's to answer.
            with contextlib.suppress(OSError):
                send(conn, {"error": "this server answers another worktree"})
            return
        if not fixed and served.limit_ms:
            limit = served.limit_ms
    try:
        send(conn, {"limit_ms": limit})
    except OSError:
        return   # the hook is gone already
    neo_dir = served.store.paths.neo_dir if served is not None else None
    answer = Answer()
    try:
        payload = parse_payload(raw)
        event = check_event(event, agent, payload)
        with served.lock if served is not None else contextlib.nullcontext():
            if served is not None:
                store = served.store
                context = HookContext(agent, payload, store.repo, store.paths, shared_store=store)
            else:
                context = HookContext.open(agent, payload)
            if context is not None:
                neo_dir = context.paths.neo_dir
                if not fixed:
                    configured = max(50, context.timeout_ms(limit))
                    if served is not None:
                        served.limit_ms = configured
                    if configured != limit:
                        limit = configured
                        send(conn, {"limit_ms": limit})
                context.deadline = spawned + limit / 1000
                answer = context.handle(event)
    except PayloadError as exc:
        append_hook_log(neo_dir or _neo_dir_of(request), f"agent {agent} {event}: {exc}")
    except OSError as exc:
        if isinstance(exc, (BrokenPipeError, ConnectionResetError)):
            return   # the hook is gone (out of time): nothing more to say
        append_hook_log(neo_dir or _neo_dir_of(request), f"agent {agent} {event}: {type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - fail-soft: an agent hook never breaks the agent
        append_hook_log(neo_dir or _neo_dir_of(request), f"agent {agent} {event}: {type(exc).__name__}: {exc}")
    try:
        send(conn, {"output": answer.output})
        if answer.output is None or answer.record is None:
            return
        if reader.line(spawned + limit / 1000 + ACK_GRACE).get("ack") is True:
            # Under the store's lock too: the server's threads then write the turn records and
            # session files one after the other instead of polling each other's flocks.
            with served.lock if served is not None else contextlib.nullcontext():
                answer.delivered()
    except (OSError, Hangup):
        pass   # not printed (the hook ran out of time): nothing is recorded as given
    except Exception as exc:  # noqa: BLE001
        append_hook_log(neo_dir, f"agent {agent} {event}: recording what was given: {type(exc).__name__}: {exc}")


def _neo_dir_of(request: dict):
    """Where to log when the payload named no repository: the hook's own git dir, if it found one."""
    from pathlib import Path

    git_dir = request.get("git_dir")
    if not isinstance(git_dir, str):
        from neo_git.agents.hooks import cwd_neo_dir

        return cwd_neo_dir()
    common = Path(git_dir)
    try:
        pointer = (common / "commondir").read_text(encoding="utf-8").strip()
        common = (common / pointer).resolve()
    except OSError:
        pass
    return common / "neo"
