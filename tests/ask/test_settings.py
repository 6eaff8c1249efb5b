"""Provider, model and key lookup: environment, git config, ~/.neo/config.json; never shown."""
from __future__ import annotations

import json
import os

import pytest

from neo_git.ask.settings import resolve_settings
from neo_git.errors import NeoError
from tests.helpers.git import git

KEY = "sk-" + "cfg-" + "A1s2D3f4G5h6J7k8L9"


def test_default_provider_follows_the_keys_that_are_set(repo, monkeypatch):
    assert resolve_settings().name == "none"
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert (resolve_settings().name, resolve_settings().model) == ("anthropic", "claude-sonnet-4-5")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert resolve_settings().name == "openai"
    git(repo, "config", "neo.provider", "ollama")
    settings = resolve_settings()
    assert (settings.name, settings.api_key, settings.model) == ("ollama", None, "qwen3")


def test_key_and_settings_from_the_personal_config_file(repo, monkeypatch):
    home = os.environ["NEO_HOME"]
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "config.json"), "w") as handle:
        json.dump({"anthropicKey": KEY, "timeout": "12.5", "maxRetries": 0, "anthropicModel": "claude-x"}, handle)
    settings = resolve_settings()
    assert (settings.name, settings.api_key, settings.timeout, settings.max_retries, settings.model) == \
        ("anthropic", KEY, 12.5, 0, "claude-x")
    assert KEY not in repr(settings) and "key=set" in repr(settings)
    # the command line wins over settings
    assert resolve_settings("openai", "gpt-4.1").model == "gpt-4.1"


def test_bad_settings_fall_back_or_are_refused(repo):
    git(repo, "config", "neo.timeout", "soon")
    git(repo, "config", "neo.maxRetries", "-1")
    settings = resolve_settings("openai")
    assert (settings.timeout, settings.max_retries) == (60.0, 2)
    git(repo, "config", "neo.provider", "gpt")
    with pytest.raises(NeoError, match="unknown provider 'gpt'") as err:
        resolve_settings()
    assert "openai, anthropic, ollama, none" in err.value.hint


def test_base_urls_from_environment_and_config(repo, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9999")
    from neo_git.ask.ollama_api import base_url

    assert base_url(resolve_settings("ollama")) == "http://127.0.0.1:9999"
    git(repo, "config", "neo.openaiBaseUrl", "http://127.0.0.1:8000/v1")
    assert resolve_settings("openai").base_url == "http://127.0.0.1:8000/v1"
