"""A real MCP client session (the SDK's own stdio client) against `git neo mcp`; a test module
importing it is skipped without the `mcp` package."""
from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def _server(repo: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items()}
    return StdioServerParameters(command=sys.executable, args=["-m", "neo_git.cli", "mcp"], env=env, cwd=str(repo))


async def _session_run(repo: Path, script):
    async with stdio_client(_server(repo)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await script(session)


def run_session(repo: Path, script):
    """Run the coroutine *script(session)* in a session with `git neo mcp` in *repo* (60 s at most)."""
    return asyncio.run(asyncio.wait_for(_session_run(repo, script), timeout=60))
