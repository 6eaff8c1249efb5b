"""A real MCP client session (the SDK's own stdio client) against `git neo mcp`."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers.git import commit_files, git
from tests.helpers.mcp import run_session

mcp = pytest.importorskip("mcp")


@pytest.fixture
def project(repo_with_commit):
    commit_files(repo_with_commit, {"app/a.py": "from app import b\n", "app/b.py": "from app import a\n",
                                    "app/__init__.py": ""}, "cycle")
    return repo_with_commit


@pytest.mark.timeout(90)
def test_mcp_session_lists_tools_adds_supersedes_recalls_and_explains(project):
    async def script(session):
        tools = {t.name for t in (await session.list_tools()).tools}
        first = await session.call_tool("add_fact", {"subject": "HTTP client",
                                                     "body": "We use requests with a 10 s timeout.",
                                                     "kind": "decision"})
        first_id = first.structured_content["fact"]["id"]
        second = await session.call_tool("add_fact", {"subject": "HTTP client",
                                                      "body": "We use httpx with a 30 s timeout.",
                                                      "kind": "decision", "supersedes": first_id})
        recalled = await session.call_tool("recall", {"query": "which http client do we use?", "format": "json"})
        why = await session.call_tool("why", {"fact_id": first_id})
        health = await session.call_tool("health", {"rev": "HEAD"})
        bad = await session.call_tool("why", {"fact_id": 42})            # wrong type
        unknown = await session.call_tool("why", {"fact_id": "ffffffffffffffff"})
        still_alive = await session.call_tool("recall", {"query": "http"})
        return tools, first, second, recalled, why, health, bad, unknown, still_alive

    tools, first, second, recalled, why, health, bad, unknown, alive = run_session(project, script)
    assert {"recall", "add_fact", "why", "history", "restore", "health", "health_diff", "suggest",
            "record_turn"} <= tools
    assert not first.is_error and second.structured_content["superseded"] == first.structured_content["fact"]["id"]
    # the closest facts of the same scope and kind are offered for an explicit `supersedes`
    assert "closest" in second.structured_content
    layers = recalled.structured_content
    assert [f["body"] for f in layers["valid_facts"]][0] == "We use httpx with a 30 s timeout."
    assert why.structured_content["state"] != "valid"
    assert health.structured_content["cycles"] >= 1
    assert bad.is_error and unknown.is_error and "no fact" in unknown.content[0].text
    assert not alive.is_error  # a malformed argument did not kill the server


@pytest.mark.timeout(90)
def test_mcp_sees_writes_made_elsewhere_while_running(project):
    async def script(session):
        before = await session.call_tool("recall", {"query": "deploy on fridays", "format": "json"})
        git(project, "neo", "add", "--kind", "constraint", "No deploys on Friday", "Never deploy on Fridays.",
            env={"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
        after = await session.call_tool("recall", {"query": "deploy on fridays", "format": "json"})
        return before, after

    if shutil.which("git-neo", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("git-neo is not installed in this environment")
    before, after = run_session(project, script)
    assert before.structured_content["constraints"] == []
    assert [f["subject"] for f in after.structured_content["constraints"]] == ["No deploys on Friday"]
