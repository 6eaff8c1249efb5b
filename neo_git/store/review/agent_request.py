"""Review items of type `agent_request`: an agent asked to change a person's fact.

An agent may write facts (they arrive as its own, marked with provenance `agent`), but
changing what a person wrote is that person's call (issue 36). When an agent, through MCP
or its hooks, asks to restore (or retract) a fact that a person wrote, or that a person
retired, nothing is written: the request is queued in `.git/neo/review/agent-requests.json`
(local: the decision is this clone's) and `git neo review` lists it. *accept* makes the
change as the person who accepts it (the commit names the agent that asked); *reject*
drops it. A supersession an agent proposes goes through `agent_proposal` instead (its new
fact is the proposal, linked to the fact it would replace).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from neo_git.errors import NeoError
from neo_git.fact_schema import Invalidation
from neo_git.facts import Fact, now_iso
from neo_git.store.base import Change
from neo_git.store.review.possible import undo_supersession

TYPE = "agent_request"
ACTIONS = {"accept": "make the change the agent asked for, as your own (the commit names the agent)",
           "reject": "keep the fact as it is; the agent's request is dropped"}
FILE = Path("review") / "agent-requests.json"
MAX_ITEMS = 200
OPS = ("restore", "invalidate")
PERSON_RETIREMENTS = ("invalidated", "rejected")   # a person's own decision to retire a fact


def store_path(neo_dir: Path) -> Path:
    """Where one repository's open agent requests live."""
    return Path(neo_dir) / FILE


def load(neo_dir: Path | None) -> list[dict]:
    """The open requests ([] when none or unreadable: a queue, asked again by the agent)."""
    from neo_git.fileio import read_record

    items = read_record(store_path(neo_dir), "items") if neo_dir is not None else None
    return [i for i in items if isinstance(i, dict) and isinstance(i.get("id"), str) and i.get("op") in OPS] \
        if isinstance(items, list) else []


def file_request(neo_dir: Path, fact_id: str, op: str, agent: str, reason: str = "") -> dict:
    """Queue an agent's request to *op* (restore, invalidate) fact *fact_id*; returns the item."""
    from neo_git.fileio import rewrite_record

    item = {"id": fact_id, "op": op, "agent": agent or "an agent", "reason": reason[:500], "at": now_iso()}
    path = store_path(neo_dir)
    rewrite_record(path, "items",
                   lambda items: ([i for i in items if (i["id"], i["op"]) != (fact_id, op)] + [item])[-MAX_ITEMS:],
                   read=lambda *_: load(neo_dir), lock=path.with_name(path.name + ".lock"), indent=1)
    return item


def is_persons(fact: Fact) -> bool:
    """Whether a person wrote *fact* (anything but an agent's own write)."""
    return fact.metadata.provenance != "agent"


def restore_touches_a_person(fact: Fact, facts: Mapping[str, Fact]) -> bool:
    """Whether restoring *fact* would undo a person's work: it is a person's fact, a person
    retired it (retracted or rejected), or the fact that replaced it is a person's."""
    reason = fact.metadata.invalidation.reason if fact.metadata.invalidation is not None else None
    if is_persons(fact) or reason in PERSON_RETIREMENTS:
        return True
    return any(is_persons(f) for f in undo_supersession(fact, facts)[1:])


def _changes(op: str, current: Fact, facts: Mapping[str, Fact], agent: str) -> list[Fact]:
    if op == "restore":
        if current.is_valid:
            raise NeoError(f"{current.id} is valid already", f"`git neo review reject {current.id}` drops the request")
        return undo_supersession(current, facts)
    if not current.is_valid:
        raise NeoError(f"{current.id} is retired already", f"`git neo review reject {current.id}` drops the request")
    return [current.evolve(is_valid=False, metadata={"invalidation": Invalidation(
        reason="invalidated", at=now_iso(), detail=f"asked by {agent}, accepted by a person")})]


class AgentRequests:
    """The `agent_request` review source (reads the local queue: `local = True`)."""

    type = TYPE
    actions = ACTIONS
    local = True

    def items(self, facts: Mapping[str, Fact], neo_dir: Path | None = None) -> list[dict]:
        """Open requests about facts of this scope, oldest first."""
        out = []
        for request in load(neo_dir):
            current = facts.get(request["id"])
            if current is None:
                continue
            out.append({"type": TYPE, "id": current.id, "scope": current.scope.value, "kind": current.kind.value,
                        "actions": list(ACTIONS), "subject": current.subject, "op": request["op"],
                        "agent": request.get("agent"), "reason": request.get("reason", ""),
                        "why": f"{request.get('agent') or 'an agent'} asks to {request['op']} a fact a person "
                               "wrote or retired: accept?"})
        return out

    def plan(self, facts: Mapping[str, Fact], item: dict, action: str, arg: str | None,
             embedder_id: str) -> tuple[dict, Change | None]:
        """accept: the change, written as the person's, naming the agent; reject: nothing."""
        fact_id = item["id"]
        if action == "reject":
            return {"id": fact_id, "rejected": True, "message": f"kept {fact_id} as it is"}, None
        agent = item.get("agent") or "an agent"
        changed = _changes(item["op"], facts[fact_id], facts, agent)
        return ({"id": fact_id, "accepted": item["op"], "message": f"{item['op']}d {fact_id}, as {agent} asked"},
                Change(tuple(changed), f"{item['op']} {fact_id} (asked by {agent}, accepted by a person)"[:120],
                       (f"Agent: {agent} (requested)", "rule: review (an agent's request accepted by a person)")))

    def settle(self, neo_dir: Path | None, item: dict, action: str) -> None:
        """Remove the decided request from the queue."""
        if neo_dir is None:
            return
        from neo_git.fileio import rewrite_record

        path = store_path(neo_dir)
        rewrite_record(path, "items", lambda items: [i for i in items if (i["id"], i["op"]) != (item["id"], item["op"])],
                       read=lambda *_: load(neo_dir), lock=path.with_name(path.name + ".lock"), indent=1)

    def describe(self, item: dict) -> tuple[str, list[str]]:
        """Headline and details for the terminal."""
        lines = [item.get("why", "")]
        if item.get("reason"):
            lines.append(f"reason given: {item['reason']}")
        return f"{item['id']} {item.get('subject', '')}", lines


SOURCE = AgentRequests()
