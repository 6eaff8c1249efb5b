"""`git-neo hook agent <event>` as an agent runs it: the process that holds the agent's pipes.

It does as little as it can, in plain Python, so that twenty of them at once fit in a
two-core machine's 1.5 s, and so that it always ends on time with exit 0:

1. the budget counts from the spawn (`deadline.Clock`, SIGALRM armed first thing);
2. the payload is read with a deadline (`wire.read_payload`: a whole JSON object is enough,
   the agent may never close stdin);
3. `.git/neo` is found from git's files (`gitdir.find_git_place`), the repository's
   `neo.agentHookTimeoutMs` is read with `git config` (`deadline.configured_limit_ms`: the limit
   is this process's own, never the answerer's), and the agent's running `git neo mcp` server —
   or the warm process (`agents/warm.py`) — is asked over `.git/neo/agent.sock` (`wire`): it holds the store in
   memory and answers the whole hook — turn record, recall, rendering, de-duplication. This
   process then never imports numpy or pygit2 nor reads the store (~25 ms of CPU, against
   ~200 ms for a hook that does the work itself);
4. with no server (or one that says "not mine" or breaks off), a forked child does the work
   (`hooks.answer_in_child`; with a neural embedder it starts the warm process and answers with
   the built-in embedder) and answers over a socket pair in the same words; this process
   only waits, with a deadline, and kills the child when time is up. A child stuck in a C
   call past the deadline can no longer hold the hook: the process the agent waits for is
   never the one doing the work.

Whatever happens, the process exits 0: with the answer on stdout, or with nothing (out of
time, nothing to say, a failure, written to `.git/neo/hook.log`). Exit 2 would block the
agent's action and any other non-zero status is shown as a hook error (Claude Code's and
Codex's hooks reference), and git-neo being slow is not the agent's error.
Standard library only, up to the fork.
"""
from __future__ import annotations

import _socket  # not `socket`: its enums and selectors cost ~3 ms of start-up, and the C type has every method used here
import json
import os
import sys
import time

from neo_git.agents.deadline import LIMIT_ENV, Clock, configured_limit_ms, log_line
from neo_git.agents.gitdir import GitPlace, find_git_place
from neo_git.agents.wire import (
    MAX_PAYLOAD_BYTES,
    PROTOCOL,
    SOCKET_NAME,
    STDIN_SHARE,
    Hangup,
    Reader,
    parse_hook_args,
    read_payload,
    send,
    unix_address,
)

TYPE_CHECKING = False   # no `typing` at run time (~3 ms of start-up)
if TYPE_CHECKING:  # pragma: no cover
    from typing import NoReturn

SERVER_FIRST_WORD = 0.5   # seconds a server that accepted has to say anything before the child takes over

DELIVERED, ANSWERED, ASK_ELSEWHERE = "delivered", "answered", "ask elsewhere"


def run_hook_process(args: list[str]) -> NoReturn:
    """Answer one agent hook (*args*: `<event> --agent <name>`) and exit 0, whatever happens."""
    clock = Clock.start()
    try:
        _run(args, clock)
    except BaseException as exc:  # noqa: BLE001 - a fork that failed, Ctrl-C, a bug: still exit 0, quietly
        log_line(clock.log_dir, f"stopped by {type(exc).__name__}"
                                f"{f' (errno {exc.errno})' if isinstance(exc, OSError) else ''}; no output")
        clock.stop_child()
    _exit()


