"""The structured values a fact's metadata holds, typed: why it is no longer valid
(`Invalidation`, with what a restore undoes, `Undo`), the facts it may replace (`PossibleLink`,
with a review judge's `JudgeVerdict` and the review evidence), and the code it cites
(`Citation`).

Each is a frozen dataclass read from the fact's JSON with `from_json` (input from anywhere: a
teammate's push, an imported file; `InvalidFact` on what cannot be one) and written back with
`to_json`, which gives the JSON it was read from, so a fact rewritten by this release keeps its
bytes (and its blob id). Links and citations are validated strictly and held in their clean
form. An invalidation has always been a free-form record: a key this release does not know, or
a known key whose value is not of its type, is kept as it was read (`other`), and a key written
as null stays null (`nulls`: the write policy records `"similarity": null` for an explicit
supersession).

`cache_form` and `from_cache` give the plain tuples the parse cache keeps (`store/subtree.py`).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from neo_git.errors import InvalidFact
from neo_git.fact_fields import (
    MAX_LINKS,
    MAX_PATH_CHARS,
    check_id,
    check_number,
    check_repo_path,
    check_text,
    optional_text,
)
from neo_git.safejson import check_depth

JsonObject = dict[str, Any]

# --- review evidence ----------------------------------------------------------------------------

# The names of what, beyond a cosine, says a newer fact may replace an older one (`store/evidence.py`
# defines them); names a newer release adds are kept as they are.
Evidence = tuple[str, ...]
MAX_EVIDENCE = 8
_EVIDENCE_NAME = re.compile(r"^[a-z][a-z_]{0,31}$")


def evidence_from_json(value: Any) -> Evidence:
    """Evidence names, de-duplicated in order (a list of at most MAX_EVIDENCE lower-case names)."""
    if not isinstance(value, list) or len(value) > MAX_EVIDENCE or \
            not all(isinstance(v, str) and _EVIDENCE_NAME.match(v) for v in value):
        raise InvalidFact(f"metadata.possibly_supersedes evidence must be a list of at most {MAX_EVIDENCE} "
                          "lower-case names")
    return tuple(dict.fromkeys(value))


# --- a review judge's verdict -------------------------------------------------------------------

JUDGE_VERDICTS = ("updated", "distinct", "contradicts")
MAX_JUDGE_REASON = 300
Verdict = Literal["updated", "distinct", "contradicts"]


@dataclass(frozen=True)
class JudgeVerdict:
    """A model's verdict on a possible supersession (`git neo review --judge`)."""

    verdict: Verdict
    reason: str = ""
    model: str = ""
    at: str | None = None     # when it was given (ISO 8601)

    @classmethod
    def from_json(cls, value: Any) -> JudgeVerdict:
        """{"verdict", "reason", "model", "at"}, validated (InvalidFact)."""
        if not isinstance(value, Mapping):
            raise InvalidFact("metadata.possibly_supersedes judge must be an object")
        verdict = value.get("verdict")
        if verdict not in JUDGE_VERDICTS:
            raise InvalidFact(f"invalid judge verdict {verdict!r}", f"use one of: {', '.join(JUDGE_VERDICTS)}")
        return cls(verdict, check_text("judge reason", value.get("reason") or "", MAX_JUDGE_REASON),
                   check_text("judge model", value.get("model") or "", 200), optional_text(value, "at", 64) or None)

    def to_json(self) -> JsonObject:
        """The stored form (`at` only when set)."""
        out: JsonObject = {"verdict": self.verdict, "reason": self.reason, "model": self.model}
        if self.at:
            out["at"] = self.at
        return out


# --- possible supersessions ---------------------------------------------------------------------


@dataclass(frozen=True)
class PossibleLink:
    """A fact this one may replace, for a person (or the review judge) to decide; nothing was
    retired for it. Written on the newer fact's `metadata.possibly_supersedes`."""

    id: str                              # the older fact
    similarity: float | None = None      # cosine of the two texts
    threshold: float | None = None       # the review threshold it passed
    evidence: Evidence = ()              # what the newer text says about the older one (store/evidence.py)
    judge: JudgeVerdict | None = None    # a model's verdict on the pair
    restored: bool = False               # a person restored the older fact this link had retired

    @classmethod
    def from_json(cls, value: Any) -> PossibleLink:
        """One link, validated (InvalidFact); numbers become floats."""
        if not isinstance(value, Mapping):
            raise InvalidFact("metadata.possibly_supersedes entries must be objects")
        numbers = {key: float(check_number(value, key, 0.0, -1.0, 2.0))
                   for key in ("similarity", "threshold") if value.get(key) is not None}
        evidence = value.get("evidence")
        judge = value.get("judge")
        return cls(check_id(value.get("id"), "metadata.possibly_supersedes id"), numbers.get("similarity"),
                   numbers.get("threshold"), evidence_from_json(evidence) if evidence else (),
                   JudgeVerdict.from_json(judge) if judge else None, value.get("restored") is True)

    def to_json(self) -> JsonObject:
        """The stored form: `id`, and each other key only when it says something."""
        out: JsonObject = {"id": self.id}
        if self.similarity is not None:
            out["similarity"] = self.similarity
        if self.threshold is not None:
            out["threshold"] = self.threshold
        if self.evidence:
            out["evidence"] = list(self.evidence)
        if self.judge is not None:
            out["judge"] = self.judge.to_json()
        if self.restored:
            out["restored"] = True
        return out


