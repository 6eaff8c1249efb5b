"""The field-by-field merge of one fact changed on both sides of a sync (pure: no git, no I/O).

`merge_fact(base, ours, theirs)` works on `Fact.to_dict()` keys, so fields other
people add to the fact later merge without touching this module. Every rule is
*symmetric* (swapping ours and theirs gives the same fact) and depends only on
the three values, so two clones that merge the same pair in either direction
write the same blob, and every clone converges.

Each key first takes the ordinary 3-way answer: if only one side changed it since
the base, that side's value. Only when both sides changed it differently does the
key's rule below decide (`merge rules` in the README lists them):

| key | both sides changed it |
|---|---|
| `is_valid`, `superseded_by`, `metadata.invalidation` (one group) | invalidation wins and keeps its own `superseded_by` and reason; both invalid: a supersession beats a plain retraction, then the earlier `invalidation.at`, then the smaller successor id |
| `metadata.success_count`, `metadata.access_count` | base + Δours + Δtheirs (never below 0); without a base, the larger |
| `metadata.confidence` | base + Δours + Δtheirs clamped to [0, 1], rounded to 6 places; without a base, the larger |
| `needs_review` | true if either side says true |
| `tags`, `depends_on`, and any other list (an absent one counts as empty) | set merge: base order first, then additions from either side sorted; an item one side removed since the base stays removed |
| `metadata.citations` | per citation (keyed by how it was cited): the side that changed it, else a fixed pick; base order, then additions sorted |
| `metadata.created_at` | the earlier |
| `metadata.last_accessed` | the later |
| `supersedes` | a value beats none, then the smaller id |
| any object (unknown ones included) | merged key by key with these same rules |
| anything else (text, numbers, unknown keys) | a value beats none; two numbers: the larger; else the value whose canonical JSON sorts last |
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from neo_git.errors import InvalidFact
from neo_git.facts import Fact

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
_STATE = ("is_valid", "superseded_by")   # merged as one group with metadata.invalidation


def canonical(value: Any) -> str:
    """The sort key that makes every choice deterministic: canonical JSON."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def merge_fact(base: Fact | None, ours: Fact, theirs: Fact) -> Fact:
    """The fact both clones agree on when *ours* and *theirs* changed *base* (None: both added it)."""
    if ours == theirs:
        return ours
    o, t = ours.to_dict(), theirs.to_dict()
    b = base.to_dict() if base is not None else MISSING
    if b == o:
        return theirs
    if b == t:
        return ours
    merged = merge_fact_dicts(b, o, t)
    try:
        return Fact.from_dict(merged)
    except InvalidFact:
        # The combination broke a limit (e.g. more than 32 tags): keep one side whole,
        # chosen symmetrically, rather than invent a truncation.
        return ours if canonical(o) >= canonical(t) else theirs


def merge_fact_dicts(b: Any, o: dict, t: dict) -> dict:
    """`merge_fact` on `to_dict()` forms (*b* is MISSING when there is no base)."""
    base = b if isinstance(b, dict) else {}
    merged = _merge_object(base if b is not MISSING else MISSING, o, t, _TOP_RULES, skip=_STATE + ("metadata",))
    base_meta = base.get("metadata", MISSING) if b is not MISSING else MISSING
    merged["metadata"] = _merge_object(base_meta, o.get("metadata") or {}, t.get("metadata") or {},
                                       _META_RULES, skip=("invalidation",))
    state = _merge_state(_state_of(b) if b is not MISSING else MISSING, _state_of(o), _state_of(t))
    merged["is_valid"], merged["superseded_by"], merged["metadata"]["invalidation"] = state
    return merged


def three_way(b: Any, o: Any, t: Any, conflict: Callable[[Any, Any, Any], Any]) -> Any:
    """The side that changed since *b*; *conflict(b, o, t)* when both changed differently."""
    if o == t:
        return o
    if b is not MISSING:
        if o == b:
            return t
        if t == b:
            return o
    return conflict(b, o, t)


def _merge_object(b: Any, o: dict, t: dict, rules: dict, skip: tuple[str, ...] = ()) -> dict:
    base = b if isinstance(b, dict) else {}
    out = {}
    for key in sorted(set(o) | set(t)):
        if key in skip:
            continue
        bv = base.get(key, MISSING) if b is not MISSING else MISSING
        value = three_way(bv, o.get(key, MISSING), t.get(key, MISSING), rules.get(key, merge_default))
        if value is not MISSING:
            out[key] = value
    return out


def _state_of(d: dict) -> tuple:
    return (d.get("is_valid", True), d.get("superseded_by"), (d.get("metadata") or {}).get("invalidation"))


def _merge_state(b: Any, o: tuple, t: tuple) -> tuple:
    def conflict(_b, o, t):
        if o[0] != t[0]:
            return t if o[0] else o          # invalidation wins, with its own pointer and reason
        if o[0]:                             # both valid, differing only in leftovers: any fixed pick
            return max(o, t, key=canonical)

        def rank(state):  # smallest wins: a supersession, then the earliest, then the smaller id
            reason = state[2] if isinstance(state[2], dict) else {}
            return (state[1] is None, str(reason.get("at") or "~"), state[1] or "", canonical(state[2]))
        return min(o, t, key=rank)
    return tuple(three_way(b, o, t, conflict))


