"""`git neo ask` end to end: settings from git config and the environment, the real SDK,
the JSON result; help stays free of SDK imports."""
from __future__ import annotations

import json
import subprocess
import sys

from neo_git.cli import main
from tests.helpers.ask import FAKE_ANTHROPIC_KEY, answer, suggestion
from tests.helpers.git import git


def test_ask_json_with_settings_from_git_config_and_environment(repo, llm, importer_facts, monkeypatch, capsys):
    facts, _ = importer_facts
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY)
    git(repo, "config", "neo.provider", "anthropic")
    git(repo, "config", "neo.anthropicBaseUrl", llm.url)
    git(repo, "config", "neo.anthropicModel", "claude-test-1")
    git(repo, "config", "neo.maxRetries", "0")
    (repo / "src").mkdir(exist_ok=True)
    llm.queue(answer(suggestion(facts=[facts[0].id]), facts=[facts[0].id]))
    assert main(["ask", "why does the importer retry forever on 429?", "--include", "src/importer.py",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["provider"], data["model"], data["effort"]) == ("anthropic", "claude-test-1", "low")
    assert data["suggestions"][0]["file"] == "src/importer.py" and data["cited_facts"] == [facts[0].id]
    assert data["tokens"]["in"] > 0 and len(data["recorded"]) == 1 and data["messages"] is None
    [request] = llm.requests
    assert request.body["model"] == "claude-test-1" and "# File src/importer.py" in request.messages_text
    assert FAKE_ANTHROPIC_KEY not in json.dumps(data)


def test_ask_text_output_and_provider_errors(repo, llm, importer_facts, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "x" * 24)
    git(repo, "config", "neo.openaiBaseUrl", llm.url + "/v1")
    git(repo, "config", "neo.maxRetries", "0")
    llm.queue(answer(suggestion(code="import requests\n")))
    assert main(["ask", "why does the importer retry forever on 429?", "--effort", "low"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("effort low · ") and "src/importer.py — fix it" in out
    assert "! src/importer.py: imports requests, which constraint" in out and "NOT verified" in out
    assert "recorded 1 pending suggestion(s)" in out
    llm.queue({"status": 401})
    assert main(["ask", "anything else?"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fatal: openai (gpt-5-mini) refused the API key (401)") and "hint: export OPENAI_API_KEY" in err
    assert main(["ask", "x", "--provider", "nope"]) == 2          # usage error: unknown choice


def test_help_does_not_import_an_sdk(tmp_path):
    code = ("import sys\nfrom neo_git.cli import main\n"
            "try:\n    main(['ask', '-h'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('openai', 'anthropic', 'numpy', 'pygit2') if m in sys.modules])\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.stdout.strip().endswith("[]") and "--dry-run" in proc.stdout


def test_library_api(repo, tmp_path, monkeypatch):
    import neo_git
    from neo_git import AskResult, NeoEngine

    assert "NeoEngine" in neo_git.__all__
    (repo / "notes.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)                       # a caller outside the repository
    engine = NeoEngine.open(repo, provider="none")
    result = engine.ask("where is the importer?", files=["notes.py"], dry_run=True)
    assert isinstance(result, AskResult) and result.answered is False and result.tokens_in == 0
    assert "# File notes.py\n```\nx = 1" in result.messages["user"]
