"""What every provider shares: the `Provider` protocol, `ProviderError`, the SDK providers' base
and the translation of SDK failures (`providers.py` holds the registry of the providers built
on these; each provider module imports this one, never the registry).

SDK and HTTP failures become a `ProviderError` (a NeoError: one line plus a hint);
the key never appears in one. The official SDKs retry 429, 5xx and connection errors
with exponential backoff themselves (`max_retries`, honouring Retry-After); the
ollama provider does the same by hand.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from neo_git.errors import NeoError

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.ask.model import ModelReply, ModelRequest
    from neo_git.ask.settings import ProviderSettings


class Provider(Protocol):
    """A model behind an API."""

    name: str
    settings: ProviderSettings
    calls_model: bool                # False for `none`: the engine stops before any call

    def complete(self, request: ModelRequest) -> ModelReply:
        """Send one request; return the reply text and the usage the API reported."""
        ...


class ProviderError(NeoError):
    """A call failed; `kind` is auth | rate_limit | not_found | timeout | connection | server | bad_reply."""

    def __init__(self, kind: str, message: str, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.kind = kind


KEY_HINT = {
    "openai": "export OPENAI_API_KEY=… (or `git config --global neo.openaiKey …`)",
    "anthropic": "export ANTHROPIC_API_KEY=… (or `git config --global neo.anthropicKey …`)",
}


def scrub(text: str, settings: ProviderSettings) -> str:
    """A server's message made safe to show: one line, the key and other secrets removed."""
    from neo_git.redact import redact

    line = " ".join(str(text).split())
    if settings.api_key:
        line = line.replace(settings.api_key, "[REDACTED:key]")
    return redact(line)[:200]


def sdk_error(exc: Exception, settings: ProviderSettings) -> ProviderError:
    """Translate an openai/anthropic SDK exception (same class names in both) into a ProviderError."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    who = f"{settings.name} ({settings.model})"
    where = settings.base_url or "the default endpoint"
    retries = f"{settings.max_retries} retr{'y' if settings.max_retries == 1 else 'ies'}"
    if "APITimeoutError" in names:
        return ProviderError("timeout", f"{who} did not answer within {settings.timeout:g} s "
                             f"(after {retries})", "raise `git config neo.timeout`, or ask with a lower --effort")
    if "APIConnectionError" in names:
        return ProviderError("connection", f"cannot reach {who} at {where}",
                             "check the network and the base URL (git config neo."
                             f"{settings.name}BaseUrl)")
    if "APIResponseValidationError" in names:
        return ProviderError("bad_reply", f"{who} sent a reply that is not the expected JSON",
                             "is the base URL an OpenAI/Anthropic-compatible API?")
    status = getattr(exc, "status_code", None)
    message = scrub(_server_message(exc), settings)
    if status == 401 or "AuthenticationError" in names or status == 403:
        return ProviderError("auth", f"{who} refused the API key ({status}): {message}",
                             KEY_HINT.get(settings.name, "check the key"))
    if status == 429 or "RateLimitError" in names:
        return ProviderError("rate_limit", f"{who} is rate limiting requests (429) after {retries} "
                             f"with backoff: {message}", "wait a minute and ask again, or raise neo.maxRetries")
    if status == 404 or "NotFoundError" in names:
        return ProviderError("not_found", f"model '{settings.model}' not found at {where}: {message}",
                             f"pass --model, or `git config neo.{settings.name}Model NAME`")
    if status is not None and status >= 500:
        return ProviderError("server", f"{who} failed with a server error ({status}) after {retries}: "
                             f"{message}", "the provider is having trouble; try again later")
    if status is not None:
        return ProviderError("request", f"{who} rejected the request ({status}): {message}",
                             "check the model name and its supported options")
    if isinstance(exc, ValueError):  # a body that is not JSON at all
        return ProviderError("bad_reply", f"{who} sent a reply that is not JSON", "is the base URL right?")
    raise exc


class SDKProvider:
    """Base of the providers built on an official SDK (openai, anthropic): the lazily made client."""

    name = ""
    client_class = ""          # the SDK module's client class, e.g. "OpenAI"
    label = ""                 # for messages: "OpenAI"
    calls_model = True

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self._client = None

    def client(self):
        """The SDK client (made once; the SDK is imported here, not at start-up)."""
        if self._client is None:
            import importlib

            try:
                module = importlib.import_module(self.name)
            except ImportError:
                raise missing_sdk(self.name) from None
            key = self.settings.api_key
            if not key:
                if not self.settings.base_url:
                    raise ProviderError("auth", f"no {self.label} API key is configured", KEY_HINT[self.name])
                key = "unused"  # local OpenAI/Anthropic-compatible servers often need none
            self._client = getattr(module, self.client_class)(
                api_key=key, base_url=self.settings.base_url, timeout=self.settings.timeout,
                max_retries=self.settings.max_retries)
        return self._client


def _server_message(exc: Exception) -> str:
    """The API's own error message (both SDKs keep the decoded error body on the exception)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        inner = error if isinstance(error, dict) else body
        if isinstance(inner.get("message"), str):
            return inner["message"]
    return getattr(exc, "message", "") or str(exc)


def missing_sdk(package: str) -> NeoError:
    """The error for a provider whose optional SDK is not installed."""
    from neo_git.extras import install_hint

    return NeoError(f"the {package} provider needs the '{package}' package", install_hint(package))
