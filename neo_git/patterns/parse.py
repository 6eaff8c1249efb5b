"""Parse and validate one pattern file, collecting every problem rather than stopping at the first.

A pattern file, `<domain>/<name>.md`::

    # Pattern: Break an Import Cycle with Dependency Inversion
    Author: git-neo maintainers
    Tags: import cycle, circular import          (optional, comma-separated)

    ## Intent
    ...
    ## Forces / ## Solution / ## Consequences / ## References
    ...

Extra `## ` sections are kept; `###` headings belong to the section above them.
Headings inside fenced code blocks are code, not headings (a Python `## comment`
in a sketch must not start a section).
"""
from __future__ import annotations

import re
from pathlib import Path

from neo_git.patterns.model import (
    AUTHOR_LINE,
    MAX_BYTES,
    MAX_LINES,
    REQUIRED_SECTIONS,
    SHIPPED,
    TITLE_PREFIX,
    Pattern,
    PatternProblem,
)

# Lower-case words joined by single dashes: no dots, slashes or spaces, so an id
# can never name a path outside its folder.
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_SLUG = 64
_SECTION = re.compile(r"^##\s+(.+?)\s*#*\s*$")
_META = re.compile(r"^([A-Za-z][A-Za-z -]*):\s*(.*)$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def slug_problem(part: str, what: str) -> str | None:
    """Why *part* is not a valid domain or name (None when it is)."""
    if not SLUG.fullmatch(part) or len(part) > MAX_SLUG:
        return (f"{what} '{part}' is not a valid id part: use lower-case letters, digits and single dashes "
                f"(at most {MAX_SLUG} characters)")
    return None


def decode(raw: bytes, path: str) -> tuple[str | None, list[PatternProblem]]:
    """The text of a pattern file, or the problems that stop it being read (too big, not UTF-8)."""
    if len(raw) > MAX_BYTES:
        return None, [PatternProblem(path, None, f"file is {len(raw):,} bytes; the limit is {MAX_BYTES:,}")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        return None, [PatternProblem(path, line, f"not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} "
                                                 "cannot be decoded (save the file as UTF-8)")]
    return text.removeprefix("\ufeff"), []


def check_pattern(raw: bytes, pattern_id: str, path: Path, source: str = SHIPPED
                  ) -> tuple[Pattern | None, list[PatternProblem]]:
    """Parse *raw* as the pattern *pattern_id*; (pattern, []) when valid, else (None, every problem)."""
    where = str(path)
    problems: list[PatternProblem] = []
    domain, _, name = pattern_id.partition("/")
    for part, what in ((domain, "domain"), (name, "name")):
        reason = slug_problem(part, what)
        if reason:
            problems.append(PatternProblem(where, None, f"unsafe id '{pattern_id}': {reason}"))
    text, unreadable = decode(raw, where)
    if text is None:
        return None, problems + unreadable
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        problems.append(PatternProblem(where, None, f"{len(lines)} lines; the limit is {MAX_LINES} "
                                                    "(move detail into References or split the pattern)"))

    title, title_line = _title(lines)
    if title is None:
        problems.append(PatternProblem(where, title_line, f"the first line must be '{TITLE_PREFIX} <Name>'"))
    meta, sections, structure = _body(lines, title_line, where)
    problems += structure

    author = meta.get("author", ("", 0))[0]
    if not author:
        line = meta["author"][1] if "author" in meta else None
        problems.append(PatternProblem(where, line, f"missing '{AUTHOR_LINE} <who wrote it>' line "
                                                    "(between the title and the first section)"))
    found = {heading.lower(): (heading, body, line) for heading, body, line in sections}
    for required in REQUIRED_SECTIONS:
        entry = found.get(required.lower())
        if entry is None:
            problems.append(PatternProblem(where, None, f"missing section '## {required}'"))
        elif not entry[1].strip():
            problems.append(PatternProblem(where, entry[2], f"section '## {required}' is empty"))
    if problems:
        return None, problems

    canonical = {r.lower(): r for r in REQUIRED_SECTIONS}
    ordered = {canonical.get(h.lower(), h): body.strip("\n") for h, body, _ in sections}
    tags = tuple(t.strip() for t in meta.get("tags", ("", 0))[0].split(",") if t.strip())
    return Pattern(id=pattern_id, name=title or "", domain=domain, author=author,
                   sections=ordered, path=path, source=source, tags=tags, text=text), []


def _title(lines: list[str]) -> tuple[str | None, int]:
    """(name, 1-based line) of the `# Pattern:` title, which must be the first non-blank line."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if line.startswith(TITLE_PREFIX) and line[len(TITLE_PREFIX):].strip():
            return line[len(TITLE_PREFIX):].strip(), number
        return None, number
    return None, 1


def _body(lines: list[str], title_line: int, where: str
          ) -> tuple[dict[str, tuple[str, int]], list[tuple[str, str, int]], list[PatternProblem]]:
    """Metadata lines before the first section, the sections (heading, text, line), and structural problems."""
    meta: dict[str, tuple[str, int]] = {}
    sections: list[tuple[str, list[str], int]] = []
    problems: list[PatternProblem] = []
    seen: dict[str, int] = {}
    fence_line = 0  # line of the open code fence, 0 when outside one
    for number, line in enumerate(lines[title_line:], title_line + 1):
        if _FENCE.match(line):
            fence_line = 0 if fence_line else number
        heading = None if fence_line else _SECTION.match(line)
        if heading:
            key = heading.group(1).lower()
            if key in seen:
                problems.append(PatternProblem(where, number, f"section '## {heading.group(1)}' appears twice "
                                                              f"(first at line {seen[key]})"))
            seen.setdefault(key, number)
            sections.append((heading.group(1), [], number))
        elif sections:
            sections[-1][1].append(line)
        elif not fence_line and line.startswith("# "):
            problems.append(PatternProblem(where, number, "a second '# ' title; sections start with '## '"))
        else:
            match = _META.match(line.strip())
            if match and match.group(1).lower() not in meta:
                meta[match.group(1).lower()] = (match.group(2).strip(), number)
    if fence_line:
        problems.append(PatternProblem(where, fence_line, "code fence opened here is never closed"))
    return meta, [(h, "\n".join(body), n) for h, body, n in sections], problems
