"""Fixtures for ask: a loopback model server, a repository with facts, engines wired to
the server through the real SDK clients."""
from __future__ import annotations

import socket

import pytest

from tests.helpers.git import commit_files
from tests.helpers.loopback import LoopbackLLM

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
