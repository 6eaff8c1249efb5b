"""Printing helpers shared by the commands: JSON, fact lines, warnings."""
from __future__ import annotations

import json
import math
import sys
from typing import Any, Iterable

from neo_git.visible import visible  # noqa: F401 - the commands import it from here too


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
    return f"{fact.id}  {fact.kind.value:<13} {fact.scope.value:<8} {visible(fact.subject)}{state}{review}"


def fact_block(fact, claim: str | None = None) -> str:
    """A fact in full, for `show`. *claim*: how the author of a claim is known (its
    `metadata.author` is then only what the fact says about itself, and is marked so)."""
    meta = fact.metadata
    author = visible(meta.author) if claim is None else \
        f"{visible(meta.author or '?')} (self-declared, not verified; {visible(claim)})"
    lines = [
        f"fact {fact.id}",
        f"Kind:       {fact.kind.value}",
        f"Scope:      {fact.scope.value}",
        f"State:      {'valid' if fact.is_valid else 'not valid'}" + (" (needs review)" if fact.needs_review else ""),
        f"Author:     {author}",
        f"Created:    {visible(meta.created_at)}",
        f"Confidence: {meta.confidence:.2f}   successes: {meta.success_count}   accessed: {meta.access_count}",
    ]
    for label, value in (("Supersedes", fact.supersedes), ("Superseded by", fact.superseded_by),
                         ("Depends on", ", ".join(fact.depends_on)), ("Tags", ", ".join(fact.tags)),
                         ("Source file", meta.source_file)):
        if value:
            lines.append(f"{label + ':':<12}{visible(value)}")
    lines += ["", f"    {visible(fact.subject)}"]
    if fact.body:
        lines += [""] + [f"    {visible(line)}" for line in fact.body.splitlines()]
    return "\n".join(lines)
