"""A loopback model server for tests and the ask benchmark: the subset of the OpenAI
Responses and Chat Completions, Anthropic Messages and Ollama chat wire formats that
git-neo uses, on 127.0.0.1, so the real SDK clients are exercised end to end.

Replies come from a script (`queue(...)`: a text, an HTTP error, a delay, a garbage
body) or, when the script is empty, from `responder(request) -> text`. Usage is billed
like the real APIs report it:
    input tokens  = characters of the request's messages / 4
    reasoning     = REASONING_BASE × REASONING_SCALE[effort] (OpenAI Responses: the
                    `reasoning.effort` sent; Anthropic: effort from the thinking budget;
                    Chat Completions and Ollama without think: 0), reported as
                    output_tokens_details.reasoning_tokens (OpenAI) or inside
                    output_tokens (Anthropic, which does not split them out)
    output tokens = characters of the reply text / 4 + reasoning
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from neo_git.ask.anthropic_api import THINKING_BUDGET
from neo_git.ask.usage import REASONING_SCALE

REASONING_BASE = 400
_EFFORT_OF_BUDGET = {budget: effort for effort, budget in THINKING_BUDGET.items()}


@dataclass
class Seen:
    """One request as the server received it."""

    path: str
    headers: dict
    raw: bytes
    body: Any

    @property
    def text(self) -> str:
        """The whole request body as text (for "never appears in a request" checks)."""
        return self.raw.decode("utf-8", errors="replace")

    @property
    def effort(self) -> str | None:
        """The effort this request asked for, read back from the wire format."""
        body = self.body if isinstance(self.body, dict) else {}
        if self.path.endswith("/responses"):
            return (body.get("reasoning") or {}).get("effort")
        if self.path.endswith("/messages"):
            thinking = body.get("thinking")
            return _EFFORT_OF_BUDGET.get(thinking["budget_tokens"] if thinking else 0)
        if self.path.endswith("/api/chat"):
            return "medium" if body.get("think") else "low"
        return None

    @property
    def messages_text(self) -> str:
        """System + user text of the request."""
        body = self.body if isinstance(self.body, dict) else {}
        parts = [body.get("instructions") or "", body.get("input") if isinstance(body.get("input"), str) else "",
                 body.get("system") if isinstance(body.get("system"), str) else ""]
        for message in body.get("messages") or []:
            content = message.get("content")
            parts.append(content if isinstance(content, str) else json.dumps(content))
        return "\n".join(parts)

    @property
    def stage(self) -> str:
        """The loop step (the first line of the system message says `STAGE: <name>`)."""
        for line in self.messages_text.splitlines():
            if line.startswith("STAGE: "):
                return line[7:].strip()
        return "?"


@dataclass
class LoopbackLLM:
    """The server; use as a context manager or start()/stop()."""

    responder: Callable[[Seen], str] | None = None
    requests: list[Seen] = field(default_factory=list)
    script: deque = field(default_factory=deque)
    stopped: threading.Event = field(default_factory=threading.Event)

    def start(self) -> LoopbackLLM:
        """Listen on 127.0.0.1 (a free port) in a daemon thread."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                owner._handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop listening."""
        self.stopped.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> LoopbackLLM:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """http://127.0.0.1:<port>"""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def queue(self, *actions: dict | str) -> None:
        """Script the next replies: a text, or {"status": 401|429|500, "error": msg} (with
        {"headers": {...}} in place of the default `retry-after-ms: 5`), {"sleep": seconds},
        {"garbage": True}, {"incomplete": True} (OpenAI Responses), {"trickle": seconds} (the
        reply's bytes one at a time, *seconds* apart)."""
        self.script.extend(actions)

    # --- serving -------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        seen = Seen(handler.path, {k.lower(): v for k, v in handler.headers.items()}, raw, body)
        self.requests.append(seen)
        action = self.script.popleft() if self.script else None
        if action is None:
            action = self.responder(seen) if self.responder else '{"plan": ["nothing to do"], "suggestions": []}'
        if isinstance(action, str):
            action = {"text": action}
        if action.get("sleep"):
            time.sleep(action["sleep"])
        if "status" in action:
            return self._send(handler, action["status"], self._error_body(seen, action),
                              action.get("headers", {"retry-after-ms": "5"} if action["status"] in (429, 500, 503)
                                         else {}))
        if action.get("incomplete"):      # OpenAI Responses: ran out of output tokens while reasoning
            reply = self._reply(seen, "")
            reply.update(status="incomplete", incomplete_details={"reason": "max_output_tokens"},
                         output=reply["output"][:1])
            return self._send(handler, 200, json.dumps(reply).encode())
        if action.get("garbage"):
            return self._send(handler, 200, b"<html>upstream proxy error</html>")
        return self._send(handler, 200, json.dumps(self._reply(seen, action.get("text", ""))).encode(),
                          trickle=action.get("trickle", 0))

    def _send(self, handler, status: int, payload: bytes, headers: dict | None = None, trickle: float = 0) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            for key, value in (headers or {}).items():
                handler.send_header(key, value)
            handler.end_headers()
            if not trickle:
                handler.wfile.write(payload)
            for i in range(len(payload) if trickle else 0):   # a server that is alive but never done
                handler.wfile.write(payload[i:i + 1])
                handler.wfile.flush()
                if self.stopped.wait(trickle):
                    return
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def _error_body(self, seen: Seen, action: dict) -> bytes:
        message = action.get("error") or {401: "invalid api key", 404: "model not found", 429: "rate limited",
                                          500: "internal error"}.get(action["status"], "error")
        if seen.path.endswith("/messages"):
            kind = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error"}.get(
                action["status"], "api_error")
            return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
        if seen.path.endswith("/api/chat"):
            return json.dumps({"error": message}).encode()
        return json.dumps({"error": {"message": message, "type": "invalid_request_error", "code": None}}).encode()

    def _reply(self, seen: Seen, text: str) -> dict:
        tokens_in = max(1, len(seen.messages_text) // 4)
        effort = seen.effort
        reasoning = REASONING_BASE * REASONING_SCALE[effort] if effort and seen.path != "/v1/chat/completions" else 0
        if seen.path.endswith("/api/chat") and not (seen.body or {}).get("think"):
            reasoning = 0
        tokens_out = max(1, len(text) // 4) + reasoning
        body = seen.body if isinstance(seen.body, dict) else {}
        model = body.get("model", "loopback")
        if seen.path.endswith("/responses"):
            return {"id": "resp_1", "object": "response", "created_at": int(time.time()), "status": "completed",
                    "model": model, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                    "output": [{"type": "reasoning", "id": "rs_1", "summary": []},
                               {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                                "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                    "usage": {"input_tokens": tokens_in, "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens": tokens_out, "output_tokens_details": {"reasoning_tokens": reasoning},
                              "total_tokens": tokens_in + tokens_out}}
        if seen.path.endswith("/chat/completions"):
            return {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()), "model": model,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                              "total_tokens": tokens_in + tokens_out}}
        if seen.path.endswith("/messages"):
            content = [{"type": "thinking", "thinking": "…", "signature": "sig"}] if reasoning else []
            return {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
                    "content": content + [{"type": "text", "text": text}], "stop_reason": "end_turn",
                    "stop_sequence": None, "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}
        return {"model": model, "created_at": "2026-01-01T00:00:00Z", "done": True,
                "message": {"role": "assistant", "content": text, **({"thinking": "x" * reasoning * 4} if reasoning else {})},
                "prompt_eval_count": tokens_in, "eval_count": tokens_out}