def links_from_json(value: Any) -> tuple[PossibleLink, ...]:
    """`metadata.possibly_supersedes`: one link per id (the last given), sorted by id."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_LINKS:
        raise InvalidFact(f"metadata.possibly_supersedes must be a list of at most {MAX_LINKS} links")
    links = {link.id: link for link in map(PossibleLink.from_json, value)}
    return tuple(links[i] for i in sorted(links))


def sorted_links(links: Sequence[PossibleLink]) -> tuple[PossibleLink, ...]:
    """*links* sorted by id, the last one per id kept (the order `possibly_supersedes` is held in)."""
    by_id = {link.id: link for link in links}
    return tuple(by_id[i] for i in sorted(by_id))


# --- citations ----------------------------------------------------------------------------------

MAX_CITATIONS = 32
CitationState = Literal["verified", "moved", "changed", "gone", "unknown"]
CITATION_STATES: tuple[CitationState, ...] = ("verified", "moved", "changed", "gone", "unknown")
_HEX = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_FINGERPRINT = re.compile(r"^[0-9a-f]{8,64}$")
_SYMBOL = re.compile(r"^[^\s:]{1,512}$")


@dataclass(frozen=True)
class Citation:
    """Code a fact cites (`metadata.citations`; the citations feature resolves and re-checks it)."""

    path: str                            # relative to the repository root, '/'-separated
    state: CitationState = "verified"
    symbol: str | None = None            # `Class.method`, or …
    span: tuple[int, int] | None = None  # … [first line, last line], 1-based
    cited: str | None = None             # how it was cited (`path:symbol`), the key sync merges by
    size: int | None = None              # lines of the cited code when it was checked
    blob: str | None = None              # the blob it was checked against
    fingerprint: str | None = None       # of the cited code (citations/fingerprint.py)
    commit: str | None = None            # the commit it was checked at
    since: str | None = None             # the commit that moved, changed or removed the code
    since_date: str | None = None
    moved_from: str | None = None        # what it was cited as before a move
    weighed: str | None = None           # the `since` of a gone citation upkeep already lowered the fact for

    @classmethod
    def from_json(cls, value: Any) -> Citation:
        """One citation, validated (InvalidFact)."""
        if not isinstance(value, Mapping):
            raise InvalidFact("metadata.citations entries must be objects")
        path = check_repo_path(value.get("path"), "metadata.citations path")
        symbol, span = value.get("symbol"), value.get("span")
        if symbol is not None and (not isinstance(symbol, str) or not _SYMBOL.match(symbol)):
            raise InvalidFact(f"metadata.citations: invalid symbol {symbol!r}")
        if span is not None:
            if (symbol is not None or not isinstance(span, list) or len(span) != 2
                    or not all(isinstance(n, int) and not isinstance(n, bool) for n in span)
                    or not 1 <= span[0] <= span[1] <= 10_000_000):
                raise InvalidFact(f"metadata.citations: invalid span {span!r}",
                                  "a span is [first line, last line], 1-based, on a citation without a symbol")
        hexes = {key: _matching(value, key, pattern) for key, pattern in
                 (("blob", _HEX), ("commit", _HEX), ("since", _HEX), ("weighed", _HEX), ("fingerprint", _FINGERPRINT))}
        state = value.get("state", "verified")
        if state not in CITATION_STATES:
            raise InvalidFact(f"metadata.citations: invalid state {state!r}", f"use one of: {', '.join(CITATION_STATES)}")
        size = None if value.get("size") is None else int(check_number(value, "size", 0, 0, 10_000_000))
        return cls(path, state, symbol, None if span is None else (span[0], span[1]),
                   optional_text(value, "cited", MAX_PATH_CHARS + 600), size, hexes["blob"], hexes["fingerprint"],
                   hexes["commit"], hexes["since"], optional_text(value, "since_date", 64),
                   optional_text(value, "moved_from", MAX_PATH_CHARS + 600), hexes["weighed"])

    def to_json(self) -> JsonObject:
        """The stored form: `path` and `state`, and each other key that is set."""
        out: JsonObject = {"path": self.path, "state": self.state}
        for key in _CITATION_OPTIONAL:
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if key == "span" else value
        return out

    @property
    def label(self) -> str:
        """`path`, `path:symbol` or `path:start-end`, as a person would cite it."""
        if self.symbol:
            return f"{self.path}:{self.symbol}"
        if self.span:
            return f"{self.path}:{self.span[0]}-{self.span[1]}"
        return self.path

    @property
    def key(self) -> str:
        """What identifies a citation across moves and re-anchoring: how it was cited."""
        return self.cited or self.label


_CITATION_OPTIONAL = ("symbol", "span", "cited", "size", "blob", "fingerprint", "commit", "since", "since_date",
                      "moved_from", "weighed")


def _matching(value: Mapping[str, Any], key: str, pattern: re.Pattern[str]) -> str | None:
    text = value.get(key)
    if text is None:
        return None
    if not isinstance(text, str) or not pattern.match(text):
        raise InvalidFact(f"metadata.citations: invalid {key} {text!r}")
    return text


def citations_from_json(value: Any) -> tuple[Citation, ...]:
    """`metadata.citations`, in the order given."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_CITATIONS:
        raise InvalidFact(f"metadata.citations must be a list of at most {MAX_CITATIONS} citations")
    return tuple(map(Citation.from_json, value))


