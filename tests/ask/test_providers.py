"""The real SDK clients against the loopback server: what a request carries, what a reply
becomes, and how each failure is reported or retried."""
from __future__ import annotations

import pytest

from neo_git.ask.model import ModelRequest
from neo_git.ask.providers import ProviderError, make_provider
from tests.helpers.ask import (
    FAKE_ANTHROPIC_KEY,
    FAKE_OPENAI_KEY,
    answer,
    engine_for,
    settings_for,
    suggestion,
)

PROVIDERS = ("openai", "anthropic", "ollama")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_request_carries_constraints_facts_and_effort_and_reply_becomes_pending_suggestions(
        repo, llm, importer_facts, provider):
    facts, constraint = importer_facts
    from neo_git.outcomes.suggestions import load_suggestions
    from neo_git.store import FactStore

    cited = [facts[0].id, facts[2].id]
    llm.queue(answer(suggestion(code="def fetch():\n    return retry(httpx.get, attempts=5)\n", facts=cited),
                     facts=cited, plan=(f"keep the 5-attempt limit [fact:{facts[0].id}]",)))
    result = engine_for(repo, llm, provider).ask("why does the importer retry forever on 429?")

    assert result.effort == "low" and result.decision.familiar   # 3 relevant facts, mean confidence ≥ 0.8
    [request] = llm.requests
    assert request.effort == "low"
    text = request.messages_text
    assert f"[fact:{constraint.id}]" in text and "Never import requests" in text
    for fact in facts:
        assert f"[fact:{fact.id}]" in text
    assert "cite" in text.lower()
    assert result.cited_facts == tuple(cited)
    [change] = result.suggestions
    assert change.file == "src/importer.py" and change.problems == () and result.verified
    store = FactStore.open(repo)
    [pending] = load_suggestions(store.paths, status="pending")
    assert pending.origin == "ask" and pending.fact_ids == tuple(cited) and "attempts=5" in pending.code
    assert result.recorded == (pending.id,)
    assert result.tokens_in > 0 and result.tokens_out > 0


def test_effort_reaches_each_wire_format(repo, llm):
    for provider, effort, expect in (("openai", "xhigh", ("reasoning", {"effort": "high"})),
                                     ("anthropic", "high", ("thinking", {"type": "enabled", "budget_tokens": 16384})),
                                     ("anthropic", "low", ("thinking", None)),
                                     ("ollama", "medium", ("think", True)),
                                     ("ollama", "low", ("think", False))):
        make_provider(settings_for(llm, provider)).complete(ModelRequest("s", "u", effort))
        key, value = expect
        assert llm.requests[-1].body.get(key) == value, (provider, effort)
    reply = make_provider(settings_for(llm, "openai", model="gpt-5.2")).complete(ModelRequest("s", "u", "xhigh"))
    assert llm.requests[-1].body["reasoning"] == {"effort": "xhigh"} and reply.reasoning_tokens == 8000


def test_models_without_reasoning_use_chat_completions(repo, llm):
    reply = make_provider(settings_for(llm, "openai", model="gpt-4.1")).complete(ModelRequest("sys", "user", "high"))
    request = llm.requests[-1]
    assert request.path == "/v1/chat/completions" and "reasoning" not in request.body
    assert [m["role"] for m in request.body["messages"]] == ["system", "user"]
    assert reply.tokens_in > 0 and reply.reasoning_tokens is None


def test_keys_go_in_headers_only(repo, llm):
    make_provider(settings_for(llm, "openai")).complete(ModelRequest("s", "u", "low"))
    make_provider(settings_for(llm, "anthropic")).complete(ModelRequest("s", "u", "low"))
    assert llm.requests[0].headers["authorization"] == f"Bearer {FAKE_OPENAI_KEY}"
    # older SDKs send x-api-key, newer ones a bearer token
    assert FAKE_ANTHROPIC_KEY in (llm.requests[1].headers.get("x-api-key"),
                                  llm.requests[1].headers.get("authorization", "").removeprefix("Bearer "))
    for request in llm.requests:
        assert FAKE_OPENAI_KEY not in request.text and FAKE_ANTHROPIC_KEY not in request.text


