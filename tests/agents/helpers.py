"""Shared helpers for the agent tests: fixture payloads and running a hook."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def payload(name: str, cwd: Path, **override) -> dict:
    """A documented hook payload from tests/agents/fixtures, pointed at *cwd*."""
    text = (FIXTURES / f"{name}.json").read_text(encoding="utf-8").replace("{cwd}", str(cwd))
    data = json.loads(text)
    data.update(override)
    return data


def run_hook(event: str, agent: str, data: dict | bytes) -> tuple[int, dict | None, str]:
    """Run the hook in this process: (exit code, parsed JSON output or None, raw output)."""
    from neo_git.agents.hooks import run_agent_hook

    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    out = io.StringIO()
    code = run_agent_hook([event, "--agent", agent], stdin=io.BytesIO(raw), stdout=out)
    text = out.getvalue()
    return code, (json.loads(text) if text.strip() else None), text


def run_hook_process(event: str, agent: str, data: bytes, cwd: Path, env: dict | None = None,
                     timeout: float = 30) -> tuple[int, str, float]:
    """Run `python -m neo_git.cli hook agent …` as the agent would: (exit code, stdout, seconds)."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "neo_git.cli", "hook", "agent", event, "--agent", agent],
                          input=data, capture_output=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout.decode(), time.monotonic() - start