def _run(args: list[str], clock: Clock) -> None:
    if os.environ.get("NEO_DISABLE") == "1":
        return
    event, agent, _ = parse_hook_args(args)
    raw = read_payload(sys.stdin.buffer, clock.spawned + clock.limit_ms / 1000 * STDIN_SHARE)
    payload, problem = _payload(raw)
    cwd = payload.get("cwd") if payload is not None else None
    place = find_git_place(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if isinstance(place, GitPlace):
        clock.log_dir = place.neo_dir
    if problem:
        log_line(clock.log_dir, f"agent {agent[:40]} {event[:40]}: {problem}; no output")
        return
    if place is None:
        return   # not inside a repository: nothing to remember here
    if not os.environ.get(LIMIT_ENV):   # the repository's neo.agentHookTimeoutMs, read by this process itself
        clock.extend(configured_limit_ms(cwd if isinstance(cwd, str) and cwd else os.getcwd(),
                                         clock.log_dir, clock.limit_ms))
    request = {"op": "hook", "v": PROTOCOL, "args": list(args), "spawned": clock.spawned,
               "limit_ms": clock.limit_ms, "limit_fixed": True,
               "git_dir": place.git_dir if isinstance(place, GitPlace) else None, "size": len(raw)}
    if isinstance(place, GitPlace) and _ask_server(place, request, raw, clock) != ASK_ELSEWHERE:
        return
    _ask_child(request, raw, clock)


def _exit() -> NoReturn:
    try:
        sys.stdout.flush()
    finally:
        os._exit(0)


def _payload(raw: bytes) -> tuple[dict | None, str]:
    """The payload as a dict, or a problem in fixed words (logged unredacted: it quotes nothing)."""
    if not raw.strip():
        return None, "empty hook input"
    if len(raw) > MAX_PAYLOAD_BYTES:
        return None, f"hook input too large (over {MAX_PAYLOAD_BYTES:,} bytes)"
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):
        return None, f"hook input is not JSON ({len(raw):,} bytes by the deadline)"
    if not isinstance(payload, dict):
        return None, "hook input is not a JSON object"
    return payload, ""


def _ask_server(place: GitPlace, request: dict, raw: bytes, clock: Clock) -> str:
    """Ask the agent's MCP server. ASK_ELSEWHERE when none listens, when it says the hook is not
    its own (another worktree's server), or when it breaks off with time left."""
    path = os.path.join(place.neo_dir, SOCKET_NAME)
    if not os.path.exists(path):
        return ASK_ELSEWHERE
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    folder = None
    try:
        conn.settimeout(max(0.01, min(SERVER_FIRST_WORD, clock.left())))
        try:
            address, folder = unix_address(path)   # any length: a long path goes by its folder's fd
            conn.connect(address)
            send(conn, request, raw)
        except OSError:
            return ASK_ELSEWHERE   # a stale socket file (a killed server), or no room in its backlog
        return _converse(conn, clock, first_word_within=SERVER_FIRST_WORD)
    finally:
        conn.close()
        if folder is not None:
            os.close(folder)


def _ask_child(request: dict, raw: bytes, clock: Clock) -> None:
    """Fork a child that answers in-process, in the same words as the server; wait for it with
    the deadline (on expiry the clock kills it)."""
    ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        ours.close()
        from neo_git.agents.hooks import answer_in_child

        answer_in_child(theirs, request, raw)   # never returns
    theirs.close()
    clock.child = pid
    try:
        outcome = _converse(ours, clock, first_word_within=None)
    finally:
        ours.close()
    if outcome != DELIVERED:   # delivered: the child records what it gave, then exits by itself
        clock.stop_child()


def _converse(conn, clock: Clock, first_word_within: float | None) -> str:
    """Send nothing more: read the answer (re-arming for the limit it announces), print it,
    acknowledge it. DELIVERED, ANSWERED (nothing to print), or ASK_ELSEWHERE."""
    reader = Reader(conn)
    by = clock.deadline if first_word_within is None else min(clock.deadline, time.monotonic() + first_word_within)
    while True:
        try:
            message = reader.line(by)
        except Hangup:
            if clock.left() <= 0:
                clock.expire("waiting for the answer")   # exits
            return ASK_ELSEWHERE
        by = clock.deadline   # it spoke: from now on it has until the deadline, and no longer
        if "error" in message:
            return ASK_ELSEWHERE
        if "output" not in message:
            # {"limit_ms": N}: the answerer is alive. The limit itself is this process's own
            # (`deadline.configured_limit_ms`): whatever listens on the socket cannot stretch it.
            continue
        output = message["output"]
        if not isinstance(output, dict):
            return ANSWERED
        clock.disarm()   # all or nothing: never stopped halfway through the line
        if not _print(output):
            return ANSWERED   # the agent left: nothing delivered, nothing acknowledged
        try:
            send(conn, {"ack": True})
        except OSError:
            pass
        return DELIVERED


def _print(output: dict) -> bool:
    try:
        sys.stdout.buffer.write(json.dumps(output, ensure_ascii=False).encode("utf-8") + b"\n")
        sys.stdout.buffer.flush()
        return True
    except (OSError, ValueError):
        return False
