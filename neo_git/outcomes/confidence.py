"""How outcomes move facts: confidence and success updates, REVIEW facts, the cap.

Only valid facts move: a superseded or retracted fact never gains confidence or a success
(and never loses any) from advice that relied on it; what it said is no longer the claim.
And only the facts the advice relied on move (`relied_on`): the ones it named, plus the facts
that were merely in the agent's context when they cite, or are scoped to, the file it changed.
A fact that was only present says nothing about the outcome, and is left as it was.

Per relied-on fact (`confidence_change`; the design notes say why these sizes):

    verdict     health        confidence  success
    accepted    improvement   +0.3        +1
    accepted    neutral/none  +0.2        +1
    accepted    regression    +0.1        +1    (shipping it made its files worse: half the gain)
    modified    any           +0.05        0    (used, restyled: weak support, never a loss; the
                                                 shipped code is the person's, so health is theirs)
    abandoned   -             -0.1         0    (its file shipped without it)
    reverted    -             -0.2        -1    (a later `git revert` took the shipped advice out)

Losses stop at 0.1 (a fact already below 0.1 is left alone). Each accepted or modified
suggestion becomes a REVIEW fact in the project scope that `depends_on` the suggestion's
project facts, and so does an abandoned or reverted one that moved a fact (its id is what makes
a repeat a no-op); at most 50 such outcome facts are kept (the oldest are removed from the tip;
`git log refs/neo/facts` keeps them).

Everything here plans from the facts it is given and has no side effects, because
`FactStore.transact` may run a plan several times (compare-and-swap retries).
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence, Set as AbstractSet
from dataclasses import dataclass

from neo_git.fact_schema import Citation
from neo_git.facts import Fact, FactMetadata, now_iso
from neo_git.pathglob import any_matches
from neo_git.redact import redact
from neo_git.store import Change

ACCEPT_GAIN = 0.2
HEALTH_BONUS = 0.1           # added when health improved, taken off when it regressed
MODIFY_GAIN = 0.05           # a restyled suggestion: used, so weak support; never a loss by itself
ABANDON_LOSS = 0.1
REVERT_LOSS = 0.2
FLOOR = 0.1
MAX_OUTCOME_FACTS = 50
OUTCOME_TAG = "outcome"
ABANDONED, REVERTED = "abandoned", "reverted"
SHIPPED = ("accepted", "modified")
MOVING = SHIPPED + (ABANDONED, REVERTED)   # the verdicts that move the facts relied on


def confidence_change(verdict: str, health: str | None) -> tuple[float, int]:
    """(confidence delta, success delta) for one outcome of a fact's advice (table above)."""
    if verdict == "accepted":
        bonus = HEALTH_BONUS if health == "improvement" else -HEALTH_BONUS if health == "regression" else 0.0
        return ACCEPT_GAIN + bonus, 1
    if verdict == "modified":
        return MODIFY_GAIN, 0
    if verdict == ABANDONED:
        return -ABANDON_LOSS, 0
    if verdict == REVERTED:
        return -REVERT_LOSS, -1
    return 0.0, 0


def about_files(fact: Fact, files: Sequence[str]) -> bool:
    """Does *fact* cite one of *files*, or is it scoped (`metadata.paths`) to one?"""
    meta = fact.metadata
    cited = {c.path for c in meta.citations}
    return any(f in cited for f in files if f) or (
        bool(meta.paths) and any(any_matches(meta.paths, f) for f in files if f))


def relied_on(fact_ids: Sequence[str], context_ids: Sequence[str], files: Sequence[str],
              facts: Mapping[str, Fact]) -> tuple[str, ...]:
    """The facts an outcome moves: *fact_ids* (named by the advice, or given to the agent for its
    file), and those of *context_ids* (merely in the agent's context) that are about *files*."""
    out = list(dict.fromkeys(fact_ids))
    for fact_id in context_ids:
        fact = facts.get(fact_id)
        if fact is not None and fact_id not in out and about_files(fact, files):
            out.append(fact_id)
    return tuple(out)


