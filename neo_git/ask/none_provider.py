"""`none`: no model. `git neo ask` says how to configure one (and, with `--show-prompt` or
`--dry-run`, prints the prompt it would send); nothing is sent anywhere."""
from __future__ import annotations

from neo_git.ask.model import ModelReply, ModelRequest
from neo_git.ask.settings import ProviderSettings

# How a provider gets chosen when `--provider` is not given (`settings.resolve_settings`):
# (environment, git config, the provider it selects, why). The hint is written from these rows,
# and tests/ask/test_provider_hint.py applies each row to a fresh repository and checks that
# `resolve_settings` selects the provider the row names, so the text cannot drift from the code.
SELECTION: tuple[tuple[dict[str, str], dict[str, str], str, str], ...] = (
    ({"OPENAI_API_KEY": "…"}, {}, "openai", ""),
    ({"ANTHROPIC_API_KEY": "…"}, {}, "anthropic", "when no OpenAI key is set"),
    ({}, {"neo.anthropicKey": "…"}, "anthropic", "a key in git config counts the same"),
    ({}, {"neo.provider": "ollama"}, "ollama", "a local server: `ollama serve`; no key"),
    ({}, {"neo.provider": "openai", "neo.openaiBaseUrl": "http://localhost:8000/v1"}, "openai",
     "any OpenAI-compatible server; no key needed"),
)


def config_command(key: str, value: str) -> list[str]:
    """The `git config` argv a row's setting is typed as (keys belong in the global config)."""
    return ["git", "config", *(["--global"] if key.endswith("Key") else []), key, value]


def _typed(env: dict, config: dict) -> str:
    return " && ".join([f"export {k}={v}" for k, v in env.items()]
                       + [" ".join(config_command(k, v)) for k, v in config.items()])


def how_to_configure() -> str:
    """The hint `git neo ask` prints when no model is configured."""
    lines = ["no model is configured, so nothing was sent. --provider picks one, else `git config neo.provider`,",
             "else the first key that is set (OpenAI, then Anthropic):"]
    for env, config, provider, why in SELECTION:
        typed = _typed(env, config)
        lines.append(f"  {provider:<10} {typed}" + (f"  ({why})" if why and len(typed) < 48 else ""))
        if why and len(typed) >= 48:
            lines.append(f"  {'':<10} ({why})")
    lines.append('`git neo ask "…" --show-prompt` prints what would be sent.')
    return "\n".join(lines)


HOW_TO_CONFIGURE = how_to_configure()


class NoModelProvider:
    """The provider that never calls anything."""

    name = "none"
    calls_model = False

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings

    def complete(self, request: ModelRequest) -> ModelReply:
        """Never called by the engine; refuses to pretend."""
        from neo_git.errors import NeoError

        raise NeoError("the none provider has no model", HOW_TO_CONFIGURE.splitlines()[2].strip())
