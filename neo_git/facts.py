"""The fact: typed, scoped, supersession-aware, with canonical JSON (DESIGN.md §2).

`Fact.to_dict()` is exactly what is stored on `refs/neo/facts` and in `~/.neo`;
`canonical_json()` gives the bytes (sorted keys, UTF-8, trailing newline), so
the same fact always has the same blob id. `Fact.from_dict()` validates input
from anywhere (a teammate's push, an imported file) and raises `InvalidFact`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Iterable, Mapping

from neo_git.errors import InvalidFact

SCHEMA_VERSION = 1
MAX_SUBJECT_CHARS = 200
MAX_BODY_CHARS = 16_384
MAX_TAGS = 32
MAX_TAG_CHARS = 64
MAX_SOURCE_PROMPT_CHARS = 200
INVALIDATION_DEPTH = 6
_ID = re.compile(r"^[0-9a-f]{16}$")
_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")


class FactKind(str, Enum):
    CONSTRAINT = "constraint"
    ARCHITECTURE = "architecture"
    PATTERN = "pattern"
    REVIEW = "review"
    DECISION = "decision"
    KNOWN_UNKNOWN = "known_unknown"
    FAILURE = "failure"


class FactScope(str, Enum):
    GLOBAL = "global"
    ORG = "org"
    PROJECT = "project"
    SESSION = "session"


# `agent`: written by a coding agent (MCP `add_fact`, agent hooks), not by a person.
PROVENANCES = ("structural", "inferred", "observed", "agent")
PROPOSAL_STATES = ("open",)   # metadata.proposal: an agent's constraint no person accepted yet
PROTECTED_TAGS = frozenset({"seed", "community", "synthesized"})
SCOPE_ORDER = (FactScope.GLOBAL, FactScope.ORG, FactScope.PROJECT, FactScope.SESSION)


def now_iso() -> str:
    """The current time as ISO 8601 UTC, second precision."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def new_fact_id() -> str:
    """16 random hex digits."""
    import secrets  # with `random` and `base64` behind it: only a write needs them

    return secrets.token_hex(8)


def _parse_name(enum: type[Enum], what: str, value: Any):
    try:
        return enum(value)
    except ValueError:
        valid = ", ".join(member.value for member in enum)
        raise InvalidFact(f"invalid {what} '{value}'", f"use one of: {valid}") from None


def parse_kind(value: Any) -> FactKind:
    """A FactKind from its name, or InvalidFact listing the valid ones."""
    return _parse_name(FactKind, "kind", value)


def parse_scope(value: Any) -> FactScope:
    """A FactScope from its name, or InvalidFact listing the valid ones."""
    return _parse_name(FactScope, "scope", value)


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


def _check_tags(tags: Iterable[Any]) -> tuple[str, ...]:
    out = []
    for tag in tags:
        if not isinstance(tag, str) or not _TAG.match(tag) or len(tag) > MAX_TAG_CHARS:
            raise InvalidFact(f"invalid tag {tag!r}", "tags are short words: letters, digits, . _ : / -")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise InvalidFact(f"too many tags ({len(out)}, at most {MAX_TAGS})")
    return tuple(out)


def _opt_str(data: Mapping, key: str, limit: int = 4096) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    return check_text(key, value, limit)


def _number(data: Mapping, key: str, default: float, lo: float, hi: float) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise InvalidFact(f"{key} must be a number, not {value!r}")
    if not lo <= value <= hi:
        raise InvalidFact(f"{key} must be between {lo} and {hi}, not {value}")
    return value


def _flag(data: Mapping, key: str, default: bool) -> bool:
    """A true/false field; a missing or null one takes *default* (bool("false") is True, so no coercion)."""
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InvalidFact(f"{key} must be true or false, not {value!r}")
    return value