@pytest.mark.parametrize("provider", ("openai", "anthropic"))
def test_bad_key_is_one_line_with_a_hint_and_never_shows_the_key(repo, llm, provider):
    key = FAKE_OPENAI_KEY if provider == "openai" else FAKE_ANTHROPIC_KEY
    llm.queue({"status": 401, "error": f"Incorrect API key provided: {key}"})
    with pytest.raises(ProviderError) as err:
        make_provider(settings_for(llm, provider)).complete(ModelRequest("s", "u", "low"))
    assert err.value.kind == "auth" and "refused the API key (401)" in err.value.message
    assert key not in err.value.message and "\n" not in err.value.message
    assert "API_KEY" in err.value.hint
    assert len(llm.requests) == 1   # a bad key is not retried


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rate_limit_is_retried_with_backoff_then_succeeds(repo, llm, provider):
    llm.queue({"status": 429}, '{"plan": ["ok"], "suggestions": []}')
    reply = make_provider(settings_for(llm, provider)).complete(ModelRequest("s", "u", "low"))
    assert reply.text == '{"plan": ["ok"], "suggestions": []}'
    assert len(llm.requests) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
def test_server_error_is_retried_then_reported(repo, llm, provider):
    llm.queue({"status": 500}, {"status": 500}, {"status": 500})
    with pytest.raises(ProviderError) as err:
        make_provider(settings_for(llm, provider, retries=2)).complete(ModelRequest("s", "u", "low"))
    assert err.value.kind == "server" and "server error (500) after 2 retries" in err.value.message
    assert len(llm.requests) == 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout_is_reported(repo, llm, provider):
    llm.queue({"sleep": 1.0}, {"sleep": 1.0})
    with pytest.raises(ProviderError) as err:
        make_provider(settings_for(llm, provider, timeout=0.3, retries=0)).complete(
            ModelRequest("s", "u", "low", timeout=0.3))
    assert err.value.kind == "timeout" and "did not answer within" in err.value.message


@pytest.mark.parametrize("provider", PROVIDERS)
def test_garbage_body_is_reported(repo, llm, provider):
    llm.queue({"garbage": True})
    with pytest.raises(ProviderError) as err:
        make_provider(settings_for(llm, provider)).complete(ModelRequest("s", "u", "low"))
    assert err.value.kind == "bad_reply" and "not JSON" in err.value.message


@pytest.mark.parametrize("provider", ("openai", "anthropic", "ollama"))
def test_unknown_model_says_so(repo, llm, provider):
    llm.queue({"status": 404})
    with pytest.raises(ProviderError) as err:
        make_provider(settings_for(llm, provider, model="no-such-model")).complete(ModelRequest("s", "u", "low"))
    assert err.value.kind == "not_found" and "no-such-model" in err.value.message


def test_a_closed_port_is_a_connection_error(repo, llm):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = settings_for(llm, "openai", retries=0).with_changes(base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ProviderError) as err:
        make_provider(settings).complete(ModelRequest("s", "u", "low"))
    assert err.value.kind == "connection" and f"127.0.0.1:{port}" in err.value.message


def test_missing_key_for_the_default_endpoint(repo, monkeypatch):
    from neo_git.ask.settings import ProviderSettings

    monkeypatch.setattr("socket.socket.connect", lambda *a: pytest.fail("connected"))
    with pytest.raises(ProviderError) as err:
        make_provider(ProviderSettings("anthropic", "claude-sonnet-4-5")).complete(ModelRequest("s", "u", "low"))
    assert err.value.kind == "auth" and "ANTHROPIC_API_KEY" in err.value.hint


def test_ollama_model_without_thinking_is_asked_again_without_think(repo, llm):
    llm.queue({"status": 400, "error": '"llama3" does not support thinking'}, '{"plan": ["ok"]}')
    reply = make_provider(settings_for(llm, "ollama", model="llama3")).complete(ModelRequest("s", "u", "high"))
    assert reply.text == '{"plan": ["ok"]}'
    assert llm.requests[0].body["think"] is True and "think" not in llm.requests[1].body


def test_openai_reasoning_gets_room_and_an_incomplete_reply_is_explained(repo, llm):
    provider = make_provider(settings_for(llm, "openai"))
    provider.complete(ModelRequest("s", "u", "high", max_output_tokens=1000))
    assert llm.requests[-1].body["max_output_tokens"] == 1000 + 16384
    llm.responder = None
    llm.queue({"incomplete": True})
    with pytest.raises(ProviderError) as err:
        provider.complete(ModelRequest("s", "u", "xhigh"))
    assert err.value.kind == "incomplete" and "max_output_tokens" in err.value.message
