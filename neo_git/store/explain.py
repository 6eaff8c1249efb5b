"""Explaining a fact's place: its supersession chain and why it is (not) valid.

Pure functions over the facts of every scope; `FactStore.history` and
`FactStore.why` load the facts and call these.
"""
from __future__ import annotations

from typing import Any, Mapping

from neo_git.facts import Fact


def supersession_chain(fact: Fact, by_id: Mapping[str, Fact]) -> list[Fact]:
    """The chain through *fact*, oldest first (pointer loops are cut)."""
    seen = {fact.id}
    while fact.supersedes in by_id and fact.supersedes not in seen:
        fact = by_id[fact.supersedes]
        seen.add(fact.id)
    chain = [fact]
    while chain[-1].superseded_by in by_id and chain[-1].superseded_by not in {f.id for f in chain}:
        chain.append(by_id[chain[-1].superseded_by])
    return chain


def explain(fact: Fact, by_id: Mapping[str, Fact]) -> dict:
    """Why *fact* is in its state: valid, superseded (by what, similarity, threshold), evicted, ..."""
    info: dict[str, Any] = {"id": fact.id, "subject": fact.subject, "is_valid": fact.is_valid,
                            "needs_review": fact.needs_review}
    lines = []
    if fact.is_valid:
        info["state"] = "valid"
        lines.append(f"{fact.id} is valid ({fact.kind.value}, {fact.scope.value} scope, "
                     f"confidence {fact.metadata.confidence:.2f}).")
    else:
        detail = fact.metadata.invalidation or {}
        info["state"] = detail.get("reason") or ("superseded" if fact.superseded_by else "invalidated")
        info.update({k: detail.get(k) for k in ("at", "similarity", "threshold", "embedder", "detail", "explicit")
                     if detail.get(k) is not None})
        if fact.superseded_by:
            info["superseded_by"] = fact.superseded_by
            successor = by_id.get(fact.superseded_by)
            subject = f" \"{successor.subject}\"" if successor else ""
            if detail.get("explicit"):
                how = "explicitly (--supersedes)"
            elif detail.get("similarity") is not None:
                threshold = detail.get("threshold")  # a teammate's fact may carry null here
                how = (f"because their similarity {detail['similarity']:.3f} reached the "
                       f"{detail.get('embedder') or '?'} threshold"
                       + (f" {threshold:.3f}" if isinstance(threshold, (int, float)) else ""))
            else:
                how = ""
            lines.append(f"{fact.id} was superseded by {fact.superseded_by}{subject} "
                         f"on {detail.get('at', '?')} {how}".rstrip() + ".")
        else:
            lines.append(f"{fact.id} is not valid: {detail.get('detail') or info['state']}.")
        lines.append(f"`git neo restore {fact.id}` brings it back.")
    if fact.supersedes:
        info["supersedes"] = fact.supersedes
        lines.append(f"It replaced {fact.supersedes}.")
    if fact.needs_review:
        stale = [d for d in fact.depends_on if d in by_id and not by_id[d].is_valid]
        lines.append("It needs review: it depends on " + ", ".join(stale or fact.depends_on)
                     + ", which changed.")
    info["explanation"] = " ".join(lines)
    return info
