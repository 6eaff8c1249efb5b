"""Explaining a fact's place: its supersession chain and why it is (not) valid.

Pure functions over the facts of every scope; `FactStore.history` and
`FactStore.why` load the facts and call these.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neo_git.fact_schema import Invalidation
from neo_git.facts import Fact
from neo_git.knowledge import conflict_partners, open_links

# How `why` words the reasons a fact left without a successor (metadata.invalidation.reason).
_RETIRED = {
    "evicted": "was evicted (scope cap)",
    "pruned": "was pruned by upkeep",
    "retired": "was retired",
    "invalidated": "was invalidated",
}


def supersession_chain(fact: Fact, by_id: Mapping[str, Fact]) -> list[Fact]:
    """The chain through *fact*, oldest first (pointer loops are cut)."""
    seen = {fact.id}
    while fact.supersedes is not None and fact.supersedes in by_id and fact.supersedes not in seen:
        fact = by_id[fact.supersedes]
        seen.add(fact.id)
    chain = [fact]
    while (after := chain[-1].superseded_by) is not None and after in by_id and after not in {f.id for f in chain}:
        chain.append(by_id[after])
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
        merged = sorted(f.id for f in by_id.values() if f.superseded_by == fact.id
                        and f.metadata.invalidation is not None and f.metadata.invalidation.reason == "synthesized")
        if merged:
            info["synthesized_from"] = merged
            lines.append(f"Upkeep synthesized it from {len(merged)} near-identical review facts: "
                         f"{', '.join(merged)}.")
    else:
        detail = fact.metadata.invalidation or Invalidation()
        info["state"] = detail.reason or ("superseded" if fact.superseded_by else "invalidated")
        info.update({key: value for key in ("at", "rule", "similarity", "threshold", "embedder", "detail", "explicit")
                     for value in (getattr(detail, key),) if value is not None})
        if fact.superseded_by and "rule" not in info:  # written before rules were recorded
            info["rule"] = "explicit" if detail.explicit else "similarity"
        if fact.superseded_by:
            info["superseded_by"] = fact.superseded_by
            successor = by_id.get(fact.superseded_by)
            subject = f" \"{successor.subject}\"" if successor else ""
            how = _how(info["rule"], detail)
            lines.append(f"{fact.id} was superseded by {fact.superseded_by}{subject} "
                         f"on {detail.at or '?'} {how}".rstrip() + ".")
            if detail.reason == "synthesized" or (detail.explicit and detail.detail):
                # upkeep and ingestion say in their own words why (merged into an archetype,
                # a section of an instruction file changed)
                lines[-1] = (f"{fact.id} was superseded by {fact.superseded_by}{subject} "
                             f"on {detail.at or '?'}: {detail.detail}.")
        else:
            verb = _RETIRED.get(info["state"])
            when = f" on {detail.at}" if detail.at else ""
            lines.append(f"{fact.id} {verb}{when}: {detail.detail or info['state']}." if verb
                         else f"{fact.id} is not valid: {detail.detail or info['state']}.")
        lines.append(f"`git neo restore {fact.id}` brings it back.")
    possible = open_links(fact)   # not the alternatives of a question already answered
    if possible:
        info["possibly_supersedes"] = [link.to_json() for link in possible]
        lines.append("It may supersede " + ", ".join(
            f"{link.id} (similarity {link.similarity or 0:.3f})" for link in possible)
            + ("" if fact.supersedes else "; nothing was retired") + ": `git neo review` accepts or rejects.")
    if fact.metadata.distinct_from:
        info["distinct_from"] = list(fact.metadata.distinct_from)
    if fact.supersedes:
        info["supersedes"] = fact.supersedes
        lines.append(f"It replaced {fact.supersedes}.")
    if fact.needs_review:
        lines.append(_review_reason(fact, by_id))
    info["explanation"] = " ".join(lines)
    return info


def _review_reason(fact: Fact, by_id: Mapping[str, Fact]) -> str:
    """Why *fact* is flagged for review, in the words of what flagged it: a sync's competing
    successors, a dependency that changed, or (said plainly) neither."""
    partner = conflict_partners({fact.id: fact, **{k: v for k, v in by_id.items() if k != fact.id}}).get(fact.id)
    if partner is not None:
        return (f"It needs review: it and {partner} both replaced {fact.supersedes} (a sync merged two clones "
                f"that superseded it differently): `git neo review keep {fact.id[:8]}` or "
                f"`git neo review keep {partner[:8]}`.")
    if fact.depends_on:
        stale = [d for d in fact.depends_on if d in by_id and not by_id[d].is_valid]
        return "It needs review: it depends on " + ", ".join(stale or fact.depends_on) + ", which changed."
    return "It needs review: `git neo review` lists it with what to decide."


def _how(rule: str, detail: Invalidation) -> str:
    """The clause naming the rule that retired a fact (docs/architecture.md §4, rules 1-3, and review)."""
    similarity = detail.similarity
    if rule == "explicit":
        return "explicitly (--supersedes) (rule 1)"
    if rule == "review":
        return "when a person accepted the possible supersession (`git neo review accept`)"
    if rule == "judge":
        return (f"when the review judge ({detail.detail or 'a model'}) found it updates the same subject "
                "(`git config neo.reviewJudge auto`)")
    evidence = list(detail.evidence or ())
    shown = "; ".join(PROOF_WORDS.get(name, name) for name in evidence)
    if rule == "same_subject":
        tail = f" (similarity {similarity:.3f})" if similarity is not None else ""
        if evidence:
            return f"because it restates the same subject and {shown} (rule 2){tail}"
        return f"because it restates the same subject and the bodies are related (rule 2){tail}"
    if similarity is not None:
        embedder = detail.embedder if detail.embedder is not None else "?"
        return (f"because their similarity {similarity:.3f} reached the {embedder} "
                f"certain threshold {detail.threshold or 0:.3f}" + (f" and {shown}" if shown else "")
                + " (rule 3)")
    return ""


# What the evidence a retirement rested on means (store/evidence.py, recorded in
# metadata.invalidation.evidence since issue 32), for `why`.
PROOF_WORDS = {"key": "the subject is an identifier: a new body is its new value",
               "new_value": "the newer text says the same with one value replaced",
               "update": "the newer text says the older state changed",
               "restated": "the newer text repeats everything the older said"}
