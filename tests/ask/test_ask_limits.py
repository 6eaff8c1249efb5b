"""Issue 37: `git neo ask` against a server that misbehaves (the loopback server, real SDK
clients): a negative Retry-After is not a crash, and a model that sends one byte every few
seconds cannot keep `ask` running past its time limit (the limit is for the whole call)."""
from __future__ import annotations

import time

import pytest

from neo_git.cli import main
from tests.helpers.ask import BASES, FAKE_ANTHROPIC_KEY, FAKE_OPENAI_KEY, answer, suggestion
from tests.helpers.git import git

PROVIDERS = ("openai", "anthropic", "ollama")


def configure_provider(repo, llm, monkeypatch, provider: str, **settings) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY)
    git(repo, "config", "neo.provider", provider)
    git(repo, "config", {"openai": "neo.openaiBaseUrl", "anthropic": "neo.anthropicBaseUrl",
                         "ollama": "neo.ollamaUrl"}[provider], llm.url + BASES[provider])
    for key, value in settings.items():
        git(repo, "config", f"neo.{key}", str(value))


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("header", [{"retry-after": "-1"}, {"retry-after-ms": "-5"}, {"retry-after": "nan"}],
                         ids=["after-1", "after-ms-5", "nan"])
def test_a_negative_or_odd_retry_after_is_backoff_not_a_crash(repo, llm, importer_facts, monkeypatch, capsys,
                                                               provider, header):
    configure_provider(repo, llm, monkeypatch, provider, maxRetries=1)
    llm.queue({"status": 429, "headers": header}, answer(suggestion()))
    started = time.monotonic()
    assert main(["ask", "why does the importer retry forever on 429?", "--effort", "low"]) == 0, \
        capsys.readouterr().err
    assert time.monotonic() - started < 30          # a backoff, not 60 s (nor 1e400)
    assert len(llm.requests) == 2
    llm.queue({"status": 429, "headers": header}, {"status": 429, "headers": header})
    assert main(["ask", "and again?", "--effort", "low"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fatal: ") and "429" in err and "hint: " in err


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_huge_retry_after_ends_within_the_time_limit(repo, llm, importer_facts, monkeypatch, capsys, provider):
    """The SDKs differ (openai refuses to wait that long, anthropic waits): either way `ask`
    answers or says why within neo.timeout, never a traceback."""
    configure_provider(repo, llm, monkeypatch, provider, maxRetries=1, timeout=4)
    llm.queue({"status": 429, "headers": {"retry-after-ms": "1e400"}}, answer(suggestion()))
    started = time.monotonic()
    code = main(["ask", "why does the importer retry forever on 429?", "--effort", "low"])
    err = capsys.readouterr().err
    assert code == 0 or (code == 1 and err.startswith("fatal: ") and "hint: " in err), err
    assert time.monotonic() - started < 20


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_model_that_trickles_its_reply_is_cut_off_at_the_time_limit(repo, llm, importer_facts, monkeypatch,
                                                                     capsys, provider):
    configure_provider(repo, llm, monkeypatch, provider, timeout=3, maxRetries=0)
    llm.queue({"text": answer(suggestion()), "trickle": 1.0})   # ~1 KB at one byte a second: 20 minutes
    started = time.monotonic()
    code = main(["ask", "why does the importer retry forever on 429?", "--effort", "low"])
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1, err
    assert "did not answer within 3 s" in err and "hint: " in err
    assert took < 15, f"ask ran {took:.1f} s with neo.timeout=3"
