"""`git neo agent install claude|codex [--user] [--uninstall] [--dry-run]`.

Writes the MCP registration and the hook configuration in each agent's documented files,
merged into what is there:

| agent  | project                               | --user                                  |
|--------|---------------------------------------|-----------------------------------------|
| claude | .mcp.json, .claude/settings.json      | ~/.claude.json, ~/.claude/settings.json |
| codex  | .codex/config.toml                    | $CODEX_HOME/config.toml (~/.codex)      |

JSON files are merged structurally (the user's keys keep their order; ours are appended);
the TOML file gets one marked block appended, and the result must still parse. Before the
first change, the original bytes of each file are kept in a manifest (`.git/neo/` for a
project, `$NEO_HOME/` for --user), so `--uninstall` restores a file exactly as it was when
nobody edited it since; otherwise it removes only our entries. Idempotent both ways.
"""
from __future__ import annotations

import base64
import difflib
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neo_git import safejson
from neo_git.errors import NeoError
from neo_git.fileio import atomic_write, locked

SERVER = "git-neo"
COMMAND = "git-neo"
HOOK_TIMEOUT_S = 5
MARK_BEGIN = "# >>> git-neo (git neo agent install codex) >>>"
MARK_END = "# <<< git-neo <<<"

CLAUDE_HOOKS = (  # (agent event, matcher or None, our event)
    ("SessionStart", None, "session-start"),
    ("UserPromptSubmit", None, "prompt-submit"),
    ("PreToolUse", "Edit|Write|MultiEdit", "pre-tool-use"),
    ("PostToolUse", "Edit|Write|MultiEdit", "post-tool-use"),
    ("Stop", None, "stop"),
    ("SessionEnd", None, "session-end"),
)
CODEX_HOOKS = (
    ("SessionStart", "startup|resume|clear", "session-start"),
    ("UserPromptSubmit", None, "prompt-submit"),
    ("PreToolUse", "apply_patch|Edit|Write", "pre-tool-use"),
    ("PostToolUse", "apply_patch|Edit|Write", "post-tool-use"),
    ("Stop", None, "stop"),
)


def hook_command(agent: str, event: str) -> str:
    """The command an agent runs for one of our hook events."""
    return f"{COMMAND} hook agent {event} --agent {agent}"


def _is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("command"), str) \
        and entry["command"].startswith(f"{COMMAND} hook agent ")


# --- JSON files (Claude Code) -------------------------------------------------------

def _load_json(path: Path, text: str | None) -> dict:
    if text is None or not text.strip():
        return {}
    try:
        data = safejson.loads(text)
    except ValueError as exc:
        raise NeoError(f"{path} is not valid JSON ({exc}); nothing was changed",
                       "fix the file by hand, then run the command again") from None
    if not isinstance(data, dict):
        raise NeoError(f"{path} does not hold a JSON object; nothing was changed")
    return data


