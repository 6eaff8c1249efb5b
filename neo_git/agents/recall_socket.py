"""A running `git neo mcp` server answers the agent hooks' recalls over a unix socket.

A hook is a new process per prompt: importing numpy and pygit2 and reading 5,000 facts and
their vectors costs it ~300 ms before any ranking. The agent already runs `git neo mcp`,
which holds all of that in memory, so the server also listens on `.git/neo/agent.sock`
(mode 0600, one JSON line in, one JSON line out) and the prompt-submit hook asks it first,
falling back to its own recall when nobody listens. The answer is the same
`ContextResult.to_dict()` the MCP `recall` tool returns.
"""
from __future__ import annotations

import json
import os
import socket
import socketserver
import threading
from pathlib import Path
from typing import Any, Callable

SOCKET_NAME = "agent.sock"
MAX_REQUEST = 256 * 1024
CLIENT_TIMEOUT = 0.8     # seconds: a wedged server must not eat the hook's own time limit


def socket_path(neo_dir: Path) -> Path:
    """Where the server listens for this repository."""
    return Path(neo_dir) / SOCKET_NAME


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        try:
            line = self.rfile.readline(MAX_REQUEST)
            request = json.loads(line)
            if not isinstance(request, dict) or request.get("op") != "recall":
                raise ValueError("unknown request")
            result = self.server.recall(str(request.get("query") or ""), int(request.get("k", 5)),
                                        int(request.get("max_tokens", 12000)))
            reply = {"ok": True, "result": result}
        except Exception as exc:  # noqa: BLE001 - a bad request gets an error line, the server lives on
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
        self.wfile.write(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    recall: Callable[[str, int, int], dict]


def serve_recalls(neo_dir: Path, recall: Callable[[str, int, int], dict]) -> Callable[[], None] | None:
    """Listen in a background thread; returns a function that stops and removes the socket,
    or None when the socket cannot be made (path too long, another live server, read-only)."""
    path = socket_path(neo_dir)
    if len(os.fsencode(path)) >= 100:  # sun_path holds ~108 bytes
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            if _alive(path):
                return None  # another agent session's server already answers here
            path.unlink()
        old_mask = os.umask(0o177)
        try:
            server = _Server(str(path), _Handler)
        finally:
            os.umask(old_mask)
    except OSError:
        return None
    server.recall = recall
    thread = threading.Thread(target=server.serve_forever, name="neo-recall-socket", daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        try:
            path.unlink()
        except OSError:
            pass

    return stop


def _alive(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.2)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def recall_via_server(neo_dir: Path, query: str, k: int = 5, max_tokens: int = 12000) -> dict[str, Any] | None:
    """The server's recall for *query*, or None when no server answers (then recall in-process)."""
    path = socket_path(neo_dir)
    if not path.exists():
        return None
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(CLIENT_TIMEOUT)
    try:
        client.connect(str(path))
        client.sendall(json.dumps({"op": "recall", "query": query, "k": k, "max_tokens": max_tokens}).encode() + b"\n")
        chunks = []
        while True:
            chunk = client.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                break
        reply = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None
    finally:
        client.close()
    if not isinstance(reply, dict) or not reply.get("ok") or not isinstance(reply.get("result"), dict):
        return None
    return reply["result"]
