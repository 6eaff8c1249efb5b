"""Ollama: a local server (default http://localhost:11434, no key), `/api/chat` with `think`.

Plain stdlib HTTP: Ollama's own client would be one more dependency for one POST.
Effort maps to `think`: off for low, on otherwise (Ollama's boolean works for every
thinking model; the string levels only for some).
"""
from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request

from neo_git import safejson
from neo_git.ask.model import ModelReply, ModelRequest
from neo_git.ask.provider_base import ProviderError, scrub
from neo_git.ask.settings import ProviderSettings

DEFAULT_URL = "http://localhost:11434"
RETRY_STATUSES = (429, 500, 502, 503, 504)
BACKOFF_SECONDS = 0.5            # doubled per retry, at most 8 s; Retry-After wins when given


def base_url(settings: ProviderSettings) -> str:
    """The server's URL (OLLAMA_HOST may omit the scheme, as `ollama` itself accepts)."""
    url = (settings.base_url or DEFAULT_URL).rstrip("/")
    return url if "://" in url else f"http://{url}"


class OllamaProvider:
    """`ollama`: a local model server."""

    name = "ollama"
    calls_model = True

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings

    def complete(self, request: ModelRequest) -> ModelReply:
        """One non-streaming /api/chat call, retried with backoff on 429/5xx. A model that
        cannot think (Ollama answers 400 "does not support thinking") is asked again without."""
        payload = {
            "model": self.settings.model, "stream": False, "think": request.effort != "low",
            "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": request.prompt}],
            "options": {"num_predict": request.max_output_tokens},
        }
        if request.schema is not None:  # Ollama's structured outputs: `format` takes a JSON schema
            payload["format"] = request.schema
        try:
            return self._chat(payload, request.timeout)
        except ProviderError as exc:
            if exc.kind != "request" or "thinking" not in exc.message or not payload["think"]:
                raise
        del payload["think"]
        return self._chat(payload, request.timeout)

    def _chat(self, payload: dict, timeout: float) -> ModelReply:
        body = json.dumps(payload).encode("utf-8")
        url = base_url(self.settings) + "/api/chat"
        for attempt in range(self.settings.max_retries + 1):
            try:
                data = self._post(url, body, timeout)
                break
            except urllib.error.HTTPError as exc:
                if exc.code not in RETRY_STATUSES or attempt == self.settings.max_retries:
                    raise self._http_error(exc) from None
                time.sleep(_retry_delay(exc, attempt))
            except TimeoutError:
                raise ProviderError("timeout", f"ollama ({self.settings.model}) did not answer within "
                                    f"{timeout:g} s", "raise `git config neo.timeout`") from None
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                    raise ProviderError("timeout", f"ollama ({self.settings.model}) did not answer within "
                                        f"{timeout:g} s", "raise `git config neo.timeout`") from None
                raise ProviderError("connection", f"cannot reach ollama at {base_url(self.settings)}",
                                    "start it with `ollama serve`, or set `git config neo.ollamaUrl`") from None
        message = data.get("message") if isinstance(data, dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise ProviderError("bad_reply", "ollama sent a reply without a message", "is neo.ollamaUrl right?")
        thinking = message.get("thinking")
        out = int(data.get("eval_count") or 0)
        return ModelReply(text=message["content"], tokens_in=int(data.get("prompt_eval_count") or 0),
                          tokens_out=out, reasoning_tokens=(len(thinking) // 4) if isinstance(thinking, str) else None,
                          model=str(data.get("model") or self.settings.model))

    def _post(self, url: str, body: bytes, timeout: float) -> dict:
        req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=timeout) as response:  # a configured http(s) URL
            raw = response.read()
        try:
            return safejson.loads(raw)
        except ValueError:
            raise ProviderError("bad_reply", "ollama sent a reply that is not JSON", "is neo.ollamaUrl right?") from None

    def _http_error(self, exc: urllib.error.HTTPError) -> ProviderError:
        try:
            detail = safejson.loads(exc.read() or b"{}").get("error", "")
        except (ValueError, AttributeError, OSError):
            detail = ""
        detail = scrub(detail or exc.reason or "", self.settings)
        if exc.code == 404:
            return ProviderError("not_found", f"model '{self.settings.model}' not found in ollama: {detail}",
                                 f"ollama pull {self.settings.model}")
        if exc.code == 429:
            return ProviderError("rate_limit", f"ollama is rate limiting requests (429) after "
                                 f"{self.settings.max_retries} retries", "wait and ask again")
        if exc.code >= 500:
            return ProviderError("server", f"ollama failed with a server error ({exc.code}) after "
                                 f"{self.settings.max_retries} retries: {detail}", "see `ollama serve`'s log")
        return ProviderError("request", f"ollama rejected the request ({exc.code}): {detail}",
                             "check the model name")


def _retry_delay(exc: urllib.error.HTTPError, attempt: int) -> float:
    """The server's Retry-After (ms or s) when it is a number from 0 to 60 s, as the SDKs take
    it; anything else (negative, NaN, huge, a date) is our own backoff."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        header = exc.headers.get(name) if exc.headers else None
        if header is None:
            continue
        try:
            seconds = float(header) / scale
        except ValueError:
            break
        if 0 <= seconds <= 60:      # False for NaN too
            return seconds
        break
    return min(8.0, BACKOFF_SECONDS * 2 ** attempt)
