"""Printing helpers shared by the commands: JSON, fact lines, warnings."""
from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from neo_git.visible import visible  # the commands import it from here too

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.fact_schema import Citation


def print_json(value: Any) -> None:
    """Pretty, stable JSON on stdout."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def warn(lines: Iterable[str]) -> None:
    """`warning: …` lines on stderr."""
    for line in lines:
        print(f"warning: {visible(line)}", file=sys.stderr)


def score_label(score: float) -> str:
    """`[0.46]`, or `[ ? ]` for a score that is not a finite number (never `[nan]`)."""
    if not isinstance(score, (int, float)) or not math.isfinite(score):
        return "[ ? ]"
    return f"[{score:.2f}]"


def fact_line(fact) -> str:
    """One line per fact: id, kind, scope, state, subject."""
    state = "" if fact.is_valid else f" [superseded by {fact.superseded_by[:8]}]" if fact.superseded_by \
        else " [invalid]"
    review = " [needs review]" if fact.needs_review else ""
    if fact.metadata.proposal:
        review += " [proposed by an agent]"
    return f"{fact.id}  {fact.kind.value:<13} {fact.scope.value:<8} {visible(fact.subject)}{state}{review}{stale_mark(fact)}"


def stale_mark(fact) -> str:
    """` [stale: cited code changed since <date>]` for a stale fact, else ''."""
    from neo_git.citation_states import stale_note

    note = stale_note(fact)
    return f" [stale: {note}]" if note else ""


def cite_row(citation: Citation) -> str:
    """`path:symbol (state since <commit>)` for `show`."""
    since = f" since {citation.since[:12]}" if citation.since else ""
    return f"{citation.label} ({citation.state}{since})"


def fact_block(fact, claim: str | None = None) -> str:
    """A fact in full, for `show`. *claim*: how the author of a claim is known (its
    `metadata.author` is then only what the fact says about itself, and is marked so)."""
    meta = fact.metadata
    rows = [
        ("Kind", fact.kind.value),
        ("Scope", fact.scope.value),
        ("State", ("valid" if fact.is_valid else "not valid") + (" (needs review)" if fact.needs_review else "")
         + (" (proposed by an agent: `git neo review accept|reject`)" if meta.proposal else "")
         + stale_mark(fact)),
        ("Provenance", meta.provenance),
        ("Author", meta.author if claim is None else
         f"{meta.author or '?'} (self-declared, not verified; {claim})"),
        ("Created", meta.created_at),
        ("Confidence", f"{meta.confidence:.2f}   successes: {meta.success_count}   accessed: {meta.access_count}"),
    ]
    rows += [(label, value) for label, value in (
        ("Supersedes", fact.supersedes), ("Superseded by", fact.superseded_by),
        ("Depends on", ", ".join(fact.depends_on)), ("Tags", ", ".join(fact.tags)),
        ("Source file", meta.source_file), ("Paths", ", ".join(meta.paths))) if value]
    rows += [("Cites", cite_row(citation)) for citation in meta.citations]
    width = max(len(label) for label, _ in rows) + 2     # every value starts in one column
    lines = [f"fact {fact.id}"] + [f"{label + ':':<{width}}{visible(str(value))}" for label, value in rows]
    lines += ["", f"    {visible(fact.subject)}"]
    if fact.body:
        lines += [""] + [f"    {visible(line)}" for line in fact.body.splitlines()]
    return "\n".join(lines)
