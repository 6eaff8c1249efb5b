"""Which files an instruction file's rules are for: path scope instead of always-apply.

- A nested `CLAUDE.md` / `AGENTS.md` (`src/api/CLAUDE.md`) speaks for its folder: `src/api/**`.
- A Cursor rule (`.cursor/rules/*.mdc`) with `globs:` and without `alwaysApply: true` applies
  to files matching its globs; a Copilot instruction file (`.github/instructions/*.instructions.md`)
  to its `applyTo:` globs.
- Everything else (the top-level files, a rule with `alwaysApply: true`, `globs` of `*` or
  `**`) applies everywhere: no scope.

Editor globs are minimatch-style; they become git pathspec globs (`neo_git.pathglob`):
a glob without a '/' matches at any depth (`*.ts` → `**/*.ts`), `{a,b}` is expanded.
"""
from __future__ import annotations

import posixpath
import re

NESTED_NAMES = ("CLAUDE.md", "AGENTS.md")
_BRACES = re.compile(r"\{([^{}]*)\}")
_EVERYTHING = {"*", "**", "**/*", "/**", "./**"}
MAX_GLOBS = 32


def front_matter(text: str) -> tuple[str, dict[str, str | list[str]]]:
    """(text without a leading `---` block, its keys: a value, or a list for `- item` lines)."""
    if not text.startswith("---"):
        return text, {}
    lines = text.splitlines()
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            return "\n".join(lines[end + 1:]), _keys(lines[1:end])
    return text, {}


def _keys(lines: list[str]) -> dict[str, str | list[str]]:
    out: dict[str, str | list[str]] = {}
    current = None
    for line in lines:
        item = re.match(r"^\s*-\s+(.*)$", line)
        if item and current is not None:
            value = out.get(current)
            out[current] = (value if isinstance(value, list) else []) + [_unquote(item.group(1))]
            continue
        pair = re.match(r"^([A-Za-z][\w-]*)\s*:\s*(.*)$", line)
        if pair:
            current = pair.group(1).lower()
            out[current] = _unquote(pair.group(2))
    return out


def _unquote(value: str) -> str:
    value = value.strip()
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" else value


def editor_globs(value: str | list[str]) -> tuple[str, ...]:
    """Pathspec globs for an editor's `globs` / `applyTo` value (a list, or comma-separated)."""
    items = value if isinstance(value, list) else _split_commas(value.strip().strip("[]"))
    out: list[str] = []
    for item in items:
        for glob in _expand(_unquote(item)):
            glob = glob.strip().lstrip("/")
            glob = glob[2:] if glob.startswith("./") else glob
            if not glob:
                continue
            if glob in _EVERYTHING:
                return ()   # every file: not a scope
            if "/" not in glob.rstrip("/"):
                glob = "**/" + glob
            if glob not in out:
                out.append(glob)
    return tuple(out[:MAX_GLOBS])


def _split_commas(text: str) -> list[str]:
    """Comma-separated globs; commas inside `{…}` belong to the glob."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char == "{"
        depth -= char == "}" and depth > 0
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return parts + [current]


def _expand(glob: str) -> list[str]:
    match = _BRACES.search(glob)
    if match is None:
        return [glob]
    return [g for part in match.group(1).split(",") for g in _expand(glob[:match.start()] + part + glob[match.end():])]


def path_scope(path: str, keys: dict[str, str | list[str]]) -> tuple[str, ...]:
    """The globs the rules of the instruction file *path* (with front matter *keys*) are limited to."""
    folder, name = posixpath.split(path)
    if name in NESTED_NAMES and folder:
        return (f"{folder}/**",)
    if str(keys.get("alwaysapply", "")).strip().lower() == "true":
        return ()
    value = keys.get("globs") or keys.get("applyto")
    return editor_globs(value) if value else ()
