"""Citation states, and what they make of a fact (standard library only: recall reads this).

verified   the cited code's fingerprint is unchanged
moved      the same code is found under another path (git's rename detection), name or span;
           the citation is updated to point there (and is verified from then on)
changed    the symbol or file is there, its code differs
gone       the file or symbol is absent
unknown    the blob is not available here (a partial or shallow clone): never recorded, never
           counted as gone
"""
from __future__ import annotations

from typing import Any

VERIFIED, MOVED, CHANGED, GONE, UNKNOWN = "verified", "moved", "changed", "gone", "unknown"
STATES = (VERIFIED, MOVED, CHANGED, GONE, UNKNOWN)
BROKEN = frozenset({CHANGED, GONE})


def is_stale(fact: Any) -> bool:
    """A fact whose citations are all changed or gone: what it says about the code may no longer hold."""
    citations = fact.metadata.citations
    return bool(citations) and all(c.get("state") in BROKEN for c in citations)


def stale_since(fact: Any) -> dict | None:
    """For a stale fact: {"since": the commit that broke its last citation (when known),
    "date": that commit's date}; None for a fact that is not stale."""
    if not is_stale(fact):
        return None
    latest = max(fact.metadata.citations, key=lambda c: str(c.get("since_date") or ""))
    return {"since": latest.get("since"), "date": latest.get("since_date")}


def stale_note(fact: Any) -> str | None:
    """"cited code changed since <date>" for a stale fact, else None (how every view marks it)."""
    since = stale_since(fact)
    if since is None:
        return None
    when = (since.get("date") or "")[:10] or (since.get("since") or "")[:12] or "an unknown commit"
    return f"cited code changed since {when}"


def label(citation: dict) -> str:
    """`path`, `path:symbol` or `path:start-end`, as a person would cite it."""
    if citation.get("symbol"):
        return f"{citation['path']}:{citation['symbol']}"
    span = citation.get("span")
    if span:
        return f"{citation['path']}:{span[0]}-{span[1]}"
    return str(citation.get("path"))


def citation_key(citation: dict) -> str:
    """What identifies a citation across moves and re-anchoring: how it was cited."""
    return str(citation.get("cited") or label(citation))
