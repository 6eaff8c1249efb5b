"""What an agent needs before it can use git-neo: `agent install` refuses without the `mcp`
extra (naming the command that adds it), and `git neo mcp` started outside any repository
(a `--user` install runs it in every folder) says so in the agent's log and serves global and
org facts instead of exiting."""
from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from neo_git.cli import main

mcp = pytest.importorskip("mcp")
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


def test_agent_install_refuses_without_the_mcp_extra(repo_with_commit, monkeypatch, capsys):
    monkeypatch.chdir(repo_with_commit)
    monkeypatch.setitem(sys.modules, "mcp", None)          # what `import mcp` sees when it is not installed
    for agent in ("claude", "codex"):
        assert main(["agent", "install", agent]) == 1
        err = capsys.readouterr().err
        assert err.startswith("fatal: the agent would start `git neo mcp`, which needs the `mcp` extra")
        assert f"hint: install it: `{sys.executable} -m pip install " in err and "[mcp]'`" in err
    assert not (repo_with_commit / ".mcp.json").exists() and not (repo_with_commit / ".codex").exists()
    assert main(["agent", "install", "claude", "--uninstall"]) == 0   # taking it out never needs the extra


def _run(folder: Path, errlog, script):
    params = StdioServerParameters(command=sys.executable, args=["-m", "neo_git.cli", "mcp"],
                                   env=dict(os.environ), cwd=str(folder))

    async def session_run():
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await script(session)
    return asyncio.run(asyncio.wait_for(session_run(), timeout=60))


@pytest.mark.timeout(90)
def test_mcp_outside_a_repository_serves_global_and_org_facts_and_says_so(tmp_path):
    from neo_git.store import FactStore

    FactStore.outside_repository().add("Timestamps", "All timestamps are stored in UTC.", kind="decision",
                                       scope="global")
    folder = tmp_path / "downloads"
    folder.mkdir()

    async def script(session):
        recalled = await session.call_tool("recall", {"query": "which timezone do we store timestamps in?", "format": "json"})
        project = await session.call_tool("add_fact", {"subject": "Build", "body": "We use Bazel.",
                                                       "kind": "decision"})
        added = await session.call_tool("add_fact", {"subject": "Editors", "body": "Tabs are 4 spaces wide.",
                                                     "kind": "pattern", "scope": "global"})
        health = await session.call_tool("health", {})
        return recalled, project, added, health

    with open(tmp_path / "mcp.log", "w", encoding="utf-8") as errlog:
        recalled, project, added, health = _run(folder, errlog, script)
    log = (tmp_path / "mcp.log").read_text(encoding="utf-8")
    assert f"git-neo mcp: {folder} is not inside a git repository: serving global and org facts only" in log
    assert not recalled.is_error
    assert [f["body"] for f in recalled.structured_content["valid_facts"]] == ["All timestamps are stored in UTC."]
    assert project.is_error and "is not inside a git repository: there is no project scope here" in project.content[0].text
    assert not added.is_error and added.structured_content["fact"]["scope"] == "global"
    assert health.is_error and "not inside a git repository: health needs one" in health.content[0].text
    assert sorted(f.subject for f in FactStore.outside_repository().list(scope="global")) == ["Editors", "Timestamps"]
