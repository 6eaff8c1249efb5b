"""The doctor's check of coding-agent setups made by `git neo agent install`: every config file
install wrote (its manifests: `.git/neo/agent-install.json`, `$NEO_HOME/agent-install.json`)
that still holds git-neo's entries must start a command that is on PATH, and the git-neo that
command runs must have the `mcp` extra, or the agent's `git neo mcp` exits at once."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from neo_git.doctor.findings import Context, Finding

CHECK = "agents"
MANIFEST = "agent-install.json"


def check_agents(ctx: Context) -> list[Finding]:
    """Agent configs git-neo wrote: command on PATH, `mcp` extra present behind it."""
    from neo_git.agents.install import _load_manifest

    commands: dict[str, dict] = {}      # command -> {"files": [...], "mcp": bool, "agents": set}
    for manifest in (ctx.paths.neo_dir / MANIFEST, ctx.home / MANIFEST):
        for name in _load_manifest(manifest):
            path = Path(name)
            found = _entries(path)
            for command, is_mcp in found:
                row = commands.setdefault(command, {"files": [], "mcp": False, "agents": set()})
                if str(path) not in row["files"]:
                    row["files"].append(str(path))
                row["mcp"] = row["mcp"] or is_mcp
                row["agents"].add(_agent(path))
    findings = []
    for command, row in commands.items():
        agents = " and ".join(sorted(row["agents"]))
        files = ", ".join(row["files"])
        resolved = shutil.which(command)
        if resolved is None:
            from neo_git.doctor.reachability import link_hint

            findings.append(Finding(CHECK, f"{files} start{'s' if len(row['files']) == 1 else ''} `{command}` for "
                                           f"{agents}, and it is not on PATH here: {agents} cannot start git-neo's "
                                           "MCP server or its hooks", hint=link_hint(os.environ.get("PATH", ""))))
            continue
        if row["mcp"]:
            python = interpreter_of(resolved)
            if not _has_mcp(python):
                from neo_git.extras import install_hint

                findings.append(Finding(CHECK, f"the git-neo {agents} starts ({resolved}) lacks the `mcp` extra: "
                                               f"`git neo mcp` exits at once inside {agents}",
                                        hint=install_hint("mcp", python)))
    return findings


def _agent(path: Path) -> str:
    return "Codex" if path.suffix == ".toml" else "Claude Code"


def _entries(path: Path) -> list[tuple[str, bool]]:
    """(command, is the MCP server) for git-neo's entries in one agent config file."""
    from neo_git import safejson
    from neo_git.agents.install import SERVER

    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    try:
        if path.suffix == ".toml":
            import tomllib

            data = tomllib.loads(text)
            servers = data.get("mcp_servers")
        else:
            data = safejson.loads(text)
            servers = data.get("mcpServers") if isinstance(data, dict) else None
    except (ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    found = []
    server = servers.get(SERVER) if isinstance(servers, dict) else None
    if isinstance(server, dict) and isinstance(server.get("command"), str):
        found.append((server["command"], True))
    hooks = data.get("hooks")
    for groups in (hooks.values() if isinstance(hooks, dict) else ()):
        for group in groups if isinstance(groups, list) else ():
            for hook in (group.get("hooks") or []) if isinstance(group, dict) else ():
                command = hook.get("command") if isinstance(hook, dict) else None
                if isinstance(command, str) and " hook agent " in command:
                    try:
                        found.append((shlex.split(command)[0], False))
                    except (ValueError, IndexError):
                        continue
    return found


def interpreter_of(script: str) -> str | None:
    """The Python a console script runs under (its `#!` line, or pip's `exec` wrapper for long paths)."""
    try:
        with open(script, "rb") as handle:
            head = handle.read(512).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    if not head or not head[0].startswith("#!"):
        return None
    first = head[0][2:].strip()
    if "python" in os.path.basename(first.split()[0] if first else ""):
        return first.split()[0]
    for line in head[1:3]:     # "#!/bin/sh" then "'''exec' "/very/long/path/python" "$0" "$@""
        if "exec" in line and "python" in line:
            try:
                return next(word for word in shlex.split(line.replace("'''exec'", "exec")) if "python" in word)
            except (ValueError, StopIteration):
                return None
    return None


def _has_mcp(python: str | None) -> bool:
    from neo_git.extras import has_extra

    # Not realpath: every virtualenv's python is a link to the same base interpreter.
    if python is None or os.path.abspath(python) == os.path.abspath(sys.executable):
        return has_extra("mcp")
    try:
        proc = subprocess.run([python, "-c", "import importlib.util, sys; "
                                             "sys.exit(0 if importlib.util.find_spec('mcp') else 3)"],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0
