"""Review items of type `conflict`: two clones superseded one fact differently.

After such a sync both successors are valid; the predecessor points at one of them (sync's
fixed rule) and the other is flagged `needs_review` (neo_git.sync.treemerge.repair_chains).
Recall marks both as in conflict until a person decides. *keep ID* (either successor) makes
it the one successor: the other is retired as superseded by it (rule "conflict"), the
predecessor points at the kept one, and the flag is cleared.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from neo_git.errors import NeoError
from neo_git.fact_schema import Invalidation
from neo_git.facts import Fact, now_iso
from neo_git.knowledge import conflict_partners
from neo_git.store.base import Change

TYPE = "conflict"
ACTIONS = {"keep": "keep this successor; the competing one is retired as superseded by it"}


def open_conflicts(facts: Mapping[str, Fact]) -> list[dict]:
    """One item per open conflict (about the flagged successor; `about` names both), oldest first."""
    partners = conflict_partners(facts)
    out = []
    for fact_id in sorted(partners, key=lambda i: (facts[i].metadata.created_at, i)):
        fact = facts[fact_id]
        if not fact.needs_review:
            continue  # the other side of a conflict listed under its flagged fact
        other = facts[partners[fact_id]]
        assert fact.supersedes is not None   # a conflict is two successors of one fact
        old = facts[fact.supersedes]
        out.append({"type": TYPE, "id": fact.id, "other": other.id, "about": [fact.id, other.id],
                    "predecessor": old.id, "scope": fact.scope.value, "kind": fact.kind.value,
                    "actions": list(ACTIONS),
                    "facts": {f.id: {"subject": f.subject, "body": f.body} for f in (fact, other, old)},
                    "why": f"{fact.id} and {other.id} both replaced {old.id} (a sync merged two clones "
                           "that superseded it differently)"})
    return out


class Conflicts:
    """The review source for conflicting supersessions left by a sync."""

    type = TYPE
    actions = ACTIONS

    def items(self, facts: Mapping[str, Fact]) -> list[dict]:
        """Open conflicts of one scope."""
        return open_conflicts(facts)

    def plan(self, facts: Mapping[str, Fact], item: dict, action: str, arg: str | None,
             embedder_id: str) -> tuple[dict, Change]:
        """keep: the named successor (`item["named"]`, else *arg*, else the flagged one) stays."""
        named = (arg or item.get("named") or item["id"]).strip().lower()
        choices = [i for i in item["about"] if i.startswith(named)]
        if len(choices) != 1:
            raise NeoError(f"'{named}' is not one of the two successors in conflict ({', '.join(item['about'])})",
                           f"`git neo review keep {item['about'][0][:8]}` or `… keep {item['about'][1][:8]}`")
        keep, drop = facts.get(choices[0]), facts.get(next(i for i in item["about"] if i != choices[0]))
        old = facts.get(item["predecessor"])
        if keep is None or drop is None or old is None or not keep.is_valid or not drop.is_valid:
            raise NeoError("this conflict changed meanwhile", "`git neo review` lists the open items")
        stamp = now_iso()
        invalidation = replace(old.metadata.invalidation or Invalidation(), by=keep.id, at=stamp)
        changed = (
            keep.evolve(needs_review=False),
            drop.evolve(is_valid=False, superseded_by=keep.id, needs_review=False, metadata={"invalidation": Invalidation(
                reason="superseded", at=stamp, by=keep.id, rule="conflict", explicit=True,
                detail=f"{keep.id} and {drop.id} both replaced {old.id}; a person kept {keep.id}")}),
            old.evolve(superseded_by=keep.id, metadata={"invalidation": invalidation}),
        )
        return ({"id": keep.id, "kept": keep.id, "retired": drop.id, "predecessor": old.id},
                Change(changed, f"resolve conflict over {old.id}: keep {keep.id}, retire {drop.id}"[:120],
                       ("rule: review (a person resolved a conflicting supersession from a sync)",)))

    def describe(self, item: dict) -> tuple[str, list[str]]:
        """`<a> and <b> both replaced <old>`, then the three texts."""
        texts = item["facts"]

        def line(fact_id: str) -> str:
            body = (texts[fact_id].get("body") or "").splitlines()
            return texts[fact_id]["subject"] + (f" — {body[0][:160]}" if body else "")

        return (f"conflict: {item['why']}",
                [f"{item['id'][:8]}: {line(item['id'])}", f"{item['other'][:8]}: {line(item['other'])}",
                 f"was {item['predecessor'][:8]}: {line(item['predecessor'])}"])


SOURCE = Conflicts()
