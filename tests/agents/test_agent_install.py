"""`git neo agent install claude|codex`: merged into what is there, reversible byte for byte."""
from __future__ import annotations

import json

import pytest
import tomllib

from neo_git.agents.install import agent_install, hook_command
from neo_git.cli import main

USER_MCP = b'{\n    "mcpServers": {"db": {"command": "pg-mcp", "args": ["--ro"]}},\n    "zeta": 1\n}'
USER_SETTINGS = (b'{"permissions": {"allow": ["Bash(npm test)"]},\n "hooks": {"PostToolUse": [{"matcher": "Write",'
                 b' "hooks": [{"type": "command", "command": "prettier --write"}]}]}}\n')
USER_TOML = (b'model = "gpt-5-codex"  # my default\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n\n'
             b'[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "notify-send done"\n')


@pytest.fixture
def project(repo_with_commit, monkeypatch):
    monkeypatch.chdir(repo_with_commit)
    (repo_with_commit / ".claude").mkdir()
    (repo_with_commit / ".mcp.json").write_bytes(USER_MCP)
    (repo_with_commit / ".claude" / "settings.json").write_bytes(USER_SETTINGS)
    (repo_with_commit / ".codex").mkdir()
    (repo_with_commit / ".codex" / "config.toml").write_bytes(USER_TOML)
    return repo_with_commit


def test_claude_install_merges_keeps_user_entries_and_uninstall_restores_bytes(project):
    assert main(["agent", "install", "claude"]) == 0
    mcp = json.loads((project / ".mcp.json").read_text())
    assert list(mcp["mcpServers"]) == ["db", "git-neo"] and mcp["zeta"] == 1
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(npm test)"]}
    post = settings["hooks"]["PostToolUse"]
    assert post[0]["hooks"][0]["command"] == "prettier --write"        # the user's hook first, untouched
    assert post[1]["matcher"] == "Edit|Write|MultiEdit"
    assert post[1]["hooks"][0]["command"] == hook_command("claude", "post-tool-use")
    assert set(settings["hooks"]) == {"PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop",
                                      "SessionEnd"}
    [pre] = settings["hooks"]["PreToolUse"]
    assert pre["matcher"] == "Edit|Write|MultiEdit"
    assert pre["hooks"][0]["command"] == hook_command("claude", "pre-tool-use")

    snapshot = (project / ".claude" / "settings.json").read_bytes()
    assert main(["agent", "install", "claude"]) == 0                    # idempotent
    assert (project / ".claude" / "settings.json").read_bytes() == snapshot

    assert main(["agent", "install", "claude", "--uninstall"]) == 0
    assert (project / ".mcp.json").read_bytes() == USER_MCP
    assert (project / ".claude" / "settings.json").read_bytes() == USER_SETTINGS


def test_codex_install_appends_a_block_that_parses_and_uninstall_restores_bytes(project):
    assert main(["agent", "install", "codex"]) == 0
    config = tomllib.loads((project / ".codex" / "config.toml").read_text())
    assert config["model"] == "gpt-5-codex" and set(config["mcp_servers"]) == {"docs", "git-neo"}
    assert config["mcp_servers"]["git-neo"] == {"command": "git-neo", "args": ["mcp"]}
    stops = [h["command"] for group in config["hooks"]["Stop"] for h in group["hooks"]]
    assert stops == ["notify-send done", hook_command("codex", "stop")]
    assert config["hooks"]["PostToolUse"][0]["matcher"] == "apply_patch|Edit|Write"
    assert main(["agent", "install", "codex"]) == 0
    assert main(["agent", "install", "codex", "--uninstall"]) == 0
    assert (project / ".codex" / "config.toml").read_bytes() == USER_TOML


def test_uninstall_after_the_user_edited_removes_only_our_entries(project):
    agent_install("claude")
    path = project / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    data["model"] = "opus"
    path.write_text(json.dumps(data))
    agent_install("claude", uninstall=True)
    after = json.loads(path.read_text())
    assert after["model"] == "opus" and after["permissions"] == {"allow": ["Bash(npm test)"]}
    assert "git-neo" not in json.dumps(after)

    config = project / ".codex" / "config.toml"
    agent_install("codex")
    config.write_bytes(config.read_bytes() + b'\n[profiles.fast]\nmodel = "o4-mini"\n')
    agent_install("codex", uninstall=True)
    text = config.read_text()
    assert "git-neo" not in text and '[profiles.fast]' in text and text.startswith('model = "gpt-5-codex"')
    tomllib.loads(text)


def test_dry_run_writes_nothing_and_fresh_install_uninstall_leaves_no_trace(repo_with_commit, monkeypatch, capsys):
    monkeypatch.chdir(repo_with_commit)
    assert main(["agent", "install", "claude", "--dry-run"]) == 0
    assert "would change" in capsys.readouterr().out
    assert not (repo_with_commit / ".mcp.json").exists()
    agent_install("claude")
    agent_install("codex")
    agent_install("claude", uninstall=True)
    agent_install("codex", uninstall=True)
    leftovers = {p.name for p in repo_with_commit.iterdir()} - {".git", "README.md"}
    assert leftovers == set()


def test_broken_user_files_are_refused_and_left_alone(project):
    (project / ".claude" / "settings.json").write_bytes(b"{oops")
    from neo_git.errors import NeoError

    with pytest.raises(NeoError, match="not valid JSON"):
        agent_install("claude")
    assert (project / ".claude" / "settings.json").read_bytes() == b"{oops"
    (project / ".codex" / "config.toml").write_bytes(b"hooks = 3\n")
    with pytest.raises(NeoError):
        agent_install("codex")
    assert (project / ".codex" / "config.toml").read_bytes() == b"hooks = 3\n"


def test_user_level_install_uses_home(repo_with_commit, isolated_env, monkeypatch):
    monkeypatch.chdir(repo_with_commit)
    agent_install("claude", user=True)
    assert json.loads((isolated_env / ".claude.json").read_text())["mcpServers"]["git-neo"]["command"] == "git-neo"
    assert (isolated_env / ".claude" / "settings.json").exists()
    agent_install("claude", user=True, uninstall=True)
    assert not (isolated_env / ".claude.json").exists()
