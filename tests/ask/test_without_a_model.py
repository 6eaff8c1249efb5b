"""`git neo ask` without a model: the hint comes first and the prompt only when asked for
(`--show-prompt`, `--dry-run`); every way of choosing a provider the hint describes selects
exactly the provider it names."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from neo_git.ask.none_provider import SELECTION, config_command, how_to_configure
from neo_git.cli import main
from tests.helpers.git import git

QUESTION = "can I use eval here?"


@pytest.fixture
def with_facts(repo):
    from neo_git.store import FactStore

    FactStore.open(repo).add("Never call eval", "no calls to eval()", kind="constraint")
    return repo


def test_the_hint_comes_first_and_the_prompt_only_when_asked_for(with_facts, capsys, no_connections):
    assert main(["ask", QUESTION]) == 0
    out = capsys.readouterr().out
    header, reason, blank, first = out.splitlines()[:4]
    assert header.startswith("effort ") and header.endswith("· none") and reason.startswith("  (") and blank == ""
    assert first.startswith("no model is configured, so nothing was sent.")
    assert out.rstrip().endswith('`git neo ask "…" --show-prompt` prints what would be sent.')
    assert "--- system" not in out and "no calls to eval()" not in out and len(out) < 1500
    assert main(["ask", QUESTION, "--show-prompt"]) == 0
    shown = capsys.readouterr().out
    assert shown.index("no model is configured") < shown.index("--- system (") < shown.index("no calls to eval()")
    assert "--show-prompt` prints" not in shown                     # already shown
    assert main(["ask", QUESTION, "--dry-run"]) == 0
    dry = capsys.readouterr().out
    assert "no calls to eval()" in dry and dry.rstrip().endswith("dry run: nothing was sent")
    assert "no model is configured" not in dry and no_connections == []


def test_show_prompt_with_a_model_prints_what_is_sent_then_the_answer(repo, llm, importer_facts, monkeypatch,
                                                                      capsys):
    from tests.helpers.ask import answer, suggestion

    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "x" * 24)
    git(repo, "config", "neo.openaiBaseUrl", llm.url + "/v1")
    llm.queue(answer(suggestion()))
    assert main(["ask", "why does the importer retry forever on 429?", "--effort", "low", "--show-prompt"]) == 0
    out = capsys.readouterr().out
    [request] = llm.requests
    assert out.index("--- user ---") < out.index("effort low · ")
    assert "Importer retries" in out.split("--- user ---")[1] and "Importer retries" in request.messages_text


@pytest.mark.parametrize("row", SELECTION, ids=[f"{r[2]}-{i}" for i, r in enumerate(SELECTION)])
def test_each_way_the_hint_gives_selects_the_provider_it_names(row, repo):
    """Applied as a user would (environment, `git config` as the hint types it), read by a fresh
    `git neo ask --dry-run --json` (libgit2 finds the global config from HOME at start-up)."""
    from neo_git.ask.settings import KEY_ENV

    env, config, provider, _ = row
    clean = {k: v for k, v in os.environ.items()
             if k not in (*KEY_ENV.values(), "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST")}
    assert _provider(repo, clean) == "none"
    for key, value in config.items():
        git(repo, *config_command(key, value)[1:])                  # exactly as the hint types it
    assert _provider(repo, {**clean, **env}) == provider
    typed = " && ".join([f"export {k}={v}" for k, v in env.items()] + [" ".join(config_command(k, v))
                                                                       for k, v in config.items()])
    assert f"  {provider:<10} {typed}" in how_to_configure()


def _provider(repo, env: dict) -> str:
    proc = subprocess.run([sys.executable, "-m", "neo_git", "ask", "which provider?", "--dry-run", "--json"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["provider"]


def test_an_openai_key_wins_over_an_anthropic_key_as_the_hint_says(repo, monkeypatch):
    from neo_git.ask.settings import resolve_settings
    from neo_git.identity import open_repository

    monkeypatch.setenv("OPENAI_API_KEY", "…")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "…")
    assert resolve_settings(repo=open_repository(repo)).name == "openai"
    assert "else the first key that is set (OpenAI, then Anthropic)" in how_to_configure()
    git(repo, "config", "neo.provider", "anthropic")                # neo.provider comes before the keys
    assert resolve_settings(repo=open_repository(repo)).name == "anthropic"
    assert resolve_settings("ollama", repo=open_repository(repo)).name == "ollama"   # --provider before all
