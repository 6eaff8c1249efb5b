"""Citation states, and what they make of a fact (recall, ranking and the fact table read this;
the states are `fact_schema.CITATION_STATES`, a citation's `label` and `key` are
`fact_schema.Citation`'s). Resolving and verifying citations against code is the citations
feature's work (`neo_git/citations/`), which writes these states through the store.

verified   the cited code's fingerprint is unchanged
moved      the same code is found under another path (git's rename detection), name or span;
           the citation is updated to point there (and is verified from then on)
changed    the symbol or file is there, its code differs
gone       the file or symbol is absent
unknown    the blob is not available here (a partial or shallow clone): never recorded, never
           counted as gone
"""
from __future__ import annotations

from typing import Any, Final

VERIFIED: Final = "verified"
MOVED: Final = "moved"
CHANGED: Final = "changed"
GONE: Final = "gone"
UNKNOWN: Final = "unknown"
STATES = (VERIFIED, MOVED, CHANGED, GONE, UNKNOWN)
BROKEN = frozenset({CHANGED, GONE})


def is_stale(fact: Any) -> bool:
    """A fact whose citations are all changed or gone: what it says about the code may no longer hold."""
    citations = fact.metadata.citations
    return bool(citations) and all(c.state in BROKEN for c in citations)


def stale_since(fact: Any) -> dict | None:
    """For a stale fact: {"since": the commit that broke its last citation (when known),
    "date": that commit's date}; None for a fact that is not stale."""
    if not is_stale(fact):
        return None
    latest = max(fact.metadata.citations, key=lambda c: c.since_date or "")
    return {"since": latest.since, "date": latest.since_date}


def stale_note(fact: Any) -> str | None:
    """"cited code changed since <date>" for a stale fact, else None (how every view marks it)."""
    since = stale_since(fact)
    if since is None:
        return None
    when = (since.get("date") or "")[:10] or (since.get("since") or "")[:12] or "an unknown commit"
    return f"cited code changed since {when}"
