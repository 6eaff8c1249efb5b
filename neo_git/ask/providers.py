"""The provider registry: `make_provider(settings)` picks the class by `settings.name`.

    provider = make_provider(settings)          # settings.name picks the class
    reply = provider.complete(ModelRequest(system, prompt, effort="low"))

The protocol every provider implements, `ProviderError` and the SDK providers' base are in
`provider_base.py` (re-exported here); the valid names in `settings.py`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from neo_git.ask.provider_base import (  # noqa: F401 - re-exported
    KEY_HINT,
    Provider,
    ProviderError,
    SDKProvider,
    missing_sdk,
    scrub,
    sdk_error,
)
from neo_git.ask.settings import PROVIDER_NAMES, check_provider  # noqa: F401 - re-exported

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.ask.settings import ProviderSettings


def _registry() -> dict[str, type]:
    # The provider modules are small and import their SDKs inside functions.
    from neo_git.ask.anthropic_api import AnthropicProvider
    from neo_git.ask.none_provider import NoModelProvider
    from neo_git.ask.ollama_api import OllamaProvider
    from neo_git.ask.openai_api import OpenAIProvider

    return {"openai": OpenAIProvider, "anthropic": AnthropicProvider, "ollama": OllamaProvider,
            "none": NoModelProvider}


def make_provider(settings: ProviderSettings) -> Provider:
    """The provider object for *settings*."""
    return _registry()[check_provider(settings.name)](settings)