# --- invalidation -------------------------------------------------------------------------------

INVALIDATION_DEPTH = 6
# Why a fact left: a successor replaced it ("superseded", "synthesized") or it was retracted
# ("invalidated" by hand, "evicted" by a scope cap, "pruned" or "retired" by upkeep and ingest,
# "rejected": an agent's proposal a person turned down). Other names are kept as read.
Reason = str


def _same_json(a: Any, b: Any) -> bool:
    """Are *a* and *b* the same stored JSON? Equal, and of the same types throughout (1 == 1.0 and
    True == 1 in Python, not in JSON)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same_json, a, b))
    return bool(a == b)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Undo:
    """What a restore of a superseded fact undoes (`invalidation.undo`): its successor's confidence
    as it was, the dependents flagged for review, the successor's link when the supersession was
    accepted from review."""

    confidence: float | None = None               # the successor's confidence before the supersession
    carried: float | None = None                  # what it was raised to (put back only while unchanged)
    flagged: tuple[str, ...] | None = None        # dependents flagged for review
    possible: PossibleLink | None = None          # the successor's link to the retired fact
    nulls: frozenset[str] = frozenset()           # keys read (and written) as null
    other: Mapping[str, Any] = field(default_factory=dict)   # as read: unknown keys, values not of their type

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Undo:
        """Leniently: a value that is not of its key's type is kept as read, in `other`."""
        typed: dict[str, Any] = {}
        other = {key: item for key, item in value.items() if key not in _UNDO_KEYS}
        for key in _UNDO_KEYS:
            if key not in value:
                continue
            item = value[key]
            if item is None:
                continue
            if key in ("confidence", "carried") and _is_number(item):
                typed[key] = item
            elif key == "flagged" and isinstance(item, list) and all(isinstance(i, str) for i in item):
                typed[key] = tuple(item)
            elif key == "possible" and (link := _link_as_read(item)) is not None:
                typed[key] = link
            else:
                other[key] = item
        return cls(**typed, nulls=frozenset(k for k in _UNDO_KEYS if k in value and value[k] is None), other=other)

    def to_json(self) -> JsonObject:
        """The stored form: every key as it was read or set."""
        out: JsonObject = dict(self.other)
        if self.confidence is not None:
            out["confidence"] = self.confidence
        if self.carried is not None:
            out["carried"] = self.carried
        if self.flagged is not None:
            out["flagged"] = list(self.flagged)
        if self.possible is not None:
            out["possible"] = self.possible.to_json()
        out.update((key, None) for key in self.nulls if key not in out)
        return out


_UNDO_KEYS = ("confidence", "carried", "flagged", "possible")


def _link_as_read(value: Any) -> PossibleLink | None:
    """*value* as a link when it is exactly one in its stored form, else None (kept as read)."""
    try:
        link = PossibleLink.from_json(value)
    except InvalidFact:
        return None
    return link if _same_json(link.to_json(), value) else None


