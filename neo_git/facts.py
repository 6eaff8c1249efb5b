"""The fact: typed, scoped, supersession-aware, with canonical JSON (docs/architecture.md §2).

`Fact.to_dict()` is exactly what is stored on `refs/neo/facts` and in `~/.neo`;
`canonical_json()` gives the bytes (sorted keys, UTF-8, trailing newline), so
the same fact always has the same blob id. `Fact.from_dict()` validates input
from anywhere (a teammate's push, an imported file) and raises `InvalidFact`.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Literal, TypeVar

from neo_git.errors import InvalidFact
from neo_git.fact_fields import (
    check_flag,
    check_globs,
    check_id as check_id,  # re-exported
    check_id_set,
    check_number,
    check_tags,
    check_text as check_text,  # re-exported
    optional_text,
)
from neo_git.fact_schema import Citation, Invalidation, PossibleLink, citations_from_json, links_from_json

SCHEMA_VERSION = 1
MAX_SUBJECT_CHARS = 200
MAX_BODY_CHARS = 16_384
MAX_SOURCE_PROMPT_CHARS = 200


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
ProposalState = Literal["open"]   # metadata.proposal: an agent's fact no person accepted yet
PROPOSAL_STATES: tuple[ProposalState, ...] = ("open",)
PROTECTED_TAGS = frozenset({"seed", "community", "synthesized"})
SCOPE_ORDER = (FactScope.GLOBAL, FactScope.ORG, FactScope.PROJECT, FactScope.SESSION)


def now_iso() -> str:
    """The current time as ISO 8601 UTC, second precision."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def new_fact_id() -> str:
    """16 random hex digits."""
    import secrets  # with `random` and `base64` behind it: only a write needs them

    return secrets.token_hex(8)


_E = TypeVar("_E", bound=Enum)


def _parse_name(enum: type[_E], what: str, value: Any) -> _E:
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
    # Why the fact is no longer valid (reason, when, its successor, the rule…); None while valid.
    invalidation: Invalidation | None = None
    # Facts this one may replace, for review (`git neo review`), sorted by id; nothing was
    # retired for them.
    possibly_supersedes: tuple[PossibleLink, ...] = ()
    # Facts a person said are distinct from this one (a rejected review): never proposed again.
    distinct_from: tuple[str, ...] = ()
    # Code the fact cites, in the order given (docs/architecture.md §13; resolved and re-checked
    # by neo_git/citations/).
    citations: tuple[Citation, ...] = ()
    # Git pathspec globs the fact is limited to (`src/api/**`), as given.
    paths: tuple[str, ...] = ()
    # "open" while the fact is an agent's proposal no person has accepted (`git neo review`);
    # None otherwise (accepting clears it, so a sync merge of "accepted" and "open" converges).
    proposal: ProposalState | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form."""
        data: dict[str, Any] = {
            "created_at": self.created_at, "last_accessed": self.last_accessed,
            "access_count": self.access_count, "source_file": self.source_file,
            "source_prompt": self.source_prompt, "confidence": self.confidence,
            "success_count": self.success_count, "provenance": self.provenance,
            "author": self.author,
            "invalidation": None if self.invalidation is None else self.invalidation.to_json(),
        }
        # Written only when set, so facts that never had them keep their exact bytes (blob ids).
        if self.possibly_supersedes:
            data["possibly_supersedes"] = [link.to_json() for link in self.possibly_supersedes]
        if self.distinct_from:
            data["distinct_from"] = list(self.distinct_from)
        if self.citations:
            data["citations"] = [citation.to_json() for citation in self.citations]
        if self.paths:
            data["paths"] = list(self.paths)
        if self.proposal:
            data["proposal"] = self.proposal
        return data

    @classmethod
    def from_dict(cls, data: Any) -> FactMetadata:
        """Validate and build; unknown keys are ignored."""
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise InvalidFact("metadata must be an object")
        provenance = data.get("provenance", "observed")
        if provenance not in PROVENANCES:
            raise InvalidFact(f"invalid provenance {provenance!r}", f"use one of: {', '.join(PROVENANCES)}")
        prompt = data.get("source_prompt")
        if isinstance(prompt, str) and len(prompt) > MAX_SOURCE_PROMPT_CHARS:
            from neo_git.redact import redact  # before the cut: a token across it would keep most of itself

            prompt = redact(prompt)[:MAX_SOURCE_PROMPT_CHARS]
        invalidation = data.get("invalidation")
        if invalidation is not None and not isinstance(invalidation, Mapping):
            raise InvalidFact("metadata.invalidation must be an object or null")
        invalidation = Invalidation.from_json(invalidation) if invalidation else None
        proposal = data.get("proposal")
        if proposal is not None and proposal not in PROPOSAL_STATES:
            raise InvalidFact(f"invalid metadata.proposal {proposal!r}", "it is \"open\" or absent")
        return cls(
            created_at=optional_text(data, "created_at", 64) or now_iso(),
            last_accessed=optional_text(data, "last_accessed", 64),
            access_count=int(check_number(data, "access_count", 0, 0, 2**53)),
            source_file=optional_text(data, "source_file", 4096),
            source_prompt=None if prompt is None else check_text("source_prompt", prompt, MAX_SOURCE_PROMPT_CHARS),
            confidence=float(check_number(data, "confidence", 0.5, 0.0, 1.0)),
            success_count=int(check_number(data, "success_count", 0, 0, 2**53)),
            provenance=provenance,
            author=optional_text(data, "author", 512) or "unknown",
            invalidation=invalidation,
            possibly_supersedes=links_from_json(data.get("possibly_supersedes")),
            distinct_from=check_id_set(data.get("distinct_from"), "metadata.distinct_from"),
            citations=citations_from_json(data.get("citations")),
            paths=check_globs(data.get("paths")),
            proposal=proposal,
        )


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

    def evolve(self, **changes: Any) -> Fact:
        """A copy with *changes*; `metadata` may be given as a dict of metadata changes."""
        meta = changes.pop("metadata", None)
        if isinstance(meta, Mapping):
            changes["metadata"] = replace(self.metadata, **meta)
        elif meta is not None:
            changes["metadata"] = meta
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
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
    def from_dict(cls, data: Any) -> Fact:
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
            org_id=optional_text(data, "org_id", 256),
            project_id=optional_text(data, "project_id", 256),
            is_valid=check_flag(data, "is_valid", True),
            superseded_by=superseded_by,
            supersedes=supersedes,
            depends_on=depends_on,
            needs_review=check_flag(data, "needs_review", False),
            tags=check_tags(tags),
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


def redact_fact(fact: Fact, max_prompt: int = 200) -> Fact:
    """*fact* with every free text redacted: subject, body and what a person or tool wrote into
    its metadata (`source_prompt`, `author`, `invalidation`, e.g. its `detail`). The same fact
    object when nothing changes, so ids and bytes stay as they were."""
    from neo_git.redact import redact, redact_value

    meta = fact.metadata
    changes: dict[str, Any] = {}
    for key in ("source_prompt", "author"):
        value = getattr(meta, key, None)
        if isinstance(value, str) and value:
            red = redact(value)
            if red != value:
                changes[key] = red[:max_prompt] if key == "source_prompt" else red[:512]
    if meta.invalidation:
        stored = meta.invalidation.to_json()
        red = redact_value(stored)
        if red != stored:
            changes["invalidation"] = Invalidation.from_json(red)
    subject, body = redact(fact.subject), redact(fact.body)
    if not changes and subject == fact.subject and body == fact.body:
        return fact
    return fact.evolve(subject=subject, body=body, **({"metadata": changes} if changes else {}))
