"""Anthropic: the Messages API, effort mapped to an extended-thinking budget."""
from __future__ import annotations

from neo_git.ask.model import ModelReply, ModelRequest
from neo_git.ask.provider_base import SDKProvider, sdk_error

# Thinking budget (tokens) per effort; 0 = thinking off. The API's minimum budget is 1,024
# and max_tokens must exceed the budget, so the answer's own allowance is added on top.
THINKING_BUDGET = {"low": 0, "medium": 4096, "high": 16384, "xhigh": 32768}


class AnthropicProvider(SDKProvider):
    """`anthropic`: official SDK, imported on first call."""

    name = "anthropic"
    client_class = "Anthropic"
    label = "Anthropic"

    def complete(self, request: ModelRequest) -> ModelReply:
        """One Messages call."""
        client = self.client()
        budget = THINKING_BUDGET[request.effort]
        kwargs = {"model": self.settings.model, "system": request.system,
                  "messages": [{"role": "user", "content": request.prompt}],
                  "max_tokens": request.max_output_tokens + budget, "timeout": request.timeout}
        if budget:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if request.schema is not None:  # structured outputs: the text block is JSON of the schema
            kwargs["output_config"] = {"format": {"type": "json_schema", "schema": request.schema}}
        try:
            message = client.messages.create(**kwargs)
        except Exception as exc:  # noqa: BLE001 - translated (or re-raised when unknown)
            raise sdk_error(exc, self.settings) from None
        text = "".join(getattr(block, "text", "") for block in message.content or ()
                       if getattr(block, "type", "") == "text")
        usage = message.usage
        return ModelReply(text=text, tokens_in=getattr(usage, "input_tokens", 0) or 0,
                          tokens_out=getattr(usage, "output_tokens", 0) or 0,
                          reasoning_tokens=None, model=getattr(message, "model", "") or self.settings.model)