@dataclass(frozen=True)
class Invalidation:
    """Why a fact is no longer valid (`metadata.invalidation`; None while it is valid)."""

    reason: Reason | None = None
    at: str | None = None             # when (ISO 8601)
    by: str | None = None             # the successor, for a supersession
    rule: str | None = None           # the rule that retired it (store/supersession.py RULE_*, "conflict", …)
    explicit: bool | None = None      # the successor named it (`--supersedes`, a person's choice)
    similarity: float | None = None   # cosine of the two texts
    threshold: float | None = None    # the threshold it passed
    embedder: str | None = None       # whose cosine
    evidence: Evidence | None = None  # what the successor's text says about it (store/evidence.py)
    detail: str | None = None         # in words, for `git neo why`
    undo: Undo | None = None          # what a restore undoes
    nulls: frozenset[str] = frozenset()                      # keys written as null
    other: Mapping[str, Any] = field(default_factory=dict)   # as read: unknown keys, values not of their type

    @classmethod
    def written(cls, **values: Any) -> Invalidation:
        """An invalidation that writes every key given, a None as null: the write policy's
        supersession record keeps the same keys whether or not a cosine was involved."""
        return cls(**{k: v for k, v in values.items() if v is not None},
                   nulls=frozenset(k for k, v in values.items() if v is None))

    @classmethod
    def from_json(cls, value: Any) -> Invalidation:
        """Leniently, but shallow (a value nested deeper than INVALIDATION_DEPTH would overflow the
        stack when written back) and with numbers where `why` formats them (InvalidFact)."""
        if not isinstance(value, Mapping):
            raise InvalidFact("metadata.invalidation must be an object or null")
        try:
            check_depth(dict(value), INVALIDATION_DEPTH)
        except ValueError:
            raise InvalidFact(f"metadata.invalidation is nested more than {INVALIDATION_DEPTH} levels deep") from None
        for key in ("similarity", "threshold"):
            number = value.get(key)
            if number is not None and not _is_number(number):
                raise InvalidFact(f"metadata.invalidation.{key} must be a number, not {number!r}")
        typed: dict[str, Any] = {}
        other = {key: item for key, item in value.items() if key not in _INVALIDATION_TYPES}
        for key, kind in _INVALIDATION_TYPES.items():
            item = value.get(key)
            if item is None:
                continue
            if kind is str and isinstance(item, str) or kind is bool and isinstance(item, bool) \
                    or kind is float and _is_number(item):
                typed[key] = item
            elif kind is tuple and isinstance(item, list) and all(isinstance(i, str) for i in item):
                typed[key] = tuple(item)
            elif kind is Undo and isinstance(item, Mapping):
                typed[key] = Undo.from_json(item)
            else:
                other[key] = item
        nulls = frozenset(k for k in _INVALIDATION_TYPES if k in value and value[k] is None)
        return cls(**typed, nulls=nulls, other=other)

    def to_json(self) -> JsonObject:
        """The stored form: every key as it was read or set."""
        out: JsonObject = dict(self.other)
        for key, kind in _INVALIDATION_TYPES.items():
            value = getattr(self, key)
            if value is None:
                continue
            out[key] = list(value) if kind is tuple else value.to_json() if kind is Undo else value
        out.update((key, None) for key in self.nulls if key not in out)
        return out


_INVALIDATION_TYPES: dict[str, Any] = {
    "reason": str, "at": str, "by": str, "rule": str, "explicit": bool, "similarity": float, "threshold": float,
    "embedder": str, "evidence": tuple, "detail": str, "undo": Undo,
}


# --- the parse cache's form -----------------------------------------------------------------------

_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls)) for cls in (JudgeVerdict, PossibleLink, Citation, Undo, Invalidation)}
_new = object.__new__
_set = object.__setattr__


def cache_signature() -> str:
    """The field layout of every class here: part of the parse cache's format."""
    return ";".join(f"{cls.__name__}:{','.join(names)}" for cls, names in _FIELDS.items())


def cache_form(value: Any) -> Any:
    """*value* (one of these classes, a tuple of them, or None) as plain tuples marshal keeps."""
    if isinstance(value, tuple):
        return tuple(cache_form(item) for item in value)
    cls = type(value)
    names = _FIELDS.get(cls)
    if names is None:
        return value
    return tuple(cache_form(value.__dict__[name]) for name in names)


def from_cache(cls: type, form: Any) -> Any:
    """The object `cache_form` gave *form* for (trusted: the cache holds validated facts); built
    without `__init__`, as `store/subtree.py` builds facts."""
    if form is None:
        return None
    names = _FIELDS[cls]
    values = dict(zip(names, form))
    for name, inner in _NESTED.get(cls, ()):
        if values[name] is not None:
            values[name] = from_cache(inner, values[name])
    obj: Any = _new(cls)
    _set(obj, "__dict__", values)
    return obj


_NESTED: dict[type, tuple[tuple[str, type], ...]] = {
    PossibleLink: (("judge", JudgeVerdict),), Undo: (("possible", PossibleLink),), Invalidation: (("undo", Undo),)}


def links_from_cache(form: Any) -> tuple[PossibleLink, ...]:
    """`possibly_supersedes` from its cache form."""
    return tuple(from_cache(PossibleLink, item) for item in form)


def citations_from_cache(form: Any) -> tuple[Citation, ...]:
    """`citations` from its cache form."""
    return tuple(from_cache(Citation, item) for item in form)

