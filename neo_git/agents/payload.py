"""Reading the JSON that Claude Code and Codex hand their hooks on stdin.

Both agents use the same wire format (common fields `session_id`, `transcript_path`,
`cwd`, `hook_event_name`; Codex adds `model` and, on turn events, `turn_id`). File edits
arrive as Claude's Edit / Write / MultiEdit `tool_input`, or Codex's `apply_patch` whose
`tool_input.command` holds a patch envelope (`*** Begin Patch` … `*** End Patch`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neo_git import safejson
from neo_git.agents.edit_lines import ReadNow, edit_as_lines
from neo_git.agents.wire import MAX_PAYLOAD_BYTES

# Our event names <- the agents' `hook_event_name` values.
EVENTS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "prompt-submit",
    "PreToolUse": "pre-tool-use",
    "PostToolUse": "post-tool-use",
    "Stop": "stop",
    "StopFailure": "stop-failure",
    "SessionEnd": "session-end",
}
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "apply_patch")
OUR_EVENTS = tuple(EVENTS.values())
AGENTS = ("claude", "codex")


class PayloadError(ValueError):
    """The hook input is not what the agent documents."""


def parse_payload(data: bytes) -> dict[str, Any]:
    """The hook's JSON object (PayloadError when empty, too large, or not an object)."""
    if not data.strip():
        raise PayloadError("empty hook input")
    if len(data) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"hook input too large ({len(data):,} bytes)")
    try:
        payload = safejson.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise PayloadError(f"hook input is not JSON ({str(exc)[:80]})") from None
    if not isinstance(payload, dict):
        raise PayloadError("hook input is not a JSON object")
    return payload


def check_event(event: str, agent: str, payload: dict[str, Any]) -> str:
    """The event to run: the payload's own `hook_event_name` wins over the command line's
    (PayloadError for an event or agent we do not know)."""
    event = EVENTS.get(text_field(payload, "hook_event_name"), event)
    if event not in OUR_EVENTS:
        raise PayloadError(f"unknown agent hook event {event[:40]!r} (valid: {', '.join(OUR_EVENTS)})")
    if agent not in AGENTS:
        raise PayloadError(f"unknown agent {agent[:40]!r} (valid: {', '.join(AGENTS)})")
    return event


def text_field(payload: dict, key: str, limit: int = 200_000) -> str:
    """A string field of the payload ('' when absent or not a string)."""
    value = payload.get(key)
    return value[:limit] if isinstance(value, str) else ""


@dataclass(frozen=True)
class FileEdit:
    """What an agent wrote into one file: the lines it added, and the patch when it came as one."""

    path: str
    written: str
    diff: str | None = None


def file_edits(tool_name: str, tool_input: Any, tool_response: Any = None,
               read_now: ReadNow | None = None) -> list[FileEdit]:
    """The edits a PostToolUse payload describes (empty for other tools). An Edit or MultiEdit
    is the whole lines it changed (`edit_lines`: from *tool_response*'s patch, else the
    original file, else the file as it is now, read with *read_now*), never a fragment of one."""
    if not isinstance(tool_input, dict):
        return []
    path = tool_input.get("file_path")
    if tool_name == "Write" and isinstance(path, str):
        content = tool_input.get("content")
        return [FileEdit(path, content)] if isinstance(content, str) and content.strip() else []
    if tool_name in ("Edit", "MultiEdit") and isinstance(path, str):
        if tool_name == "MultiEdit" and not isinstance(tool_input.get("edits"), list):
            return []
        lines = edit_as_lines(tool_input if tool_name == "MultiEdit" else {**tool_input, "edits": None},
                              tool_response, read_now)
        return [FileEdit(path, lines[0], lines[1])] if lines is not None else []
    if tool_name == "apply_patch":
        command = tool_input.get("command") or tool_input.get("input") or tool_input.get("patch")
        if isinstance(command, list):  # ["apply_patch", "<patch>"] in some Codex versions
            command = next((c for c in reversed(command) if isinstance(c, str) and "***" in c), None)
        return parse_apply_patch(command) if isinstance(command, str) else []
    return []


def edited_paths(tool_name: str, tool_input: Any) -> list[str]:
    """The files a file-edit tool call is about to change (PreToolUse: nothing written yet; a
    Codex patch names several, deletions included)."""
    if not isinstance(tool_input, dict):
        return []
    path = tool_input.get("file_path")
    if tool_name in ("Write", "Edit", "MultiEdit"):
        return [path] if isinstance(path, str) and path.strip() else []
    if tool_name == "apply_patch":
        command = tool_input.get("command") or tool_input.get("input") or tool_input.get("patch")
        if isinstance(command, list):
            command = next((c for c in reversed(command) if isinstance(c, str) and "***" in c), None)
        if not isinstance(command, str):
            return []
        out = []
        for line in command.splitlines():
            for header in ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "):
                if line.startswith(header) and line[len(header):].strip() not in out:
                    out.append(line[len(header):].strip())
        return out
    return []


def parse_apply_patch(patch: str) -> list[FileEdit]:
    """Per-file added lines of a Codex patch envelope (`*** Add File:` / `*** Update File:`,
    with `*** Move to:` renames; deletions write nothing)."""
    edits: list[FileEdit] = []
    path: str | None = None
    added: list[str] = []
    section: list[str] = []

    def flush() -> None:
        if path is not None and any(line.strip() for line in added):
            edits.append(FileEdit(path, "\n".join(added) + "\n", "\n".join(section) + "\n"))

    for line in patch.splitlines():
        header = next((h for h in ("*** Add File: ", "*** Update File: ", "*** Delete File: ")
                       if line.startswith(h)), None)
        if header is not None:
            flush()
            path = line[len(header):].strip() if header != "*** Delete File: " else None
            added, section = [], [line]
            continue
        if line.startswith("*** Move to: ") and path is not None:
            path = line[len("*** Move to: "):].strip()
            section.append(line)
            continue
        if line.startswith("*** End Patch") or line.startswith("*** Begin Patch"):
            continue
        section.append(line)
        if line.startswith("+"):
            added.append(line[1:])
    flush()
    return edits