def _dump_json(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _add_mcp_server(data: dict) -> dict:
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise NeoError("mcpServers is not an object; nothing was changed")
    servers.setdefault(SERVER, {"type": "stdio", "command": COMMAND, "args": ["mcp"]})
    return data


def _remove_mcp_server(data: dict) -> dict:
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and SERVER in servers:
        del servers[SERVER]
        if not servers:
            del data["mcpServers"]
    return data


def _add_hooks(data: dict, agent: str, table: tuple) -> dict:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise NeoError("`hooks` is not an object; nothing was changed")
    for event, matcher, ours in table:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise NeoError(f"hooks.{event} is not a list; nothing was changed")
        command = hook_command(agent, ours)
        present = any(isinstance(g, dict) and any(isinstance(h, dict) and h.get("command") == command
                                                   for h in g.get("hooks") or [])
                      for g in groups)
        if not present:
            group: dict[str, Any] = {"matcher": matcher} if matcher else {}
            group["hooks"] = [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]
            groups.append(group)
    return data


def _remove_hooks(data: dict) -> dict:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                inner = [h for h in group["hooks"] if not _is_ours(h)]
                if not inner and group["hooks"]:
                    continue  # the group held only our hook
                group = {**group, "hooks": inner}
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del data["hooks"]
    return data


def _json_editor(add: Callable[[dict], dict], remove: Callable[[dict], dict]):
    def edit(path: Path, text: str | None, uninstall: bool) -> str | None:
        data = _load_json(path, text)
        updated = remove(data) if uninstall else add(data)
        if uninstall and not updated and text is None:
            return None
        return _dump_json(updated)
    return edit


# --- TOML (Codex) -----------------------------------------------------------------

def codex_block() -> str:
    """The marked TOML block install appends to Codex's config.toml."""
    lines = [MARK_BEGIN, f"[mcp_servers.{SERVER}]", f'command = "{COMMAND}"', 'args = ["mcp"]', ""]
    for event, matcher, ours in CODEX_HOOKS:
        lines.append(f"[[hooks.{event}]]")
        if matcher:
            lines.append(f'matcher = "{matcher}"')
        lines += [f"[[hooks.{event}.hooks]]", 'type = "command"', f'command = "{hook_command("codex", ours)}"',
                  f"timeout = {HOOK_TIMEOUT_S}", ""]
    lines.append(MARK_END)
    return "\n".join(lines) + "\n"


def _toml_edit(path: Path, text: str | None, uninstall: bool) -> str | None:
    import tomllib

    current = text or ""
    block = codex_block()
    if uninstall:
        start = current.find(MARK_BEGIN)
        end = current.find(MARK_END, start)
        if start < 0 or end < 0:
            return current if text is not None else None
        end += len(MARK_END) + (1 if current[end + len(MARK_END):end + len(MARK_END) + 1] == "\n" else 0)
        if start > 0 and current[start - 1] == "\n" and current[:start].endswith("\n\n"):
            start -= 1  # the blank line install put before the block
        return current[:start] + current[end:]
    if MARK_BEGIN in current:
        return current
    try:
        existing = tomllib.loads(current)
    except tomllib.TOMLDecodeError as exc:
        raise NeoError(f"{path} is not valid TOML ({exc}); nothing was changed",
                       "fix the file by hand, then run the command again") from None
    if SERVER in (existing.get("mcp_servers") or {}):
        raise NeoError(f"{path} already defines mcp_servers.{SERVER}; nothing was changed",
                       "remove that table (or keep it and add the hooks by hand)")
    separator = "" if not current else ("\n" if current.endswith("\n") else "\n\n")
    updated = current + separator + block
    try:
        tomllib.loads(updated)
    except tomllib.TOMLDecodeError as exc:
        raise NeoError(f"{path} cannot take git-neo's tables ({exc}); nothing was changed",
                       "its [hooks] are written in a form that does not allow appended tables; "
                       "add git-neo's hooks by hand (see README)") from None
    return updated


# --- targets and the manifest ----------------------------------------------------------

def targets(agent: str, user: bool, repo_root: Path | None) -> list[tuple[Path, Callable]]:
    """(file, editor) pairs for an agent."""
    if agent == "claude":
        mcp_edit = _json_editor(_add_mcp_server, _remove_mcp_server)
        hooks_edit = _json_editor(lambda d: _add_hooks(d, "claude", CLAUDE_HOOKS), _remove_hooks)
        if user:
            home = Path.home()
            return [(home / ".claude.json", mcp_edit), (home / ".claude" / "settings.json", hooks_edit)]
        assert repo_root is not None   # a project install has a work tree
        return [(repo_root / ".mcp.json", mcp_edit), (repo_root / ".claude" / "settings.json", hooks_edit)]
    if agent == "codex":
        if user:
            base = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        else:
            assert repo_root is not None   # a project install has a work tree
            base = repo_root / ".codex"
        return [(base / "config.toml", _toml_edit)]
    raise NeoError(f"unknown agent '{agent}'", "use one of: claude, codex")


def require_mcp() -> None:
    """NeoError (with the exact install command) when the `mcp` extra is missing here."""
    from neo_git.extras import has_extra, install_hint

    if not has_extra("mcp"):
        raise NeoError("the agent would start `git neo mcp`, which needs the `mcp` extra, and it is not "
                       "installed here; nothing was changed", install_hint("mcp"))


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise NeoError(f"{path} is a directory; nothing was changed") from None


def agent_install(agent: str, *, user: bool = False, uninstall: bool = False, dry_run: bool = False,
                  repo_root: Path | None = None, state_dir: Path | None = None) -> dict:
    """Install (or uninstall) git-neo for *agent*; returns what changed per file. Installing
    needs the `mcp` extra: the agent starts `git neo mcp`, which would exit at once without it."""
    if not uninstall:
        require_mcp()
    if not user and (repo_root is None or state_dir is None):
        from neo_git.identity import open_repository, repository_paths

        paths = repository_paths(open_repository())
        if paths.workdir is None:
            raise NeoError("a bare repository has no work tree for agent settings", "use --user")
        repo_root = repo_root or paths.workdir
        state_dir = state_dir or paths.neo_dir
    if user and state_dir is None:
        from neo_git.identity import neo_home

        state_dir = neo_home()
    assert state_dir is not None
    manifest_path = Path(state_dir) / "agent-install.json"
    report: dict[str, Any] = {"agent": agent, "scope": "user" if user else "project", "uninstall": uninstall,
              "dry_run": dry_run, "files": []}
    with locked(manifest_path.with_name(manifest_path.name + ".lock"), timeout=10):
        manifest = _load_manifest(manifest_path)
        for path, edit in targets(agent, user, repo_root):
            report["files"].append(_apply(path, edit, manifest, uninstall, dry_run))
        if not dry_run:
            atomic_write(manifest_path, (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode())
    return report


def _load_manifest(path: Path) -> dict:
    try:
        data = safejson.loads(path.read_bytes())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError, RecursionError):
        return {}


def _apply(path: Path, edit, manifest: dict, uninstall: bool, dry_run: bool) -> dict:
    key = str(path.resolve()) if path.exists() else str(path.parent.resolve() / path.name)
    original = _read_bytes(path)
    text = None if original is None else original.decode("utf-8", "surrogateescape")
    record = manifest.get(key)
    if uninstall and record and _digest(original) == record.get("written"):
        # Nobody touched the file since we wrote it: put back exactly what was there.
        restored = None if record.get("original") is None else base64.b64decode(record["original"])
        action = "restored" if restored is not None else "removed (git-neo created it)"
        new_bytes = restored
    else:
        updated = edit(path, text, uninstall)
        new_bytes = None if updated is None else updated.encode("utf-8", "surrogateescape")
        action = "unchanged" if new_bytes == original else ("entries removed" if uninstall else
                                                             "created" if original is None else "merged")
    result: dict[str, Any] = {"path": str(path), "action": action}
    if new_bytes == original:
        result["action"] = "unchanged"
        if uninstall:
            manifest.pop(key, None)
        return result
    before = "" if original is None else original.decode("utf-8", "replace")
    after = "" if new_bytes is None else new_bytes.decode("utf-8", "replace")
    result["diff"] = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                                  fromfile=str(path), tofile=str(path)))
    if dry_run:
        return result
    if new_bytes is None:
        path.unlink()
        _remove_empty_parents(path.parent, record)
    else:
        created_dirs = _missing_parents(path.parent)
        atomic_write(path, new_bytes)
        if original is None and created_dirs:
            result["created_dirs"] = [str(d) for d in created_dirs]
    if uninstall:
        manifest.pop(key, None)
    else:
        previous = record or {"original": None if original is None else base64.b64encode(original).decode("ascii"),
                              "created_dirs": result.get("created_dirs", [])}
        manifest[key] = {**previous, "written": _digest(new_bytes)}
    return result


def _missing_parents(folder: Path) -> list[Path]:
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    return missing


def _remove_empty_parents(folder: Path, record: dict | None) -> None:
    for name in (record or {}).get("created_dirs", []):
        try:
            Path(name).rmdir()  # only if empty: never delete something the user put there
        except OSError:
            pass
