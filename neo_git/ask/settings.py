"""Which provider and model to use, and where its key comes from.

Like simonw/llm's key lookup: a key comes from the provider's environment variable,
else from `git config neo.<provider>Key` (set it with `--global`), else from
`~/.neo/config.json` ({"openaiKey": "…"}). Never from a file of the repository's
work tree, and a key is never printed, logged or put into an error message.

Settings (git config `neo.*` or the same key in `~/.neo/config.json`):
    provider            openai | anthropic | ollama | none (default: openai when
                        OPENAI_API_KEY is set, else anthropic when ANTHROPIC_API_KEY
                        is set, else none)
    <provider>Model     the model for one provider (openaiModel, anthropicModel, ollamaModel)
    model               the model for any provider (default per provider, below)
    openaiBaseUrl       an OpenAI-compatible server (env OPENAI_BASE_URL also works)
    openaiApi           responses | chat | auto (auto: Responses for reasoning models)
    anthropicBaseUrl    (env ANTHROPIC_BASE_URL also works)
    ollamaUrl           default http://localhost:11434 (env OLLAMA_HOST also works)
    timeout             seconds per call (default 60; the time budget can shorten it)
    maxRetries          retries of 429/5xx/connection errors with backoff (default 2)
    maxEffort           low | medium | high | xhigh: the highest effort ask may use
    relevanceFloor      a fixed cosine replacing recall's relevance decision (default: unset)
    askMaxFileChars     characters sent per --include file (default 16000)
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from neo_git.config import neo_config
from neo_git.errors import NeoError

DEFAULT_MODELS = {"openai": "gpt-5-mini", "anthropic": "claude-sonnet-4-5", "ollama": "qwen3", "none": "none"}
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL", "ollama": "OLLAMA_HOST"}
BASE_URL_SETTING = {"openai": "openaiBaseUrl", "anthropic": "anthropicBaseUrl", "ollama": "ollamaUrl"}
PROVIDER_NAMES = ("openai", "anthropic", "ollama", "none")
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2


@dataclass(frozen=True)
class ProviderSettings:
    """Everything a provider needs to make calls. `repr` never shows the key."""

    name: str
    model: str
    api_key: str | None = None
    base_url: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_RETRIES
    api: str = "auto"                       # openai only: responses | chat | auto

    def __repr__(self) -> str:
        key = "set" if self.api_key else "none"
        return (f"ProviderSettings(name={self.name!r}, model={self.model!r}, key={key}, "
                f"base_url={self.base_url!r}, timeout={self.timeout}, max_retries={self.max_retries})")

    def with_changes(self, **changes: Any) -> ProviderSettings:
        """A copy with *changes*."""
        return replace(self, **changes)


def _non_negative_int(value: Any) -> int:
    number = int(str(value).strip())
    if number < 0:
        raise ValueError("negative")
    return number


def _positive_float(value: Any) -> float:
    number = float(str(value).strip())
    if not number > 0:
        raise ValueError("not positive")
    return number


def find_key(provider: str, repo=None) -> str | None:
    """The API key for *provider* from the environment, git config or ~/.neo/config.json."""
    env = KEY_ENV.get(provider)
    if env and os.environ.get(env, "").strip():
        return os.environ[env].strip()
    if env is None:
        return None
    value = neo_config(f"{provider}Key", None, repo=repo)
    return value.strip() if isinstance(value, str) and value.strip() else None


def check_provider(name: str) -> str:
    """*name* if it is a provider; NeoError listing the valid ones otherwise."""
    text = str(name).strip().lower()
    if text not in PROVIDER_NAMES:
        raise NeoError(f"unknown provider '{name}'", "use one of: " + ", ".join(PROVIDER_NAMES))
    return text


def default_provider(repo=None) -> str:
    """openai if an OpenAI key is configured, else anthropic if an Anthropic key is, else none."""
    for name in ("openai", "anthropic"):
        if find_key(name, repo):
            return name
    return "none"


def resolve_settings(provider: str | None = None, model: str | None = None, repo=None) -> ProviderSettings:
    """Settings for *provider* (or the configured/default one) and *model*."""
    name = check_provider(provider or neo_config("provider", None, repo=repo) or default_provider(repo))
    base_url = None
    if name in BASE_URL_SETTING:
        base_url = neo_config(BASE_URL_SETTING[name], None, repo=repo) or os.environ.get(BASE_URL_ENV[name]) or None
    return ProviderSettings(
        name=name,
        model=(model or neo_config(f"{name}Model", None, repo=repo) or neo_config("model", None, repo=repo)
               or DEFAULT_MODELS[name]),
        api_key=find_key(name, repo),
        base_url=base_url,
        timeout=neo_config("timeout", DEFAULT_TIMEOUT, repo=repo, cast=_positive_float),
        max_retries=neo_config("maxRetries", DEFAULT_RETRIES, repo=repo, cast=_non_negative_int),
        api=str(neo_config("openaiApi", "auto", repo=repo)).lower(),
    )
