"""An agent's edit as the whole lines it changed, so the outcome loop matches it as it ships.

Claude Code's Edit replaces a fragment (`old_string "TIMEOUT = 5"` -> `new_string
"TIMEOUT = 10"` inside the line `TIMEOUT = 5  # seconds`); git, and the outcome loop's line
matching, see whole lines. Recorded as the fragment, a verbatim ship looks like nothing shipped
(ABANDONED); recorded as the line it became (`TIMEOUT = 10  # seconds`) it is ACCEPTED, and a
person's change to it is MODIFIED. Where the lines come from, best first:

1. the PostToolUse `tool_response.structuredPatch` (Edit, MultiEdit): the hunks Claude Code
   applied, whole lines prefixed ' ', '-', '+';
2. `tool_response.originalFile`: the file before the edit, where the replacement is redone;
3. the file as it is now (the hook runs after the edit): the lines holding `new_string`;
4. the fragment itself, when none of these finds it.

Codex `apply_patch` hunks already carry whole lines (`-old line` / `+new line`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

# The file's text now, or None when it cannot be read (gone, too large, not UTF-8).
ReadNow = Callable[[str], "str | None"]


def _line_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The [start, end) of the whole lines that hold text[start:end]."""
    first = text.rfind("\n", 0, start) + 1
    if end > start and text[end - 1] == "\n":
        return first, end - 1            # the span ends with its line's newline
    last = text.find("\n", end)
    return first, len(text) if last < 0 else last


def _lines(text: str, spans: Iterable[tuple[int, int]]) -> list[str]:
    """The whole lines holding each span, in order, each line once."""
    out: list[str] = []
    covered: set[int] = set()
    for start, end in spans:
        first, last = _line_span(text, start, end)
        if first in covered:
            continue
        covered.add(first)
        out.extend(text[first:last].split("\n"))
    return out


def _occurrences(text: str, fragment: str, every: bool) -> list[int]:
    """Where *fragment* starts in *text*: the first place, or every non-overlapping one."""
    found, at = [], text.find(fragment)
    while at >= 0:
        found.append(at)
        if not every:
            break
        at = text.find(fragment, at + max(1, len(fragment)))
    return found


def redo_replacement(original: str, old: str, new: str, every: bool = False) -> tuple[list[str], list[str]] | None:
    """(removed lines, added lines): the whole lines an Edit of *old* -> *new* changed in
    *original* (None when *old* is not in it)."""
    if not old:
        return None
    places = _occurrences(original, old, every)
    if not places:
        return None
    pieces, new_spans, cursor, shift = [], [], 0, 0
    for at in places:
        pieces.append(original[cursor:at])
        pieces.append(new)
        new_spans.append((at + shift, at + shift + len(new)))
        shift += len(new) - len(old)
        cursor = at + len(old)
    pieces.append(original[cursor:])
    after = "".join(pieces)
    removed = _lines(original, [(at, at + len(old)) for at in places])
    return removed, _lines(after, new_spans)


def lines_holding(text: str, fragment: str, every: bool = True) -> list[str] | None:
    """The whole lines of *text* that hold *fragment* (None when it is not there)."""
    if not fragment:
        return None
    places = _occurrences(text, fragment, every)
    return _lines(text, [(at, at + len(fragment)) for at in places]) if places else None


def patch_lines(structured: Any) -> tuple[list[str], list[str], str] | None:
    """(removed, added, diff text) from a `structuredPatch` (a list of hunks, each with a
    `lines` list of ' ' / '-' / '+' prefixed lines); None when it is not one."""
    if not isinstance(structured, list) or not structured:
        return None
    removed: list[str] = []
    added: list[str] = []
    diff: list[str] = []
    for hunk in structured:
        lines = hunk.get("lines") if isinstance(hunk, dict) else None
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            return None
        start = hunk.get("newStart")
        diff.append(f"@@ +{start} @@" if isinstance(start, int) else "@@")
        for line in lines:
            diff.append(line)
            if line.startswith("+"):
                added.append(line[1:])
            elif line.startswith("-"):
                removed.append(line[1:])
    return removed, added, "\n".join(diff) + "\n"


def _diff(removed: list[str], added: list[str]) -> str:
    return "\n".join(["@@"] + ["-" + line for line in removed] + ["+" + line for line in added]) + "\n"


def edit_as_lines(tool_input: dict, tool_response: Any, read_now: ReadNow | None) -> tuple[str, str | None] | None:
    """(code, diff) for a Claude Code Edit or MultiEdit: the whole lines it wrote, and a diff
    of the lines it changed when known; None when it wrote nothing."""
    path = tool_input.get("file_path")
    if isinstance(tool_input.get("edits"), list):
        edits = [e for e in tool_input["edits"] if isinstance(e, dict)]
    else:
        edits = [tool_input]
    edits = [e for e in edits if isinstance(e.get("new_string"), str) and e["new_string"].strip()]
    if not edits:
        return None
    response = tool_response if isinstance(tool_response, dict) else {}
    patched = patch_lines(response.get("structuredPatch"))
    if patched is not None and any(line.strip() for line in patched[1]):
        return "\n".join(patched[1]) + "\n", patched[2]
    original = response.get("originalFile")
    if isinstance(original, str) and len(edits) == 1:
        edit = edits[0]
        redone = redo_replacement(original, edit.get("old_string") or "", edit["new_string"],
                                  bool(edit.get("replace_all")))
        if redone is not None:
            return "\n".join(redone[1]) + "\n", _diff(*redone)
    now = read_now(path) if read_now is not None and isinstance(path, str) else None
    written: list[str] = []
    for edit in edits:
        held = lines_holding(now, edit["new_string"]) if now is not None else None
        written.extend(held if held is not None else edit["new_string"].split("\n"))
    written = list(dict.fromkeys(written))
    return "\n".join(written) + "\n", None
