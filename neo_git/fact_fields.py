"""Validators of a fact's fields: texts, ids, tags, numbers and flags, and the structured metadata
values (possible-supersession links, citations, path globs, review evidence, a judge's verdict).
Each takes a value from outside (a teammate's push, an imported file, an agent) and returns it
clean or raises `InvalidFact` with a hint. `facts.py` builds the dataclasses from them."""
from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

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


def optional_text(data: Mapping, key: str, limit: int = 4096) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    return check_text(key, value, limit)


def check_number(data: Mapping, key: str, default: float, lo: float, hi: float) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise InvalidFact(f"{key} must be a number, not {value!r}")
    if not lo <= value <= hi:
        raise InvalidFact(f"{key} must be between {lo} and {hi}, not {value}")
    return value


def check_flag(data: Mapping, key: str, default: bool) -> bool:
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


def check_links(value: Any) -> tuple[dict, ...]:
    """Validated `possibly_supersedes` links: {"id", "similarity", "threshold"}, one per id, sorted by id."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_LINKS:
        raise InvalidFact(f"metadata.possibly_supersedes must be a list of at most {MAX_LINKS} links")
    links: dict[str, dict] = {}
    for link in value:
        if not isinstance(link, Mapping):
            raise InvalidFact("metadata.possibly_supersedes entries must be objects")
        fact_id = check_id(link.get("id"), "metadata.possibly_supersedes id")
        clean = {"id": fact_id}
        for key in ("similarity", "threshold"):
            number = link.get(key)
            if number is not None:
                clean[key] = float(check_number(link, key, 0.0, -1.0, 2.0))
        evidence = link.get("evidence")
        if evidence:  # written only when some was found (store/evidence.py)
            clean["evidence"] = check_evidence(evidence)
        judge = link.get("judge")
        if judge:     # a model's verdict on the pair (`git neo review --judge`)
            clean["judge"] = judge_verdict(judge)
        if link.get("restored") is True:   # a person restored the older fact this link had retired
            clean["restored"] = True
        links[fact_id] = clean
    return tuple(links[i] for i in sorted(links))


MAX_CITATIONS = 32
MAX_PATHS = 32
MAX_PATH_CHARS = 1024
CITATION_STATES = ("verified", "moved", "changed", "gone", "unknown")
_HEX = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_FINGERPRINT = re.compile(r"^[0-9a-f]{8,64}$")
_SYMBOL = re.compile(r"^[^\s:]{1,512}$")


def check_repo_path(value: Any, what: str) -> str:
    """A path inside the repository as git writes it: relative, '/'-separated, no `..` part."""
    text = check_text(what, value, MAX_PATH_CHARS, required=True)
    parts = text.split("/")
    if text.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in text:
        raise InvalidFact(f"{what} {text!r} is not a path inside the repository",
                          "give it relative to the repository root, with '/' between folders")
    return text


def _optional(citation: Mapping, key: str, pattern: "re.Pattern[str]") -> str | None:
    value = citation.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not pattern.match(value):
        raise InvalidFact(f"metadata.citations: invalid {key} {value!r}")
    return value


def check_citations(value: Any) -> tuple[dict, ...]:
    """Validated `citations`: each {"cited", "path", "symbol" | "span", "size", "blob", "fingerprint",
    "state", "since", "since_date", "commit", "moved_from", "weighed"} with what is set."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_CITATIONS:
        raise InvalidFact(f"metadata.citations must be a list of at most {MAX_CITATIONS} citations")
    out = []
    for citation in value:
        if not isinstance(citation, Mapping):
            raise InvalidFact("metadata.citations entries must be objects")
        clean: dict = {"path": check_repo_path(citation.get("path"), "metadata.citations path")}
        symbol = citation.get("symbol")
        span = citation.get("span")
        if symbol is not None:
            if not isinstance(symbol, str) or not _SYMBOL.match(symbol):
                raise InvalidFact(f"metadata.citations: invalid symbol {symbol!r}")
            clean["symbol"] = symbol
        if span is not None:
            if (symbol is not None or not isinstance(span, list) or len(span) != 2
                    or not all(isinstance(n, int) and not isinstance(n, bool) for n in span)
                    or not 1 <= span[0] <= span[1] <= 10_000_000):
                raise InvalidFact(f"metadata.citations: invalid span {span!r}",
                                  "a span is [first line, last line], 1-based, on a citation without a symbol")
            clean["span"] = list(span)
        # weighed: the `since` of a gone citation upkeep already lowered the fact for (once per loss)
        for key, pattern in (("blob", _HEX), ("commit", _HEX), ("since", _HEX), ("weighed", _HEX),
                             ("fingerprint", _FINGERPRINT)):
            checked = _optional(citation, key, pattern)
            if checked is not None:
                clean[key] = checked
        state = citation.get("state", "verified")
        if state not in CITATION_STATES:
            raise InvalidFact(f"metadata.citations: invalid state {state!r}", f"use one of: {', '.join(CITATION_STATES)}")
        clean["state"] = state
        if citation.get("size") is not None:
            clean["size"] = int(check_number(citation, "size", 0, 0, 10_000_000))
        for key, limit in (("cited", MAX_PATH_CHARS + 600), ("since_date", 64), ("moved_from", MAX_PATH_CHARS + 600)):
            text = optional_text(citation, key, limit)
            if text is not None:
                clean[key] = text
        out.append(clean)
    return tuple(out)


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
_EVIDENCE_NAME = re.compile(r"^[a-z][a-z_]{0,31}$")
MAX_EVIDENCE = 8
JUDGE_VERDICTS = ("updated", "distinct", "contradicts")
MAX_JUDGE_REASON = 300


def check_evidence(value: Any) -> list[str]:
    """Names of review evidence ("reference", "change", …; unknown names are kept for newer versions)."""
    if not isinstance(value, list) or len(value) > MAX_EVIDENCE or \
            not all(isinstance(v, str) and _EVIDENCE_NAME.match(v) for v in value):
        raise InvalidFact(f"metadata.possibly_supersedes evidence must be a list of at most {MAX_EVIDENCE} "
                          "lower-case names")
    return list(dict.fromkeys(value))


def judge_verdict(value: Any) -> dict:
    """A judge's verdict on a possible supersession: {"verdict", "reason", "model", "at"}."""
    if not isinstance(value, Mapping):
        raise InvalidFact("metadata.possibly_supersedes judge must be an object")
    verdict = value.get("verdict")
    if verdict not in JUDGE_VERDICTS:
        raise InvalidFact(f"invalid judge verdict {verdict!r}", f"use one of: {', '.join(JUDGE_VERDICTS)}")
    clean = {"verdict": verdict, "reason": check_text("judge reason", value.get("reason") or "", MAX_JUDGE_REASON),
             "model": check_text("judge model", value.get("model") or "", 200)}
    at = optional_text(value, "at", 64)
    if at:
        clean["at"] = at
    return clean
