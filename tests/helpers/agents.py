"""Shared helpers for the agent tests: fixture payloads and running a hook."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "agents" / "fixtures"


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


def spawn_hook(event: str, agent: str, data: bytes, cwd: Path, *, close: bool = True, env: dict | None = None,
               python_flags: tuple[str, ...] = ()) -> subprocess.Popen:
    """Start `python -m neo_git.cli hook agent …` as the agent would, its payload written (and
    stdin closed, unless *close* is False: an agent that keeps the pipe open)."""
    proc = subprocess.Popen([sys.executable, *python_flags, "-m", "neo_git.cli", "hook", "agent", event,
                             "--agent", agent], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=cwd, env={**os.environ, **(env or {})})
    proc.stdin.write(data)
    proc.stdin.flush()
    if close:
        proc.stdin.close()
    return proc


def finish(proc: subprocess.Popen, timeout: float = 60) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) once it exits; its stdin may still be open (the agent never
    closed it), and is closed only afterwards."""
    try:
        proc.wait(timeout=timeout)
        return proc.returncode, proc.stdout.read(), proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        if not proc.stdin.closed:
            proc.stdin.close()


class McpServer:
    """`git neo mcp` as an agent starts it (stdio held open by us), with its hook socket up."""

    def __init__(self, repo: Path, env: dict | None = None) -> None:
        self.repo = repo
        self.proc = subprocess.Popen([sys.executable, "-m", "neo_git.cli", "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=repo,
                                     env={**os.environ, **(env or {})})
        self.socket = repo / ".git" / "neo" / "agent.sock"
        deadline = time.monotonic() + 60
        from neo_git.agents.hook_socket import listening

        while not listening(self.socket):   # not just there: a killed server's file is there too
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"git neo mcp did not listen: {self.proc.stderr.read()[-2000:]!r}")
            time.sleep(0.02)

    def stop(self) -> None:
        """End it as the agent does: close its stdin."""
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> McpServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
