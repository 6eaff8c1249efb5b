"""Validators of a fact's plain fields: texts, ids, tags, numbers, flags, repository paths and
path globs. Each takes a value from outside (a teammate's push, an imported file, an agent) and
returns it clean or raises `InvalidFact` with a hint. `facts.py` builds the dataclasses from
them; the structured metadata values (links, citations, invalidation) are `fact_schema.py`'s."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from neo_git.errors import InvalidFact

MAX_TAGS = 32
MAX_TAG_CHARS = 64
_ID = re.compile(r"^[0-9a-f]{16}$")
_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")


def check_text(name: str, value: Any, limit: int, *, required: bool = False) -> str:
    """Validate a text field: a str, valid Unicode (no lone surrogates), within *limit*."""
    if not isinstance(value, str):
        raise InvalidFact(f"{name} must be text, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidFact(f"{name} is not valid UTF-8",
                          "re-encode the text as UTF-8 (e.g. with iconv) and try again") from None
    if "\x00" in value:
        raise InvalidFact(f"{name} contains a NUL byte")
    if required and not value.strip():
        raise InvalidFact(f"{name} is empty", f"give the fact a short {name}")
    if len(value) > limit:
        raise InvalidFact(f"{name} is too long ({len(value):,} characters, at most {limit:,})",
                          "facts are short statements; link to a file for the details")
    return value


def check_id(value: Any, what: str = "id") -> str:
    """A 16-hex fact id, or InvalidFact."""
    if not isinstance(value, str) or not _ID.match(value):
        raise InvalidFact(f"invalid {what} {value!r}", "fact ids are 16 lower-case hex digits")
    return value


def check_tags(tags: Iterable[Any]) -> tuple[str, ...]:
    out = []
    for tag in tags:
        if not isinstance(tag, str) or not _TAG.match(tag) or len(tag) > MAX_TAG_CHARS:
            raise InvalidFact(f"invalid tag {tag!r}", "tags are short words: letters, digits, . _ : / -")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise InvalidFact(f"too many tags ({len(out)}, at most {MAX_TAGS})")
    return tuple(out)


def optional_text(data: Mapping[str, Any], key: str, limit: int = 4096) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    return check_text(key, value, limit)


def check_number(data: Mapping[str, Any], key: str, default: float, lo: float, hi: float) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise InvalidFact(f"{key} must be a number, not {value!r}")
    if not lo <= value <= hi:
        raise InvalidFact(f"{key} must be between {lo} and {hi}, not {value}")
    return value


def check_flag(data: Mapping[str, Any], key: str, default: bool) -> bool:
    """A true/false field; a missing or null one takes *default* (bool("false") is True, so no coercion)."""
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InvalidFact(f"{key} must be true or false, not {value!r}")
    return value


MAX_LINKS = 64


def check_id_set(value: Any, what: str) -> tuple[str, ...]:
    """A sorted, de-duplicated tuple of fact ids (None or [] -> ())."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_LINKS:
        raise InvalidFact(f"{what} must be a list of at most {MAX_LINKS} fact ids")
    return tuple(sorted({check_id(v, what) for v in value}))


MAX_PATHS = 32
MAX_PATH_CHARS = 1024


def check_repo_path(value: Any, what: str) -> str:
    """A path inside the repository as git writes it: relative, '/'-separated, no `..` part."""
    text = check_text(what, value, MAX_PATH_CHARS, required=True)
    parts = text.split("/")
    if text.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in text:
        raise InvalidFact(f"{what} {text!r} is not a path inside the repository",
                          "give it relative to the repository root, with '/' between folders")
    return text


def check_globs(value: Any) -> tuple[str, ...]:
    """Validated `paths`: git pathspec globs relative to the repository root, de-duplicated, in order."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_PATHS:
        raise InvalidFact(f"metadata.paths must be a list of at most {MAX_PATHS} globs")
    out: list[str] = []
    for glob in value:
        text = check_text("metadata.paths glob", glob, MAX_PATH_CHARS, required=True)
        if text.startswith("/") or "\n" in text or any(p == ".." for p in text.split("/")):
            raise InvalidFact(f"path glob {text!r} must be relative to the repository root",
                              "e.g. 'migrations/**' or 'src/api/**/*.py'")
        if text not in out:
            out.append(text)
    return tuple(out)