def counter(b: Any, o: Any, t: Any) -> Any:
    """Both sides counted since the base: add both increments, never below zero."""
    if not _is_number(o) or not _is_number(t):
        return merge_default(b, o, t)
    if not _is_number(b):
        return max(o, t)
    return max(0, o + t - b)


def confidence(b: Any, o: Any, t: Any) -> Any:
    """Both sides moved confidence: apply both moves (o + t - b is exact-symmetric in floats)."""
    if not _is_number(o) or not _is_number(t):
        return merge_default(b, o, t)
    if not _is_number(b):
        return max(o, t)
    return min(1.0, max(0.0, round((o + t) - b, 6)))


def set_merge(b: Any, o: Any, t: Any) -> list:
    """Lists as sets: base order kept, additions from either side (sorted), removals honoured."""
    base = b if isinstance(b, list) else []
    ours = o if isinstance(o, list) else []
    theirs = t if isinstance(t, list) else []
    o_keys, t_keys = {canonical(x) for x in ours}, {canonical(x) for x in theirs}
    out, seen = [], set()
    for item in base:
        key = canonical(item)
        if key in o_keys and key in t_keys and key not in seen:
            out.append(item)
            seen.add(key)
    base_keys = {canonical(x) for x in base}
    added = {canonical(x): x for x in (*ours, *theirs) if canonical(x) not in base_keys}
    for key in sorted(added):
        if key not in seen:
            out.append(added[key])
            seen.add(key)
    return out


def keyed_merge(key: Callable[[Any], str]) -> Callable[[Any, Any, Any], list]:
    """Lists of objects with an identity (*key*): each object merged 3-way on its own (the side that
    changed it wins; both changed: the one whose canonical JSON sorts last), removals honoured."""
    def merge(b: Any, o: Any, t: Any) -> list:
        lists = [v if isinstance(v, list) else [] for v in (b, o, t)]
        base, ours, theirs = ({key(x): x for x in items if isinstance(x, dict)} for items in lists)
        order = [k for k in base] + sorted((set(ours) | set(theirs)) - set(base))
        out = []
        for k in order:
            value = three_way(base.get(k, MISSING), ours.get(k, MISSING), theirs.get(k, MISSING),
                              lambda _b, x, y: max((v for v in (x, y) if v is not MISSING), key=canonical)
                              if (x is MISSING) == (y is MISSING) else (y if x is MISSING else x))
            if value is not MISSING:
                out.append(value)
        return out
    return merge


def either_true(b: Any, o: Any, t: Any) -> Any:
    """A flag raised on either side stays raised."""
    return bool(o is True or t is True)


def earliest(b: Any, o: Any, t: Any) -> Any:
    """The earlier timestamp (ISO 8601 strings of one format sort in time order)."""
    values = [v for v in (o, t) if isinstance(v, str)]
    return min(values) if values else merge_default(b, o, t)


def latest(b: Any, o: Any, t: Any) -> Any:
    """The later timestamp."""
    values = [v for v in (o, t) if isinstance(v, str)]
    return max(values) if values else merge_default(b, o, t)


def smallest_id(b: Any, o: Any, t: Any) -> Any:
    """A pointer beats none; two pointers: the smaller id."""
    values = [v for v in (o, t) if v is not None and v is not MISSING]
    return min(values, key=canonical) if values else merge_default(b, o, t)


def merge_default(b: Any, o: Any, t: Any) -> Any:
    """The rule for every key without its own: objects key by key, lists as sets, else a fixed pick."""
    if isinstance(o, dict) and isinstance(t, dict):
        return _merge_object(b if isinstance(b, dict) else MISSING, o, t, {})
    if (isinstance(o, list) or isinstance(t, list)) and all(
            v is MISSING or v is None or isinstance(v, list) for v in (o, t)):
        return set_merge(b, o, t)   # an absent list is an empty one (to_dict leaves empty ones out)
    present = [v for v in (o, t) if v is not None and v is not MISSING]
    if len(present) == 1:
        return present[0]          # a value beats none: nothing set on one side is lost
    if not present:
        return None if (o is None or t is None) else MISSING
    if _is_number(o) and _is_number(t):
        return max(o, t)
    return max(o, t, key=canonical)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_TOP_RULES: dict[str, Callable] = {
    "needs_review": either_true,
    "tags": set_merge,
    "depends_on": set_merge,
    "supersedes": smallest_id,
}
_META_RULES: dict[str, Callable] = {
    "success_count": counter,
    "access_count": counter,
    "confidence": confidence,
    "created_at": earliest,
    "last_accessed": latest,
    "citations": keyed_merge(lambda c: str(c.get("cited") or c.get("path"))),
}
