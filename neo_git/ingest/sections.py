"""Splitting an instruction file into sections, and the keys that identify them.

A section is the text under one markdown heading (ATX `#`…`######`, outside code
fences), named by its heading path ("Code style › Imports"); text before the first
heading is a section named after the file (or its front matter's `description`).
Three keys, all written as tags on the constraint:

- `source:<path>` names a file the rule came from;
- `section:<file digest>-<heading digest>` names one section of one file, so a
  changed section supersedes exactly the constraint it gave (the file digest
  prefix ties each section tag to its source tag);
- the *rule key*, a digest of the normalised text (case, whitespace, list markers
  and emphasis ignored), makes the same rule written twice one constraint.
"""
from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from neo_git.fact_fields import MAX_TAG_CHARS
from neo_git.facts import MAX_BODY_CHARS, MAX_SUBJECT_CHARS
from neo_git.redact import redact

INGESTED_TAG = "ingested"
SOURCE_PREFIX = "source:"
SECTION_PREFIX = "section:"
HEADING_JOIN = " › "
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
_TAG_SAFE = re.compile(r"[^A-Za-z0-9._:/-]")
_LIST_MARK = re.compile(r"^(?:[-*+]|\d+[.)])\s+")


class Section(NamedTuple):
    """One section of one file, redacted, with its keys."""

    source: str      # path relative to the work tree
    heading: str     # heading path, the constraint's subject
    text: str        # the section's text, the constraint's body
    tag: str         # section:<file digest>-<heading digest>
    key: str         # digest of the normalised rule
    truncated: bool = False
    paths: tuple[str, ...] = ()   # the files its rule is for (nested file, editor globs); () = all


def _digest(text: str, length: int = 8) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def source_tag(path: str) -> str:
    """The tag naming a source file: `source:<path>`, made tag-safe (long or unusual paths
    keep a readable start and a digest)."""
    safe = _TAG_SAFE.sub("_", path) or "file"
    tag = SOURCE_PREFIX + safe
    if tag != SOURCE_PREFIX + path or len(tag) > MAX_TAG_CHARS:
        tag = f"{SOURCE_PREFIX}{safe[:MAX_TAG_CHARS - len(SOURCE_PREFIX) - 9]}~{_digest(path)}"
    return tag


def section_prefix(source: str) -> str:
    """The start shared by the section tags of one source tag."""
    return f"{SECTION_PREFIX}{_digest(source)}-"


def rule_key(subject: str, body: str) -> str:
    """What makes two sections the same rule: the normalised body (the last heading when the
    body is empty), wherever and under whatever heading path it was written."""
    lines = []
    for line in (body if body.strip() else subject.split(HEADING_JOIN)[-1]).splitlines():
        line = _LIST_MARK.sub("", line.strip())
        line = re.sub(r"[*_`]+", "", line)
        line = " ".join(line.lower().split()).rstrip(".;,:!")
        if line:
            lines.append(line)
    return _digest("\n".join(lines), 16)


def split_sections(path: str, text: str) -> list[Section]:
    """The non-empty sections of one file, in order (redacted, bodies capped), each with the path
    scope of its file (`scope.py`)."""
    from neo_git.ingest.scope import front_matter, path_scope

    body_text, keys = front_matter(text.replace("\r\n", "\n"))
    description = keys.get("description")
    title = (description if isinstance(description, str) else "") or path
    paths = path_scope(path, keys)
    stack: list[tuple[int, str]] = []
    raw: list[tuple[str, list[str]]] = [(title, [])]
    fence = None
    for line in body_text.split("\n"):
        marker = _FENCE.match(line)
        if marker:
            fence = None if fence and marker.group(1)[0] == fence else (fence or marker.group(1)[0])
        heading = None if fence or marker else _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading.group(2).strip() or "(untitled)"))
            raw.append((HEADING_JOIN.join(name for _, name in stack), []))
        else:
            raw[-1][1].append(line)
    file_tag = source_tag(path)
    seen: dict[str, int] = {}
    sections = []
    for position, (title, lines) in enumerate(raw):
        occurrence = seen.get(title, 0)
        seen[title] = occurrence + 1
        body = redact("\n".join(lines).strip())
        if not body and position == 0:
            continue  # no text before the first heading
        subject = redact(title)[:MAX_SUBJECT_CHARS]
        truncated = len(body) > MAX_BODY_CHARS
        body = body[:MAX_BODY_CHARS]
        if not body and any(other.startswith(title + HEADING_JOIN) for other, _ in raw):
            continue  # a heading that only groups sub-headings is not a rule of its own
        tag = section_prefix(file_tag) + _digest(f"{title}\0{occurrence}")
        sections.append(Section(path, subject, body, tag, rule_key(subject, body), truncated, paths))
    return sections
