"""OpenAI (and OpenAI-compatible servers): the Responses API with `reasoning.effort` for
reasoning models, Chat Completions for models without reasoning."""
from __future__ import annotations

import re

from neo_git.ask.model import ModelReply, ModelRequest
from neo_git.ask.provider_base import ProviderError, SDKProvider, sdk_error
from neo_git.ask.settings import ProviderSettings

# Models that take `reasoning.effort` (the o-series, gpt-5 family, codex models).
REASONING_MODEL = re.compile(r"^(?:o\d|gpt-5|codex)", re.IGNORECASE)
# `max_output_tokens` counts reasoning tokens too: room for them on top of the answer's own
# allowance, so a high-effort call is not cut off mid-thought (mirrors Anthropic's budgets).
REASONING_ALLOWANCE = {"low": 2048, "medium": 4096, "high": 16384, "xhigh": 32768}
# Models that accept "xhigh"; the others get "high" for xhigh.
XHIGH_MODEL = re.compile(r"^(?:gpt-5\.[2-9]|gpt-5\.1-codex-max)", re.IGNORECASE)


def uses_responses(settings: ProviderSettings) -> bool:
    """True when calls go to the Responses API (with reasoning), False for Chat Completions."""
    if settings.api in ("responses", "chat"):
        return settings.api == "responses"
    return bool(REASONING_MODEL.match(settings.model))


def reasoning_effort(effort: str, model: str) -> str:
    """The `reasoning.effort` value for our effort."""
    if effort == "xhigh" and not XHIGH_MODEL.match(model):
        return "high"
    return effort


class OpenAIProvider(SDKProvider):
    """`openai`: official SDK, imported on first call."""

    name = "openai"
    client_class = "OpenAI"
    label = "OpenAI"

    def complete(self, request: ModelRequest) -> ModelReply:
        """One Responses or Chat Completions call."""
        client = self.client()
        try:
            if uses_responses(self.settings):
                return self._responses(client, request)
            return self._chat(client, request)
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001 - translated (or re-raised when unknown)
            raise sdk_error(exc, self.settings) from None

    def _responses(self, client, request: ModelRequest) -> ModelReply:
        extra = {}
        if request.schema is not None:
            extra["text"] = {"format": {"type": "json_schema", "name": request.schema_name,
                                        "schema": request.schema, "strict": True}}
        response = client.responses.create(
            model=self.settings.model, instructions=request.system, input=request.prompt,
            reasoning={"effort": reasoning_effort(request.effort, self.settings.model)},
            max_output_tokens=request.max_output_tokens + REASONING_ALLOWANCE[request.effort],
            timeout=request.timeout, **extra)
        if getattr(response, "status", None) == "incomplete" and not response.output_text:
            reason = getattr(getattr(response, "incomplete_details", None), "reason", None) or "incomplete"
            raise ProviderError("incomplete", f"openai ({self.settings.model}) stopped before answering ({reason})",
                                "ask with a lower --effort, or include less")
        usage = response.usage
        details = getattr(usage, "output_tokens_details", None) if usage else None
        return ModelReply(text=response.output_text or "", tokens_in=getattr(usage, "input_tokens", 0) or 0,
                          tokens_out=getattr(usage, "output_tokens", 0) or 0,
                          reasoning_tokens=getattr(details, "reasoning_tokens", None),
                          model=getattr(response, "model", "") or self.settings.model)

    def _chat(self, client, request: ModelRequest) -> ModelReply:
        extra = {}
        if request.schema is not None:
            extra["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.schema_name, "schema": request.schema, "strict": True}}
        completion = client.chat.completions.create(
            model=self.settings.model,
            messages=[{"role": "system", "content": request.system}, {"role": "user", "content": request.prompt}],
            max_tokens=request.max_output_tokens, timeout=request.timeout, **extra)
        if not completion.choices:
            raise ProviderError("bad_reply", f"openai ({self.settings.model}) returned no choices",
                                "is the base URL an OpenAI-compatible API?")
        usage = completion.usage
        return ModelReply(text=completion.choices[0].message.content or "",
                          tokens_in=getattr(usage, "prompt_tokens", 0) or 0,
                          tokens_out=getattr(usage, "completion_tokens", 0) or 0,
                          reasoning_tokens=None, model=getattr(completion, "model", "") or self.settings.model)
