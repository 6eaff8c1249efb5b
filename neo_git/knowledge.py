"""What counts as knowledge when memory answers a question (pure functions over facts).

Not every stored fact is something to hand an agent as true:

* **evidence** — `review` facts (outcome records: "Outcome: accepted — …") say how a fact's
  advice fared; they stay in `git neo outcomes` and `show`, never in recall's ranked layer;
* **open proposals** — a constraint an agent wrote is a proposal until a person accepts it
  (`git neo review accept`); until then it is ranked like any fact, never always-applied;
* **conflicts** — after a sync in which two clones superseded one fact differently, both
  successors are valid and one is flagged `needs_review`; each is marked with the other
  until a person keeps one (`git neo review keep ID`);
* **what changed** — a superseded fact is shown only with its current successor ("was X,
  now Y"), and to agents only when the question asks what changed;
* **open questions** — a fact's possible supersessions still asked about (`open_links`): once it
  supersedes one of its candidates, the candidates listed only beside another are answered.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from neo_git.fact_schema import PossibleLink
from neo_git.facts import Fact, FactKind

# A retraction stored as a fact ("[INVALIDATED - was based on wrong data: …] Original
# conclusion: …") quotes the stale text, so it resembles the question more than the
# correction does: retractions rank after every other fact (StateBench train, detect arm:
# a score weight of 0.1 still let 23 of 158 retractions outrank their correction).
_RETRACTION = re.compile(r"^\s*\[?\s*(?:INVALIDATED|RETRACTED|WITHDRAWN|REVOKED)\b")

PROPOSAL_OPEN = "open"
# The review evidence of a candidate listed only beside another one (store/evidence.py re-exports it).
ALTERNATIVE = "alternative"
MAX_CHAIN = 64   # successor chains longer than this are forged or broken: stop following

# Questions about change: history words, comparisons with the past, migrations. Matched on
# word boundaries, case-insensitively ("what changed", "why did we switch", "used to",
# "previously", "no longer", "before we moved", "old", "deprecated", "replaced").
_CHANGE = re.compile(
    r"(?<![\w-])(?:chang(?:e|ed|es|ing)|switch(?:ed)?|used\s+to|previous(?:ly)?|before|earlier|"
    r"no\s+longer|anymore|old(?:er)?|formerly|history|historical|replac(?:e|ed|es|ing)|"
    r"supersed(?:e|ed|es)|deprecat(?:e|ed|es|ion)|migrat(?:e|ed|ion)|moved?\s+(?:away\s+)?from|"
    r"instead\s+of|still|stopped|revert(?:ed)?|was|were)(?![\w-])",
    re.IGNORECASE)


def asks_about_change(question: str) -> bool:
    """Does *question* ask what changed or what used to be true (so superseded facts matter)?"""
    return bool(_CHANGE.search(question or ""))


def is_evidence(fact: Fact) -> bool:
    """An outcome/review record: evidence about other facts, not knowledge to act on."""
    return fact.kind is FactKind.REVIEW


def is_open_proposal(fact: Fact) -> bool:
    """A fact an agent proposed that no person has accepted yet."""
    return fact.metadata.proposal == PROPOSAL_OPEN


def current_successor(fact: Fact, by_id: Mapping[str, Fact]) -> Fact | None:
    """The valid fact at the end of *fact*'s `superseded_by` chain (None when the chain ends
    in a retracted or missing fact, or loops)."""
    seen = {fact.id}
    node = by_id.get(fact.superseded_by or "")
    while node is not None and len(seen) < MAX_CHAIN:
        if node.is_valid:
            return node
        if node.id in seen:
            return None
        seen.add(node.id)
        node = by_id.get(node.superseded_by or "")
    return None


def conflict_partners(facts: Sequence[Fact] | Mapping[str, Fact]) -> dict[str, str]:
    """{fact id: the competing successor's id} for every open supersession conflict: a valid
    fact flagged `needs_review` whose predecessor names another valid successor (sync's
    `repair_chains` leaves exactly that when two clones superseded one fact differently).
    Both sides of each conflict are keys."""
    by_id = facts if isinstance(facts, Mapping) else {f.id: f for f in facts}
    out: dict[str, str] = {}
    for fact in by_id.values():
        if not (fact.needs_review and fact.is_valid and fact.supersedes):
            continue
        predecessor = by_id.get(fact.supersedes)
        if predecessor is None or predecessor.superseded_by in (None, fact.id):
            continue
        other = by_id.get(predecessor.superseded_by)
        if other is None or not other.is_valid or other.id == fact.id:
            continue
        out[fact.id] = other.id
        out.setdefault(other.id, fact.id)
    return out


def only_alternative(link: PossibleLink) -> bool:
    """A `possibly_supersedes` link proposed only beside another candidate (evidence `alternative`
    and nothing else)."""
    return link.evidence == (ALTERNATIVE,)


def open_links(new: Fact) -> tuple[PossibleLink, ...]:
    """The `possibly_supersedes` links of *new* still asked about: once it supersedes one of its
    candidates the question is answered, and links with only `alternative` evidence are kept (a
    restore brings them back) but no longer offered — by the review queue, `why`, recall or a bare
    `review accept|reject NEW`."""
    links = new.metadata.possibly_supersedes
    return links if new.supersedes is None else tuple(link for link in links if not only_alternative(link))


def is_retraction(fact: Fact) -> bool:
    """A fact that only says another one was wrong ("[INVALIDATED …] original: …")."""
    return bool(_RETRACTION.match(fact.body) or _RETRACTION.match(fact.subject))