@dataclass(frozen=True)
class FactMetadata:
    """Bookkeeping that travels with a fact."""

    created_at: str = field(default_factory=now_iso)
    last_accessed: str | None = None
    access_count: int = 0
    source_file: str | None = None
    source_prompt: str | None = None
    confidence: float = 0.5
    success_count: int = 0
    provenance: str = "observed"
    author: str = "unknown"
    # Why the fact is no longer valid: {"reason": "superseded"|"evicted"|"invalidated",
    # "at", "by", "rule", "similarity", "threshold", "embedder", "detail"}; None while valid.
    invalidation: dict | None = None
    # Facts this one may replace, for review (`git neo review`): ({"id", "similarity",
    # "threshold"}, ...) sorted by id; nothing was retired for them.
    possibly_supersedes: tuple[dict, ...] = ()
    # Facts a person said are distinct from this one (a rejected review): never proposed again.
    distinct_from: tuple[str, ...] = ()
    # Code the fact cites (DESIGN.md §13): ({"cited", "path", "symbol" | "span", "blob",
    # "fingerprint", "state", "since", …}, ...) in the order given; see neo_git/citations/.
    citations: tuple[dict, ...] = ()
    # Git pathspec globs the fact is limited to (`src/api/**`), as given.
    paths: tuple[str, ...] = ()
    # "open" while the fact is an agent's proposal no person has accepted (`git neo review`);
    # None otherwise (accepting clears it, so a sync merge of "accepted" and "open" converges).
    proposal: str | None = None

    def to_dict(self) -> dict:
        """Plain JSON form."""
        data = {
            "created_at": self.created_at, "last_accessed": self.last_accessed,
            "access_count": self.access_count, "source_file": self.source_file,
            "source_prompt": self.source_prompt, "confidence": self.confidence,
            "success_count": self.success_count, "provenance": self.provenance,
            "author": self.author, "invalidation": self.invalidation,
        }
        # Written only when set, so facts that never had them keep their exact bytes (blob ids).
        if self.possibly_supersedes:
            data["possibly_supersedes"] = [dict(link) for link in self.possibly_supersedes]
        if self.distinct_from:
            data["distinct_from"] = list(self.distinct_from)
        if self.citations:
            data["citations"] = [dict(c) for c in self.citations]
        if self.paths:
            data["paths"] = list(self.paths)
        if self.proposal:
            data["proposal"] = self.proposal
        return data

    @classmethod
    def from_dict(cls, data: Any) -> "FactMetadata":
        """Validate and build; unknown keys are ignored."""
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise InvalidFact("metadata must be an object")
        provenance = data.get("provenance", "observed")
        if provenance not in PROVENANCES:
            raise InvalidFact(f"invalid provenance {provenance!r}", f"use one of: {', '.join(PROVENANCES)}")
        prompt = data.get("source_prompt")
        if isinstance(prompt, str):
            prompt = prompt[:MAX_SOURCE_PROMPT_CHARS]
        invalidation = data.get("invalidation")
        if invalidation is not None and not isinstance(invalidation, Mapping):
            raise InvalidFact("metadata.invalidation must be an object or null")
        if invalidation:
            # Shallow only (`undo` holds a small object): a value nested hundreds of levels deep
            # in a teammate's push would overflow the stack when the fact is written back.
            from neo_git.safejson import check_depth

            try:
                check_depth(dict(invalidation), INVALIDATION_DEPTH)
            except ValueError:
                raise InvalidFact(f"metadata.invalidation is nested more than {INVALIDATION_DEPTH} levels deep") \
                    from None
        proposal = data.get("proposal")
        if proposal is not None and proposal not in PROPOSAL_STATES:
            raise InvalidFact(f"invalid metadata.proposal {proposal!r}", "it is \"open\" or absent")
        for key in ("similarity", "threshold"):  # `git neo why` formats these as numbers
            value = (invalidation or {}).get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise InvalidFact(f"metadata.invalidation.{key} must be a number, not {value!r}")
        return cls(
            created_at=_opt_str(data, "created_at", 64) or now_iso(),
            last_accessed=_opt_str(data, "last_accessed", 64),
            access_count=int(_number(data, "access_count", 0, 0, 2**53)),
            source_file=_opt_str(data, "source_file", 4096),
            source_prompt=None if prompt is None else check_text("source_prompt", prompt, MAX_SOURCE_PROMPT_CHARS),
            confidence=float(_number(data, "confidence", 0.5, 0.0, 1.0)),
            success_count=int(_number(data, "success_count", 0, 0, 2**53)),
            provenance=provenance,
            author=_opt_str(data, "author", 512) or "unknown",
            invalidation=dict(invalidation) if invalidation else None,
            possibly_supersedes=_possible_links(data.get("possibly_supersedes")),
            distinct_from=_id_set(data.get("distinct_from"), "metadata.distinct_from"),
            citations=_citations(data.get("citations")),
            paths=_globs(data.get("paths")),
            proposal=proposal,
        )


MAX_LINKS = 64


