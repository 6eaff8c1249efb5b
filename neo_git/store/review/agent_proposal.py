"""Review items of type `agent_proposal`: a constraint an agent wrote, waiting for a person.

An agent (MCP `add_fact`) can write facts, but a rule that every later session must follow
is a person's call: a constraint written by an agent carries `metadata.proposal = "open"`
and stays out of recall's always-apply layer (it is ranked like any fact, marked PROPOSED)
until a person decides. *accept* clears the mark: the constraint applies from then on
(its author and provenance `agent` stay on record). *reject* retires it (reason "rejected";
`git neo restore` brings it back as a proposal). `git config neo.agentConstraints trust`
makes agents' constraints apply at once (no proposal is written).
"""
from __future__ import annotations

from collections.abc import Mapping

from neo_git.errors import NeoError
from neo_git.fact_schema import Invalidation
from neo_git.facts import Fact, now_iso
from neo_git.knowledge import is_open_proposal
from neo_git.store.base import Change

TYPE = "agent_proposal"
ACTIONS = {"accept": "the agent's constraint applies from now on (always included in recall)",
           "reject": "retire it (`git neo restore` brings it back as a proposal)"}


def open_proposals(facts: Mapping[str, Fact]) -> list[dict]:
    """Valid facts an agent proposed that no person has decided yet, oldest first."""
    out = []
    for fact in sorted(facts.values(), key=lambda f: (f.metadata.created_at, f.id)):
        if not fact.is_valid or not is_open_proposal(fact):
            continue
        out.append({"type": TYPE, "id": fact.id, "scope": fact.scope.value, "kind": fact.kind.value,
                    "actions": list(ACTIONS), "subject": fact.subject, "body": fact.body,
                    "author": fact.metadata.author, "created_at": fact.metadata.created_at,
                    "why": _why(fact)})
    return out


def _why(fact: Fact) -> str:
    replaces = [link.id for link in fact.metadata.possibly_supersedes]
    if replaces:   # an agent's replacement of a person's fact (issue 36)
        return (f"written by an agent ({fact.metadata.provenance}) to replace {', '.join(replaces)}, which a person "
                "wrote; it retires nothing unless a person accepts it (then the replacement is reviewed too)")
    return (f"written by an agent ({fact.metadata.provenance}); a {fact.kind.value} applies "
            "to every later session only once a person accepts it")


class AgentProposals:
    """The review source for agents' proposals (`metadata.proposal == "open"`)."""

    type = TYPE
    actions = ACTIONS

    def items(self, facts: Mapping[str, Fact]) -> list[dict]:
        """Open proposals of one scope."""
        return open_proposals(facts)

    def plan(self, facts: Mapping[str, Fact], item: dict, action: str, arg: str | None,
             embedder_id: str) -> tuple[dict, Change]:
        """accept: clear the proposal mark; reject: retire the fact."""
        fact = facts.get(item["id"])
        if fact is None or not fact.is_valid or not is_open_proposal(fact):
            raise NeoError(f"{item['id']} is no longer an open proposal", "`git neo review` lists the open items")
        if action == "accept":
            accepted = fact.evolve(metadata={"proposal": None})
            return ({"id": fact.id, "accepted": True, "kind": fact.kind.value},
                    Change((accepted,), f"accept agent proposal {fact.id}: {fact.subject}"[:120],
                           ("rule: review (an agent's proposal accepted by a person)",)))
        rejected = fact.evolve(is_valid=False, metadata={"invalidation": Invalidation(
            reason="rejected", at=now_iso(), detail="an agent's proposal, rejected by a person")})
        return ({"id": fact.id, "rejected": True, "kind": fact.kind.value},
                Change((rejected,), f"reject agent proposal {fact.id}: {fact.subject}"[:120],
                       ("rule: review (an agent's proposal rejected by a person)",)))

    def describe(self, item: dict) -> tuple[str, list[str]]:
        """`<id> proposed by an agent (kind, scope)`, then its text."""
        body = (item.get("body") or "").splitlines()
        return (f"{item['id']} proposed by an agent ({item['kind']}, {item['scope']}; {item['why']})",
                [f"text: {item['subject']}" + (f" — {body[0][:160]}" if body else ""),
                 f"by: {item.get('author') or 'unknown'} at {item.get('created_at') or '?'}"])


SOURCE = AgentProposals()
