"""Review items of type `possible_supersession`, and undoing a supersession.

A fact added with `metadata.possibly_supersedes` links retired nothing: the write policy
was not certain (rule 3's band between the possible and the certain threshold, or a long
text outside the lengths the threshold was calibrated on). A person decides: *accept*
supersedes the candidate exactly as rule 1 would (rule "review"); *reject* drops the link
and records the candidate in `metadata.distinct_from`, so the pair is never proposed again.
Pure functions over one scope's facts; `FactStore` runs them in the scope's transaction.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

from neo_git.errors import NeoError
from neo_git.fact_schema import JudgeVerdict, PossibleLink, Undo, sorted_links
from neo_git.facts import Fact, now_iso
from neo_git.knowledge import only_alternative, open_links
from neo_git.store.base import Change

# The write policy (policy, supersession) loads inside the functions that need it: `git neo -h`
# lists the review actions from this module without paying for it.

TYPE = "possible_supersession"
ACTIONS = {"accept": "the newer fact supersedes the candidate (`git neo restore` undoes it)",
           "reject": "keep both; the pair is never proposed again"}


def proposals(facts: Mapping[str, Fact]) -> list[dict]:
    """Open possible supersessions, oldest proposal first: both facts valid, pair not rejected. A
    newer fact's candidates come one after another (one question, `questions`), in the order they
    are read: those with evidence of their own first, then the alternatives, most similar first."""
    from neo_git.store.supersession import blocked

    out = []
    for new in sorted(facts.values(), key=lambda f: (f.metadata.created_at, f.id)):
        if not new.is_valid or new.metadata.proposal:
            continue  # an agent's open proposal is decided first (agent_proposal), its links after
        for link in sorted(open_links(new), key=lambda other: (only_alternative(other), -(other.similarity or 0))):
            old = facts.get(link.id)
            if old is None or not old.is_valid or blocked(new, old):
                continue
            item = {"type": TYPE, "id": new.id, "candidate": old.id, "actions": list(ACTIONS),
                    "similarity": link.similarity, "threshold": link.threshold,
                    "evidence": list(link.evidence), "scope": new.scope.value, "kind": new.kind.value,
                    "new": {"subject": new.subject, "body": new.body},
                    "old": {"subject": old.subject, "body": old.body},
                    "why": _why(link)}
            if link.judge is not None:
                item["judge"] = link.judge.to_json()
            out.append(item)
    return out


def questions(items: Iterable[dict], limit: int | None = None, most: int | None = None) -> Iterator[list[dict]]:
    """*items* as the questions a person (or the review judge) answers: the possible supersessions
    of one newer fact, listed one after another (`proposals`), are one question with several
    candidates (at most *most* a question); any other item is a question of its own. At most
    *limit* items in all."""
    question: list[dict] = []
    for taken, item in enumerate(items):
        if limit is not None and taken >= limit:
            break
        if question and not (item.get("type") == TYPE == question[0].get("type") and item["id"] == question[0]["id"]
                             and (most is None or len(question) < most)):
            yield question
            question = []
        question.append(item)
    if question:
        yield question


def with_quotes(items: list[dict], facts: Mapping[str, Fact]) -> list[dict]:
    """*items* (of any type), each possible supersession with `quotes`: the newer text's own words
    each piece of its evidence rests on (`store.evidence.quotes`). For the listing only: an accept
    or reject picks its item without them (~6 ms per item with 16 KB bodies)."""
    from neo_git.store.evidence import quotes

    for item in items:
        new, old = facts.get(item.get("id") or ""), facts.get(item.get("candidate") or "")
        if item.get("type") == TYPE and new is not None and old is not None and item.get("evidence"):
            passages = quotes(new, old, item["evidence"])
            if passages:
                item["quotes"] = passages
    return items


# What each piece of review evidence (store/evidence.py) means, for the item's `why`.
EVIDENCE_WORDS = {"reference": "the newer text names the older fact",
                  "change": "the newer text states a change about the older fact",
                  "same_subject": "same subject (a key or a record's title), but the words prove no replacement",
                  "different_code": "they cite different code, so similarity alone retires neither",
                  "judge": "found by the review judge among the newer fact's most similar earlier facts",
                  "alternative": "one of the newer fact's most similar earlier facts; it states a change about "
                                 "another of them",
                  "new_value": "the newer text says the same with one value replaced",
                  "update": "the newer text says a state changed",
                  "restated": "the newer text repeats everything the older said"}


def _why(link: PossibleLink) -> str:
    similarity, threshold = link.similarity, link.threshold
    evidence = [EVIDENCE_WORDS.get(name, name) for name in link.evidence]
    parts = []
    if evidence:
        parts.append("; ".join(evidence))
    if similarity is not None:
        parts.append(f"similarity {similarity:.3f} ≥ review threshold {threshold or 0:.3f}"
                     + ("" if evidence else ": too weak for similarity alone to retire a fact"))
    judge = link.judge
    if judge is not None:
        parts.append(f"judge {judge.model or '?'}: {judge.verdict}" + (f" ({judge.reason})" if judge.reason else ""))
    return "; ".join(parts) or "proposed for review"


def pick_link(new: Fact, candidate: str | None) -> PossibleLink:
    """The link of *new* to resolve: the one naming *candidate* (a unique id prefix), or the only
    open one (`open_links`: the queue prints the bare command for it)."""
    links = new.metadata.possibly_supersedes
    if candidate:
        wanted = candidate.strip().lower()
        matches = [link for link in links if link.id.startswith(wanted)]
        if len(matches) != 1:
            raise NeoError(f"{new.id} has no possible supersession of '{candidate}'",
                           "`git neo review` lists the open ones")
        return matches[0]
    links = open_links(new)   # a hidden alternative can still be named, e.g. to reject it
    if len(links) == 1:
        return links[0]
    if not links:
        raise NeoError(f"{new.id} proposes no supersession", "`git neo review` lists the open ones")
    raise NeoError(f"{new.id} may supersede {len(links)} facts; say which",
                   "e.g. `git neo review accept " + new.id[:8] + " " + links[0].id[:8] + "`")


def plan_accept(facts: Mapping[str, Fact], new_id: str, candidate: str | None,
                embedder_id: str, judge: JudgeVerdict | None = None) -> tuple[Fact, Change]:
    """Supersede the candidate by *new_id* (rule "review"; rule "judge" when a *judge* verdict
    accepts it); returns the retired fact and the change."""
    from neo_git.store.policy import index_of, supersede
    from neo_git.store.supersession import RULE_JUDGE, RULE_REVIEW, Decision

    new = facts[new_id]
    link = pick_link(new, candidate)
    old = facts.get(link.id)
    if not new.is_valid:
        raise NeoError(f"{new.id} is no longer valid", "restore it first with `git neo restore`")
    if old is None or not old.is_valid:
        raise NeoError(f"{link.id} is no longer valid: nothing to supersede",
                       "`git neo reject` drops the proposal")
    if new.supersedes is not None:
        # One pointer: a second supersession would overwrite it, and the first retired fact's
        # successor would no longer name it (its restore would undo nothing).
        raise NeoError(f"{new.id} already supersedes {new.supersedes}: a fact replaces one fact",
                       f"`git neo invalidate {old.id} --reason …` retracts {old.id[:8]} without a successor; "
                       f"`git neo restore {new.supersedes}` first if {new.id[:8]} should replace it instead")
    changed: dict[str, Fact] = {}
    rule = RULE_REVIEW if judge is None else RULE_JUDGE
    decision = Decision(old.id, rule, link.similarity, link.threshold)
    new, old, flagged = supersede(facts, index_of(facts), new, old, decision, embedder_id, now_iso(), changed)
    if judge is not None and old.metadata.invalidation is not None:  # `why` names the judge: its model and reason
        named = f"{judge.model or 'a model'}: {judge.reason or judge.verdict}"
        old = old.evolve(metadata={"invalidation": replace(old.metadata.invalidation, detail=named[:400])})
        changed[old.id] = old
    changed[new.id] = new
    details = ((f"rule: judge ({judge.model}: the newer fact updates the same subject)" if judge else
                "rule: review (a possible supersession accepted by a person)"),
               *(f"flag {fid} for review (depends on {old.id})" for fid in flagged))
    return old, Change(tuple(changed.values()), f"supersede {old.id} by {new.id}: {new.subject}"[:120], details)


def plan_verdict(facts: Mapping[str, Fact], new_id: str, candidate: str, verdict: JudgeVerdict,
                 proposed: Mapping | None = None) -> Change:
    """Record a judge's *verdict* on the link of *new_id* to *candidate* — first added as
    *proposed* (a link's stored form without its id: one the judge found, `review.candidates`)
    when the fact has none to it; nothing is retired."""
    new = facts.get(new_id)
    if new is None or not new.is_valid:
        raise NeoError(f"{new_id} is no longer valid", "`git neo review` lists the open items")
    if proposed is not None and not any(other.id == candidate for other in new.metadata.possibly_supersedes):
        old = facts.get(candidate)
        if old is None or not old.is_valid:
            raise NeoError(f"{candidate} is no longer valid: nothing to propose", "`git neo review` lists the open items")
        found = PossibleLink.from_json({**proposed, "id": candidate})
        new = new.evolve(metadata={"possibly_supersedes": sorted_links((*new.metadata.possibly_supersedes, found))})
    link = pick_link(new, candidate)
    links = tuple(replace(other, judge=verdict) if other.id == link.id else other for other in new.metadata.possibly_supersedes)
    new = new.evolve(metadata={"possibly_supersedes": links})
    return Change((new,), f"judge {link.id} beside {new.id}: {verdict.verdict}"[:120],
                  (f"model: {verdict.model}", f"reason: {verdict.reason}"[:200]))


def plan_reject(facts: Mapping[str, Fact], new_id: str, candidate: str | None) -> tuple[str, Change]:
    """Drop the link and remember the pair as distinct; returns the candidate id and the change."""
    new = facts[new_id]
    link = pick_link(new, candidate)
    kept = tuple(other for other in new.metadata.possibly_supersedes if other.id != link.id)
    distinct = tuple(sorted({*new.metadata.distinct_from, link.id}))
    new = new.evolve(metadata={"possibly_supersedes": kept, "distinct_from": distinct})
    return link.id, Change((new,), f"keep {link.id} beside {new.id}: {new.subject}"[:120],
                              ("rule: review (a person said the two facts are distinct)",))


def undo_supersession(current: Fact, facts: Mapping[str, Fact]) -> list[Fact]:
    """The facts a restore of *current* rewrites: it valid again, its successor's pointer,
    confidence and possible link as before the supersession, its dependents unflagged."""
    changed = [current.evolve(is_valid=True, superseded_by=None, metadata={"invalidation": None})]
    detail = current.metadata.invalidation
    undo = detail.undo if detail is not None and detail.undo is not None else Undo()
    successor = facts.get(current.superseded_by or "")
    link = undo.possible
    # The successor's link back, as before the supersession (unless it has one: a sync kept it).
    relink = successor is not None and link is not None and link.id == current.id \
        and not any(other.id == current.id for other in successor.metadata.possibly_supersedes)
    meta: dict = {}
    if successor is not None and link is not None and relink:
        # Back in the queue, marked: a person restored the older fact, so recall never lets the
        # successor hold it back or take its place until the question is answered again.
        meta["possibly_supersedes"] = sorted_links((*successor.metadata.possibly_supersedes,
                                                    replace(link, restored=True)))
    if successor is not None and successor.supersedes == current.id:
        before = undo.confidence
        if before is not None and 0 <= before <= 1 and successor.metadata.confidence == undo.carried:
            # the carried-over confidence goes with the supersession (unless outcomes changed it since)
            meta["confidence"] = float(before)
        changed.append(successor.evolve(supersedes=None, metadata=meta))
    elif successor is not None and relink:
        # Two clones let the successor replace different facts, and a sync kept its one pointer to
        # the other: the pointer stays, but this pair is back in the queue, as after any restore.
        changed.append(successor.evolve(metadata=meta))
    for fact_id in undo.flagged or ():
        dependent = facts.get(fact_id)
        if dependent is not None and dependent.needs_review and current.id in dependent.depends_on:
            changed.append(dependent.evolve(needs_review=False))
    return changed


class PossibleSupersessions:
    """The review source for possible supersessions (`possibly_supersedes` links)."""

    type = TYPE
    actions = ACTIONS

    def items(self, facts: Mapping[str, Fact]) -> list[dict]:
        """Open possible supersessions of one scope."""
        return proposals(facts)

    def plan(self, facts: Mapping[str, Fact], item: dict, action: str, arg: str | None,
             embedder_id: str) -> tuple[dict, Change]:
        """accept: supersede the candidate; reject: remember the pair as distinct."""
        if action == "accept":
            old, change = plan_accept(facts, item["id"], arg, embedder_id)
            return {"id": item["id"], "superseded": old.id, "rule": "review"}, change
        kept, change = plan_reject(facts, item["id"], arg)
        return {"id": item["id"], "distinct_from": kept}, change

    def describe(self, item: dict) -> tuple[str, list[str]]:
        """`<new> may supersede <old> (…)`, both texts, then the newer text's words the evidence
        rests on."""
        return (f"{item['id']} may supersede {item['candidate']} ({item['kind']}, {item['scope']}; {item['why']})",
                [f"new: {one_line(item['new'])}", f"old: {one_line(item['old'])}", *_said(item)])

    def describe_group(self, items: list[dict]) -> tuple[str, list[str]]:
        """Several candidates of one newer fact as one question: the newer text once, then each
        candidate with its evidence, the words it rests on and the command that settles it."""
        first = items[0]
        lines = [f"new: {one_line(first['new'])}"]
        for at, item in enumerate(items, 1):
            lines += [f"{at}. {item['candidate']} ({item['why']})", f"   old: {one_line(item['old'])}",
                      *(f"   {line}" for line in _said(item)),
                      f"   → git neo review {' | '.join(item['actions'])} {item['id'][:8]} {item['candidate'][:8]}"]
        return (f"{first['id']} may supersede one of {len(items)} facts ({first['kind']}, {first['scope']}): "
                f"accept the one it replaces, if any", lines)


# How `describe` introduces the passage each piece of evidence rests on.
QUOTED = {"reference": "names it", "change": "says", "update": "says", "new_value": "new value"}


def _said(item: Mapping) -> list[str]:
    """`says: "…"`: the newer text's words each piece of the item's evidence rests on."""
    return [f"{QUOTED.get(name, name)}: \"{quote}\"" for name, quote in (item.get("quotes") or {}).items()]


def one_line(texts: Mapping) -> str:
    """Subject — the body's first line that is not blank or a markdown heading (at most 160
    characters of it; a record's "## Context" says nothing), else its first line."""
    lines = [line.strip() for line in (texts.get("body") or "").splitlines() if line.strip()]
    prose = next((line for line in lines if not line.startswith("#")), lines[0] if lines else "")
    return texts["subject"] + (f" — {prose[:160]}" if prose else "")


SOURCE = PossibleSupersessions()
