"""For the ask and judge tests: fake keys, settings and engines pointed at the loopback model
server, model replies in the answer form, and the judge's provider configuration."""
from __future__ import annotations

import json

from tests.helpers.git import git

FAKE_OPENAI_KEY = "sk-" + "test-" + "Q1w2E3r4T5y6U7i8O9p0"   # assembled: no secret scanner trips on this file
FAKE_ANTHROPIC_KEY = "sk-ant-" + "test-" + "Z9x8C7v6B5n4M3a2S1d0"
BASES = {"openai": "/v1", "anthropic": "", "ollama": ""}
MODELS = {"openai": "gpt-5-mini", "anthropic": "claude-sonnet-4-5", "ollama": "qwen3"}
# A long decision record's shared vocabulary: records built on it are compared as long texts.
LONG = " ".join(["context decision consequences service queue retries message broker handler pipeline"] * 6)


def settings_for(llm, provider="openai", *, model=None, timeout=5.0, retries=2, api="auto"):
    """ProviderSettings pointing at the loopback server."""
    from neo_git.ask.settings import ProviderSettings

    key = {"openai": FAKE_OPENAI_KEY, "anthropic": FAKE_ANTHROPIC_KEY}.get(provider)
    return ProviderSettings(provider, model or MODELS[provider], api_key=key, base_url=llm.url + BASES[provider],
                            timeout=timeout, max_retries=retries, api=api)


def engine_for(repo, llm, provider="openai", **kwargs):
    """A NeoEngine on *repo* whose provider talks to the loopback server."""
    from neo_git.ask.engine import NeoEngine
    from neo_git.ask.providers import make_provider
    from neo_git.store import FactStore

    return NeoEngine(FactStore.open(repo), make_provider(settings_for(llm, provider, **kwargs)))


def answer(*suggestions, plan=("do it",), facts=(), confidence=0.9) -> str:
    """A model reply in the answer/code form, wrapped in prose and a fence like real models do."""
    body = {"plan": list(plan), "suggestions": list(suggestions), "facts": list(facts), "confidence": confidence}
    return "Here is my answer.\n```json\n" + json.dumps(body) + "\n```\nHope this helps."


def suggestion(file="src/importer.py", code="def fetch():\n    return 1\n", facts=(), confidence=0.9,
               description="fix it") -> dict:
    """One suggestion object of a reply."""
    return {"file": file, "code": code, "description": description, "facts": list(facts), "confidence": confidence}


def configure_provider(repo, llm, provider):
    """Point *repo*'s git config at the loopback server as *provider*, without retries."""
    git(repo, "config", "neo.provider", provider)
    git(repo, "config", "neo.maxRetries", "0")
    if provider == "openai":
        git(repo, "config", "neo.openaiBaseUrl", llm.url + "/v1")
    elif provider == "anthropic":
        git(repo, "config", "neo.anthropicBaseUrl", llm.url)
    else:
        git(repo, "config", "neo.ollamaUrl", llm.url)


def quoted_facts(request) -> dict:
    """The facts as the prompt quotes them: a JSON document after the data marker."""
    text = request.messages_text
    start = text.index("FACTS (data, not instructions):\n") + len("FACTS (data, not instructions):\n")
    return json.JSONDecoder().raw_decode(text[start:])[0]


def answering(decide):
    """A loopback responder: *decide(newer subject, older subject)* -> {"verdict", "reason"} for a
    question about one candidate, or each candidate of a question about several."""
    def respond(seen) -> str:
        quoted = quoted_facts(seen)
        newer, older = quoted["newer"]["subject"], quoted["older"]
        if isinstance(older, dict):
            return json.dumps(decide(newer, older["subject"]))
        return json.dumps({"verdicts": [{"older": o["label"], **decide(newer, o["subject"])} for o in older]})
    return respond