def _id_set(value: Any, what: str) -> tuple[str, ...]:
    """A sorted, de-duplicated tuple of fact ids (None or [] -> ())."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_LINKS:
        raise InvalidFact(f"{what} must be a list of at most {MAX_LINKS} fact ids")
    return tuple(sorted({check_id(v, what) for v in value}))


def _possible_links(value: Any) -> tuple[dict, ...]:
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
                clean[key] = float(_number(link, key, 0.0, -1.0, 2.0))
        evidence = link.get("evidence")
        if evidence:  # written only when some was found (store/evidence.py)
            clean["evidence"] = _evidence(evidence)
        judge = link.get("judge")
        if judge:     # a model's verdict on the pair (`git neo review --judge`)
            clean["judge"] = judge_verdict(judge)
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


def _citations(value: Any) -> tuple[dict, ...]:
    """Validated `citations`: each {"cited", "path", "symbol" | "span", "size", "blob", "fingerprint",
    "state", "since", "since_date", "commit", "moved_from"} with what is set."""
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
        for key, pattern in (("blob", _HEX), ("commit", _HEX), ("since", _HEX), ("fingerprint", _FINGERPRINT)):
            checked = _optional(citation, key, pattern)
            if checked is not None:
                clean[key] = checked
        state = citation.get("state", "verified")
        if state not in CITATION_STATES:
            raise InvalidFact(f"metadata.citations: invalid state {state!r}", f"use one of: {', '.join(CITATION_STATES)}")
        clean["state"] = state
        if citation.get("size") is not None:
            clean["size"] = int(_number(citation, "size", 0, 0, 10_000_000))
        for key, limit in (("cited", MAX_PATH_CHARS + 600), ("since_date", 64), ("moved_from", MAX_PATH_CHARS + 600)):
            text = _opt_str(citation, key, limit)
            if text is not None:
                clean[key] = text
        out.append(clean)
    return tuple(out)


def _globs(value: Any) -> tuple[str, ...]:
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


def _evidence(value: Any) -> list[str]:
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
    at = _opt_str(value, "at", 64)
    if at:
        clean["at"] = at
    return clean


@dataclass(frozen=True)
class Fact:
    """One statement about a codebase, its kind, scope and place in the supersession chain."""

    id: str
    subject: str
    body: str
    kind: FactKind
    scope: FactScope
    org_id: str | None = None
    project_id: str | None = None
    is_valid: bool = True
    superseded_by: str | None = None
    supersedes: str | None = None
    depends_on: tuple[str, ...] = ()
    needs_review: bool = False
    tags: tuple[str, ...] = ()
    metadata: FactMetadata = field(default_factory=FactMetadata)

    @property
    def text(self) -> str:
        """What is embedded and counted for the token budget."""
        return f"{self.subject}\n{self.body}" if self.body else self.subject

    @property
    def tokens(self) -> int:
        """Approximate size in tokens (len/4, at least 1)."""
        return max(1, (len(self.subject) + len(self.body) + 1) // 4)

    @property
    def is_protected(self) -> bool:
        """Constraints and seed/community/synthesized facts are never evicted by caps."""
        return self.kind is FactKind.CONSTRAINT or bool(PROTECTED_TAGS.intersection(self.tags))

    def evolve(self, **changes: Any) -> "Fact":
        """A copy with *changes*; `metadata` may be given as a dict of metadata changes."""
        meta = changes.pop("metadata", None)
        if isinstance(meta, Mapping):
            changes["metadata"] = replace(self.metadata, **meta)
        elif meta is not None:
            changes["metadata"] = meta
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """Exactly the JSON stored on the ref."""
        return {
            "id": self.id, "subject": self.subject, "body": self.body,
            "kind": self.kind.value, "scope": self.scope.value,
            "org_id": self.org_id, "project_id": self.project_id,
            "is_valid": self.is_valid, "superseded_by": self.superseded_by,
            "supersedes": self.supersedes, "depends_on": list(self.depends_on),
            "needs_review": self.needs_review, "tags": list(self.tags),
            "metadata": self.metadata.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any) -> "Fact":
        """Validate untrusted input and build a Fact (raises InvalidFact)."""
        if not isinstance(data, Mapping):
            raise InvalidFact(f"a fact must be a JSON object, not {type(data).__name__}")
        depends = data.get("depends_on") or []
        tags = data.get("tags") or []
        if not isinstance(depends, list) or not isinstance(tags, list):
            raise InvalidFact("depends_on and tags must be lists")
        fact_id = check_id(data.get("id"))
        superseded_by = None if data.get("superseded_by") is None else check_id(data["superseded_by"], "superseded_by")
        supersedes = None if data.get("supersedes") is None else check_id(data["supersedes"], "supersedes")
        depends_on = tuple(dict.fromkeys(check_id(d, "depends_on id") for d in depends))
        if fact_id in (superseded_by, supersedes) or fact_id in depends_on:
            # A fact pointing at itself would make `restore` rewrite it twice in one change.
            raise InvalidFact(f"fact {fact_id} points at itself (superseded_by, supersedes or depends_on)")
        return cls(
            id=fact_id,
            subject=check_text("subject", data.get("subject"), MAX_SUBJECT_CHARS, required=True),
            body=check_text("body", data.get("body") or "", MAX_BODY_CHARS),
            kind=parse_kind(data.get("kind")),
            scope=parse_scope(data.get("scope")),
            org_id=_opt_str(data, "org_id", 256),
            project_id=_opt_str(data, "project_id", 256),
            is_valid=_flag(data, "is_valid", True),
            superseded_by=superseded_by,
            supersedes=supersedes,
            depends_on=depends_on,
            needs_review=_flag(data, "needs_review", False),
            tags=_check_tags(tags),
            metadata=FactMetadata.from_dict(data.get("metadata")),
        )


def canonical_json(fact: Fact) -> bytes:
    """The stored form: sorted keys, 2-space indent, UTF-8, trailing newline."""
    return (json.dumps(fact.to_dict(), sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def fact_from_json(data: bytes | str, origin: str = "fact") -> Fact:
    """Parse and validate one stored fact; InvalidFact names *origin* on failure."""
    from neo_git import safejson

    try:
        return Fact.from_dict(safejson.loads(data, max_depth=None))  # from_dict keeps no nested value
    except InvalidFact as exc:
        raise InvalidFact(f"{origin}: {exc.message}", exc.hint) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidFact(f"{origin}: not valid JSON ({exc})") from None
