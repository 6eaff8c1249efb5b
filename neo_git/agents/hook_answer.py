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
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neo_git.agents.wire import MAX_PAYLOAD_BYTES, PROTOCOL, Hangup, Reader, parse_hook_args, send
from neo_git.hooklog import append_hook_log

if TYPE_CHECKING:  # pragma: no cover
    import _socket

ACK_GRACE = 0.5   # seconds past the hook's deadline to wait for its ack (it disarms before printing)
# (repository, paths, event) -> the embedder a hook's own child answers with (`warm.warm_up_elsewhere`)
WarmUp = Callable[[Any, Any, str], Any]


@dataclass
class ServedStore:
    """A long-lived process's store as the hooks see it (the MCP server's, shared with its tools
    under one lock; or the warm process's, `agents/warm.py`), the last `neo.agentHookTimeoutMs`
    read (announced at once to the next hook), and when a hook last asked. *refuse*, when set,
    names a reason not to answer (the hook then answers elsewhere); *worktrees*, when set, opens
    the store of another worktree of the same clone (else such hooks are not this process's)."""

    store: Any
    lock: threading.Lock
    limit_ms: int | None = None
    last_used: float = 0.0
    refuse: Callable[[], str | None] | None = None
    worktrees: Callable[[str], Any] | None = None

    def store_for(self, git_dir: object) -> Any:
        """The store answering hooks of the worktree whose git dir is *git_dir*, or None."""
        mine = self.store.paths
        if mine is None or not isinstance(git_dir, str):
            return None
        if os.path.realpath(git_dir) == str(mine.git_dir):
            return self.store
        return self.worktrees(os.path.realpath(git_dir)) if self.worktrees is not None else None


MAX_WORKTREES = 16   # stores of other worktrees a long-lived process keeps open


def other_worktrees(store: Any) -> Callable[[str], Any]:
    """A `ServedStore.worktrees` for *store*: the store of another worktree of the same clone
    (its own session facts and branch), opened once with the same embedder; None for a git
    dir of another clone or one that does not open. Called under the served lock."""
    opened: dict[str, Any] = {}

    def open_worktree(git_dir: str) -> Any:
        if git_dir in opened:
            return opened[git_dir]
        from neo_git.identity import open_repository, repository_paths
        from neo_git.store import FactStore

        try:
            repo = open_repository(git_dir)
            if repository_paths(repo).common_dir != store.paths.common_dir:
                return None
            other = FactStore(repo, embedder=store.embedder)
        except Exception:  # noqa: BLE001 - not a worktree this process can serve: the hook answers elsewhere
            return None
        if len(opened) >= MAX_WORKTREES:
            opened.pop(next(iter(opened)))
        opened[git_dir] = other
        return other

    return open_worktree


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


def answer_hook(conn: socket.socket | _socket.socket, reader: Reader, request: dict, raw: bytes,
                served: ServedStore | None = None, warm_up: WarmUp | None = None) -> None:
    """Answer one hook request on *conn*: announce the limit, answer, and once acknowledged
    record what the agent was given. *served*: the MCP server's store; None: open the
    repository here (a hook's child), whose embedder *warm_up* chooses (`hooks.py` passes
    `warm.warm_up_elsewhere`). Never raises for the hook's sake: failures are logged."""
    from neo_git.agents.handlers import Answer, HookContext
    from neo_git.agents.payload import PayloadError, check_event, parse_payload

    event, agent, _ = parse_hook_args(request["args"])
    spawned, limit = float(request["spawned"]), max(50, int(request["limit_ms"]))
    fixed = bool(request.get("limit_fixed"))
    if served is not None and not fixed and served.limit_ms:
        limit = served.limit_ms
    try:
        # The first word at once, before waiting for the store's lock: a hook gives a server that
        # stays silent half a second, and twenty hooks at once queue on the lock.
        send(conn, {"limit_ms": limit})
    except OSError:
        return   # the hook is gone already
    served_store = None
    if served is not None:
        with served.lock:   # the store's repository is one thread's at a time
            refusal = served.refuse() if served.refuse is not None else None
            served_store = None if refusal else served.store_for(request.get("git_dir"))
            if served_store is not None and served_store.access.path is not None:
                # Recall's recency boost reads when each fact was last recalled: a long-lived process
                # reads the counts afresh per hook, as a hook's own process would, instead of keeping
                # the view it loaded first (a `git neo recall` in a terminal counts too).
                from neo_git.store.access import AccessLog

                served_store.access = AccessLog(served_store.access.path)
        if served_store is None:
            # Another worktree of this clone this server cannot open, or a reason not to answer
            # any more: the hook asks elsewhere (its own child).
            with contextlib.suppress(OSError):
                send(conn, {"error": refusal or "this server answers another worktree"})
            return
    neo_dir = served_store.paths.neo_dir if served_store is not None else None
    answer = Answer()
    try:
        payload = parse_payload(raw)
        event = check_event(event, agent, payload)
        with served.lock if served is not None else contextlib.nullcontext():
            context: HookContext | None
            if served_store is not None:
                context = HookContext(agent, payload, served_store.repo, served_store.paths, shared_store=served_store)
            else:
                context = HookContext.open(agent, payload)
                if context is not None and event != "session-end" and warm_up is not None:
                    # With a neural embedder the model would cost this short-lived process about
                    # a second: start the warm process that keeps it loaded for the next hooks,
                    # and answer this prompt with the built-in embedder meanwhile.
                    context.embedder = warm_up(context.repo, context.paths, event)
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
        from neo_git.agents.gitdir import cwd_neo_dir

        return cwd_neo_dir()
    common = Path(git_dir)
    try:
        pointer = (common / "commondir").read_text(encoding="utf-8").strip()
        common = (common / pointer).resolve()
    except OSError:
        pass
    return common / "neo"
