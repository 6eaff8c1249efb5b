"""`none`: no model. `git neo ask` prints the assembled context and prompt instead, and
says how to configure a model; nothing is sent anywhere."""
from __future__ import annotations

from neo_git.ask.model import ModelReply, ModelRequest
from neo_git.ask.settings import ProviderSettings

HOW_TO_CONFIGURE = (
    "no model is configured, so nothing was sent. To ask a model:\n"
    "  export OPENAI_API_KEY=…        (or `git config --global neo.openaiKey …`)\n"
    "  export ANTHROPIC_API_KEY=…     (then --provider anthropic, or `git config neo.provider anthropic`)\n"
    "  ollama serve                   (then --provider ollama --model qwen3; no key)\n"
    "  git config neo.openaiBaseUrl http://localhost:8000/v1   (any OpenAI-compatible server)"
)


class NoModelProvider:
    """The provider that never calls anything."""

    name = "none"
    calls_model = False

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings

    def complete(self, request: ModelRequest) -> ModelReply:
        """Never called by the engine; refuses to pretend."""
        from neo_git.errors import NeoError

        raise NeoError("the none provider has no model", HOW_TO_CONFIGURE.splitlines()[1].strip())
