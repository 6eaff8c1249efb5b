"""A running `git neo mcp` server answers the agent hooks over a unix socket.

A hook is a new process per prompt: importing numpy and pygit2 and reading 5,000 facts and
their vectors costs it ~200 ms of CPU before any ranking, and twenty hooks at once need more
than a two-core machine gives in their 1.5 s. The agent already runs `git neo mcp`, which
holds all of that in memory, so the server also listens on `.git/neo/agent.sock` (mode 0600)
and answers whole hooks there — turn records, recall, rendering, what each session was
given — in the words of `agents/wire.py`; the hook process only forwards the payload and
prints the answer (`agents/hook_process.py`). Without an MCP server, the warm process
(`agents/warm.py`) listens here the same way.

A path longer than `sockaddr_un` holds is bound through its folder's descriptor
(`wire.unix_address`); where that cannot be done the caller is told why.
"""
from __future__ import annotations

import os
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from pathlib import Path

from neo_git.agents.hook_answer import ServedStore, answer_hook, read_request
from neo_git.agents.wire import SOCKET_NAME, Hangup, Reader, send, unix_address

REQUEST_WAIT = 2.0   # seconds a connection has to send its request


def socket_path(neo_dir: str | Path) -> Path:
    """Where the server listens for this repository."""
    return Path(neo_dir) / SOCKET_NAME


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        self.server.served.last_used = time.monotonic()
        reader = Reader(self.request)
        try:
            request, raw = read_request(reader, time.monotonic() + REQUEST_WAIT)
        except Hangup as exc:
            try:
                send(self.request, {"error": str(exc)[:200]})
            except OSError:
                pass
            return
        answer_hook(self.request, reader, request, raw, self.server.served)


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    request_queue_size = 64   # twenty hooks at once must all get in (the default backlog is 5)
    served: ServedStore

    def __init__(self, path: str) -> None:
        # Bound through unix_address: a path longer than sun_path is reached by its folder's
        # descriptor (socketserver would pass the long path to bind as is, and fail).
        super().__init__(path, _Handler, bind_and_activate=False)
        address, folder = unix_address(path)
        try:
            self.socket.bind(address)
        except OSError:
            self.server_close()
            raise
        finally:
            if folder is not None:
                os.close(folder)
        self.server_address = path
        self.server_activate()


def serve_hooks(neo_dir: Path, served: ServedStore,
                report: Callable[[str], None] | None = None) -> Callable[[], None] | None:
    """Listen in a background thread; returns a function that stops and removes the socket,
    or None when the socket cannot be made (another live server, a read-only folder, a path
    this system cannot reach), after telling *report* why."""
    path = socket_path(neo_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            if listening(path):
                return None  # another agent session's server already answers here
            path.unlink()
        old_mask = os.umask(0o177)
        try:
            server = _Server(str(path))
        finally:
            os.umask(old_mask)
    except OSError as exc:
        if report is not None:
            report(f"cannot listen on {path} ({exc.strerror or exc}): agent hooks answer in their own processes")
        return None
    server.served = served
    try:
        mine = path.stat().st_ino
    except OSError:
        mine = None
    thread = threading.Thread(target=server.serve_forever, name="neo-hook-socket", daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        try:
            if path.stat().st_ino == mine:   # not a socket another server has put there since
                path.unlink()
        except OSError:
            pass

    return stop


def listening(path: Path) -> bool:
    """Does a server accept connections on the unix socket *path*? (A killed server leaves its
    socket file behind: the file alone says nothing.)"""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.2)
    folder = None
    try:
        address, folder = unix_address(str(path))
        probe.connect(address)
        return True
    except OSError:
        return False
    finally:
        probe.close()
        if folder is not None:
            os.close(folder)