def review_fact_id(commit: str, suggestion_id: str) -> str:
    """Deterministic id of the REVIEW fact for (commit, suggestion): a repeat finds it."""
    return hashlib.sha1(f"outcome:{commit}:{suggestion_id}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Outcome:
    """One classified suggestion in one commit (input to the plans below)."""

    commit: str
    suggestion_id: str
    file: str
    verdict: str                 # accepted | modified | abandoned | reverted
    health: str | None           # regression | neutral | improvement | None (not measured)
    fact_ids: tuple[str, ...]
    description: str = ""
    commit_subject: str = ""
    health_reasons: tuple[str, ...] = ()
    citations: tuple[Citation, ...] = ()   # the code that shipped (accepted outcomes), re-checked like any citation
    context_ids: tuple[str, ...] = ()  # in the agent's context, not relied on: never moved
    suggested_file: str = ""          # where the suggestion said it was (the file may have moved since)


@dataclass(frozen=True)
class Moved:
    """A fact whose confidence moved: before and after."""

    id: str
    confidence: tuple[float, float]
    success_count: tuple[int, int]
    reason: str

    def to_dict(self) -> dict:
        """JSON form (notes, outcome records)."""
        return {"id": self.id, "confidence": [round(self.confidence[0], 4), round(self.confidence[1], 4)],
                "success_count": list(self.success_count), "reason": self.reason}


def plan_fact_updates(facts: Mapping[str, Fact], outcomes: Sequence[Outcome],
                      skip: AbstractSet[str] = frozenset()) -> tuple[list[Fact], list[Moved]]:
    """The updated facts (of the given scope) and what moved, for *outcomes* whose
    suggestion ids are not in *skip* (already applied)."""
    deltas: dict[str, list] = {}
    for outcome in outcomes:
        if outcome.suggestion_id in skip:
            continue
        gain, success = confidence_change(outcome.verdict, outcome.health)
        for fact_id in outcome.fact_ids:
            if fact_id in facts and facts[fact_id].is_valid:
                entry = deltas.setdefault(fact_id, [0.0, 0, []])
                entry[0] += gain
                entry[1] += success
                entry[2].append(f"{outcome.verdict} in {outcome.commit[:12]}"
                                + (f" (health {outcome.health})" if outcome.health else ""))
    updated, moved = [], []
    for fact_id, (gain, success, reasons) in sorted(deltas.items()):
        fact = facts[fact_id]
        before = fact.metadata.confidence
        after = min(1.0, before + gain) if gain >= 0 else max(FLOOR, before + gain)
        after = max(0.0, min(1.0, round(after, 6)))
        if gain < 0 and before < FLOOR:
            after = before  # never raise a fact by "lowering" it to the floor
        count = fact.metadata.success_count
        successes = max(0, count + success)
        updated.append(fact.evolve(metadata={"confidence": after, "success_count": successes}))
        moved.append(Moved(fact_id, (before, after), (count, successes), "; ".join(reasons)))
    return updated, moved


def review_fact(outcome: Outcome, *, org_id: str | None, project_id: str | None, author: str,
                project_fact_ids: set[str]) -> Fact:
    """The REVIEW fact recording one outcome, linked to the suggestion's project facts."""
    what = outcome.description.strip().splitlines()[0][:120] if outcome.description.strip() else "advice"
    # A file name git stores as bytes that are not UTF-8 (a lone surrogate here) is written
    # with \x escapes: a fact's text must be UTF-8.
    file = outcome.file.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    commit_subject = outcome.commit_subject.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    subject = redact(f"Outcome: {outcome.verdict} — {what} ({file})")[:200]
    lines = [f"Suggestion {outcome.suggestion_id} on {file} was {outcome.verdict} in commit "
             f"{outcome.commit[:12]}" + (f" ({commit_subject[:120]})" if commit_subject else "") + "."]
    if outcome.health:
        lines.append(f"Health of the touched files: {outcome.health}"
                     + (f" ({'; '.join(outcome.health_reasons[:3])})" if outcome.health_reasons else "") + ".")
    if outcome.fact_ids:
        lines.append("Relied on: " + ", ".join(outcome.fact_ids) + ".")
    if outcome.context_ids:
        lines.append("In the agent's context, not relied on (left as they were): "
                     + ", ".join(outcome.context_ids[:20]) + ".")
    raw = {
        "id": review_fact_id(outcome.commit, outcome.suggestion_id),
        "subject": subject, "body": redact("\n".join(lines)), "kind": "review", "scope": "project",
        "org_id": org_id, "project_id": project_id, "tags": [OUTCOME_TAG, outcome.verdict],
        "depends_on": [f for f in outcome.fact_ids if f in project_fact_ids],
        "metadata": FactMetadata(confidence=0.5, author=author, source_file=file,
                                 provenance="observed", created_at=now_iso(),
                                 citations=tuple(c for c in outcome.citations if _utf8(c))).to_dict(),
    }
    return Fact.from_dict(raw)


def outcome_cap_removals(facts: Mapping[str, Fact], new: Sequence[Fact], cap: int = MAX_OUTCOME_FACTS) -> list[str]:
    """Ids of the oldest outcome facts to remove so at most *cap* remain after adding *new*."""
    new_ids = {f.id for f in new}
    kept = [f for f in facts.values() if OUTCOME_TAG in f.tags and f.kind.value == "review" and f.id not in new_ids]
    excess = len(kept) + len(new) - cap
    if excess <= 0:
        return []
    kept.sort(key=lambda f: (f.metadata.created_at, f.id))
    return [f.id for f in kept[:excess]]


def project_plan(outcomes: Sequence[Outcome], make_review, commit: str):
    """A transact plan for the project scope: review facts (``make_review(outcome,
    project_fact_ids)``), project fact updates, the cap.

    Returns (plan, result): result["moved"], result["applied"] (suggestion ids whose
    outcome was written now) and result["project_ids"] are filled by the plan's last run
    (the one that was written)."""
    result: dict = {"moved": [], "applied": set(), "project_ids": set()}

    def plan(facts: Mapping[str, Fact]) -> Change | None:
        wanted = {f for o in outcomes for f in o.fact_ids}
        present = {f for f in wanted if f in facts}
        reviews = [make_review(o, present) for o in outcomes]
        done = {o.suggestion_id for o, r in zip(outcomes, reviews) if r.id in facts}
        todo_reviews = [r for o, r in zip(outcomes, reviews) if o.suggestion_id not in done]
        updated, moved = plan_fact_updates(facts, outcomes, skip=done)
        result["moved"] = moved
        result["applied"] = {o.suggestion_id for o in outcomes} - done
        result["project_ids"] = present
        if not todo_reviews and not updated:
            return None
        removed = tuple(outcome_cap_removals(facts, todo_reviews))
        details = tuple(f"fact {m.id}: confidence {m.confidence[0]:.2f} -> {m.confidence[1]:.2f}, "
                        f"successes {m.success_count[0]} -> {m.success_count[1]} ({m.reason})" for m in moved)
        return Change(facts=tuple(updated) + tuple(todo_reviews),
                      message=f"outcome {commit[:12]}: {len(todo_reviews)} reviewed suggestion(s), "
                              f"{len(moved)} fact(s) moved",
                      details=details + tuple(f"evict outcome fact {i} (cap {MAX_OUTCOME_FACTS})" for i in removed),
                      removed=removed)

    return plan, result


def scope_plan(outcomes: Sequence[Outcome], commit: str):
    """A transact plan for a non-project scope holding some of the relied-on facts."""
    result: dict = {"moved": []}

    def plan(facts: Mapping[str, Fact]) -> Change | None:
        updated, moved = plan_fact_updates(facts, outcomes)
        result["moved"] = moved
        if not updated:
            return None
        return Change(facts=tuple(updated), message=f"outcome {commit[:12]}: {len(moved)} fact(s) moved")

    return plan, result


def _utf8(citation: Citation) -> bool:
    """A citation can be stored only when its path is UTF-8 (a fact is UTF-8 text); the code of a
    file whose name is other bytes is not cited (the outcome itself is still recorded)."""
    try:
        citation.path.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False

