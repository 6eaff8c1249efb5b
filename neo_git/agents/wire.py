"""The conversation between an agent hook process and whoever answers it.

The process the agent spawns (`agents/hook_process.py`) stays small: it reads the payload,
finds `.git/neo` from git's files, and asks the agent's running `git neo mcp` server over
`.git/neo/agent.sock` (or the warm process listening there, `agents/warm.py`) — or, with no
server, a child it forks — for the answer. All speak this, one JSON object a line:

    hook   → {"op": "hook", "v": 1, "args": [...], "spawned": T, "limit_ms": N,
              "limit_fixed": bool, "git_dir": "...", "size": S}  then S bytes: the agent's payload
    answer → {"limit_ms": N}          at once: "I am answering" (the hook process keeps its own
                                      limit, read from the repository itself: whatever listens on
                                      the socket cannot stretch it)
    answer → {"output": {...}|null}   what to print; or {"error": "..."}: ask someone else
    hook   → {"ack": true}            after the output was written to the agent

Only after the ack does the answerer record what the agent was given (the session's
de-duplication, the turn's injected facts): a hook out of time before it could print leaves
no fact marked as shown. `spawned` is `time.monotonic()`, one clock for all processes on Linux.
Standard library only: the hook process imports it at start-up.
"""
from __future__ import annotations

import json
import os
import select
import time

# No `socket` or `typing` here (~3 ms each of a hook process's start-up): the connections are
# `socket.socket` (the server's) or `_socket.socket` (the hook's), with the same methods.

SOCKET_NAME = "agent.sock"
PROTOCOL = 1
MAX_PAYLOAD_BYTES = 8 * 1024 * 1024
MAX_LINE = 1024 * 1024     # a header or an answer line (an answer is a context of ~1,500 tokens)
STDIN_SHARE = 0.5          # at most this share of the limit waits for the payload (an agent that never closes stdin)


SUN_PATH_MAX = 100         # bytes of a socket path bound as is (sun_path holds 108 on Linux, 104 on macOS)


class Hangup(Exception):
    """The other side closed, broke the protocol, or did not answer in time."""


def unix_address(path: str) -> tuple[str, int | None]:
    """(address to bind or connect, folder descriptor to close afterwards) for the unix socket
    at *path*, whatever its length. A path of more than SUN_PATH_MAX bytes does not fit in
    `sockaddr_un`: it is reached through an O_PATH descriptor of its folder
    (`/proc/self/fd/N/<name>`, ~30 bytes; Linux resolves the magic link inside `bind` and
    `connect`, and the socket file is made in the folder itself, mode and all). OSError, saying
    why, where that cannot be done (no /proc, e.g. macOS)."""
    if len(os.fsencode(path)) < SUN_PATH_MAX:
        return path, None
    folder, name = os.path.split(path)
    if not os.path.isdir("/proc/self/fd"):
        raise OSError(f"the socket path is {len(os.fsencode(path))} bytes, over the {SUN_PATH_MAX} bytes a unix "
                      "socket address holds, and this system has no /proc/self/fd to reach it by a shorter name")
    fd = os.open(folder or ".", getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC)
    address = f"/proc/self/fd/{fd}/{name}"
    if len(os.fsencode(address)) >= SUN_PATH_MAX:   # a file name alone that long: nothing shortens it
        os.close(fd)
        raise OSError(f"the socket's file name is too long for a unix socket address ({len(name)} characters)")
    return address, fd


def send(conn, message: dict, extra: bytes = b"") -> None:
    """One JSON line (then *extra* raw bytes) on *conn*. ASCII JSON: any string encodes."""
    conn.sendall(json.dumps(message).encode("ascii") + b"\n" + extra)


class Reader:
    """JSON lines (and counted raw bytes) from a socket, each by a monotonic deadline."""

    def __init__(self, conn) -> None:
        self.conn = conn
        self.buffer = bytearray()

    def _fill(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Hangup("out of time")
        self.conn.settimeout(left)
        try:
            chunk = self.conn.recv(1 << 16)
        except (OSError, ValueError) as exc:   # a timeout is an OSError (TimeoutError)
            raise Hangup(type(exc).__name__) from None
        if not chunk:
            raise Hangup("closed")
        self.buffer.extend(chunk)

    def line(self, deadline: float) -> dict:
        """The next JSON object; Hangup on EOF, a timeout, an over-long or non-object line."""
        while (end := self.buffer.find(b"\n")) < 0:
            if len(self.buffer) > MAX_LINE:
                raise Hangup("line too long")
            self._fill(deadline)
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            raise Hangup("not JSON") from None
        if not isinstance(message, dict):
            raise Hangup("not a JSON object")
        return message

    def exactly(self, size: int, deadline: float) -> bytes:
        """The next *size* raw bytes."""
        while len(self.buffer) < size:
            self._fill(deadline)
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data


def read_payload(stdin, deadline: float) -> bytes:
    """The hook's JSON payload: read until stdin closes, or as soon as what arrived parses as
    one JSON object (an agent may keep the pipe open), or *deadline* (monotonic) passes, or
    more than MAX_PAYLOAD_BYTES arrived."""
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return stdin.read()   # an in-memory stream (tests, a library caller): it ends by itself
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_PAYLOAD_BYTES:
        # Past the deadline, still take what is already there: twenty hooks started at once on two
        # cores may reach this point after it, with the whole payload waiting in the pipe.
        left = max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.rstrip().endswith(b"}"):
            try:
                json.loads(b"".join(chunks))
                break   # a whole payload: do not wait for the agent to close the pipe
            except (ValueError, RecursionError):
                continue
    return b"".join(chunks)


def parse_hook_args(args) -> tuple[str, str, dict[str, str]]:
    """(event, agent, extra `--key=value` options) from `hook agent`'s arguments."""
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
