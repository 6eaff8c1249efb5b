"""Fixtures for ask: a loopback model server, a repository with facts, engines wired to
the server through the real SDK clients."""
from __future__ import annotations

import json
import socket

import pytest

from tests.ask.loopback import LoopbackLLM
from tests.conftest import commit_files

FAKE_OPENAI_KEY = "sk-" + "test-" + "Q1w2E3r4T5y6U7i8O9p0"   # assembled: no secret scanner trips on this file
FAKE_ANTHROPIC_KEY = "sk-ant-" + "test-" + "Z9x8C7v6B5n4M3a2S1d0"
BASES = {"openai": "/v1", "anthropic": "", "ollama": ""}
MODELS = {"openai": "gpt-5-mini", "anthropic": "claude-sonnet-4-5", "ollama": "qwen3"}


@pytest.fixture
def llm():
    """The loopback model server (OpenAI, Anthropic and Ollama wire formats)."""
    with LoopbackLLM() as server:
        yield server


@pytest.fixture
def repo(repo_with_commit, monkeypatch):
    """A repository with one commit, git-neo initialised, as the current directory."""
    from neo_git.store import FactStore

    monkeypatch.chdir(repo_with_commit)
    FactStore.open(repo_with_commit).init()
    return repo_with_commit


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


@pytest.fixture
def importer_facts(repo):
    """Three high-confidence facts about the importer and a checkable constraint."""
    from neo_git.store import FactStore

    store = FactStore.open(repo)
    facts = [
        store.add("Importer retries", "The importer retries HTTP 429 responses with exponential backoff, "
                  "at most 5 attempts.", kind="decision", confidence=0.9),
        store.add("Importer rate limits", "The upstream API allows 100 requests per minute; the importer "
                  "honours Retry-After on 429.", kind="architecture", confidence=0.85),
        store.add("Importer backoff", "Importer backoff starts at 1 s and doubles per retry on 429.",
                  kind="pattern", confidence=0.9),
    ]
    constraint = store.add("HTTP library", "Never import requests; all HTTP goes through httpx.",
                           kind="constraint", confidence=0.9)
    commit_files(repo, {"src/importer.py": "import httpx\n\ndef fetch():\n    return httpx.get('x')\n"}, "importer")
    return facts, constraint


@pytest.fixture
def no_connections(monkeypatch):
    """Any attempt to open a socket connection fails the test."""
    attempts = []

    def refuse(self, address):
        attempts.append(address)
        raise AssertionError(f"a connection was opened to {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts
