"""Review items of type `incoming`: a change to a trusted fact that nobody trusted made.

The sync gate (`sync/gate.py`) keeps such a change off the ref and files it here, in
`.git/neo/review/incoming.json` (local: the decision is this clone's). The item shows who
claims to have made it and what it would do ("bob@example.com (unverified) retracts this
fact: accept?"). *accept* writes their version as our own change (it then counts as
trusted, vouched for by whoever accepted); *reject* drops it. Either way the item is gone;
the next sync does not bring it back, because the merge took their tip as a parent.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from neo_git.errors import InvalidFact, NeoError
from neo_git.facts import Fact, now_iso
from neo_git.store.base import Change

TYPE = "incoming"
ACTIONS = {"accept": "take the teammate's change as your own",
           "reject": "keep your fact as it is; the change is dropped"}
FILE = Path("review") / "incoming.json"
MAX_ITEMS = 500   # a flood of held changes keeps the newest; sync reports how many were held


def store_path(neo_dir: Path) -> Path:
    """Where the held proposals of one repository live."""
    return Path(neo_dir) / FILE


def load(neo_dir: Path | None) -> list[dict]:
    """The held proposals ([] when none, or when the file is unreadable: it is only a queue)."""
    from neo_git.fileio import read_record

    items = read_record(store_path(neo_dir), "items") if neo_dir is not None else None
    return [p for p in items if isinstance(p, dict) and isinstance(p.get("id"), str)] if isinstance(items, list) else []


def file_proposals(neo_dir: Path, proposals: Sequence[Mapping]) -> None:
    """Add the gate's held *proposals* (a newer proposal about a fact replaces an older one)."""
    if not proposals:
        return
    _rewrite(neo_dir, lambda items: [i for i in items if i["id"] not in {p["id"] for p in proposals}]
             + [{**p, "at": now_iso()} for p in proposals])


def _rewrite(neo_dir: Path, change) -> None:
    from neo_git.fileio import rewrite_record

    path = store_path(neo_dir)
    rewrite_record(path, "items", lambda items: change(items)[-MAX_ITEMS:], read=lambda *_: load(neo_dir),
                   lock=path.with_name(path.name + ".lock"), indent=1)


def _what(proposal: Mapping, current: Fact) -> str:
    proposed = proposal.get("proposed")
    if proposed is None:
        return "removes this fact"
    if proposed.get("superseded_by") and proposed.get("superseded_by") != current.superseded_by:
        return f"supersedes this fact by {proposed['superseded_by']}"
    if current.is_valid and proposed.get("is_valid") is False:
        return "retracts this fact"
    if (proposed.get("subject"), proposed.get("body"), proposed.get("kind")) != (
            current.subject, current.body, current.kind.value):
        return "rewrites this fact"
    return "changes this fact"


class IncomingSource:
    """The `incoming` review source (reads the local queue: `local = True`)."""

    type = TYPE
    actions = ACTIONS
    local = True

    def items(self, facts: Mapping[str, Fact], neo_dir: Path | None = None) -> list[dict]:
        """Held proposals about facts that still exist, oldest first."""
        out = []
        for proposal in load(neo_dir):
            current = facts.get(proposal["id"])
            if current is None:
                continue
            by = ", ".join(proposal.get("by") or ["?"])
            out.append({"type": TYPE, "id": current.id, "scope": current.scope.value, "kind": current.kind.value,
                        "actions": list(ACTIONS), "subject": current.subject,
                        "why": f"{by} (unverified, from {proposal.get('remote') or 'a remote'}) "
                               f"{_what(proposal, current)}: accept?",
                        "proposed": proposal.get("proposed"), "by": proposal.get("by", []),
                        "commits": proposal.get("commits", []), "current": proposal.get("current")})
        return out

    def plan(self, facts: Mapping[str, Fact], item: dict, action: str, arg: str | None,
             embedder_id: str) -> tuple[dict, Change | None]:
        """accept: their version becomes ours (one commit); reject: nothing is written."""
        fact_id = item["id"]
        if action == "reject":
            return {"id": fact_id, "rejected": True,
                    "message": f"kept {fact_id} as it is; the teammate's change was dropped"}, None
        current = facts[fact_id]
        if item.get("current") is not None and current.to_dict() != item["current"]:
            raise NeoError(f"{fact_id} changed here since the teammate's change arrived",
                           f"compare with `git neo show {fact_id}`; `git neo review reject {fact_id}` drops it")
        by = ", ".join(item.get("by") or ["?"])
        if item.get("proposed") is None:
            return ({"id": fact_id, "accepted": "removed",
                     "message": f"removed {fact_id}, as the teammate's change did (`git log refs/neo/facts` keeps it)"},
                    Change(message=f"accept removal of {fact_id} from {by}", removed=(fact_id,)))
        try:
            fact = Fact.from_dict(item["proposed"])
        except InvalidFact as exc:
            raise NeoError(f"the held change to {fact_id} is not a valid fact: {exc.message}",
                           f"`git neo review reject {fact_id}` drops it") from None
        return ({"id": fact_id, "accepted": "changed",
                 "message": f"took the teammate's change to {fact_id} as your own"},
                Change(facts=(fact,), message=f"accept change to {fact_id} from {by}"))

    def settle(self, neo_dir: Path | None, item: dict, action: str) -> None:
        """Remove the decided proposal from the queue (after its change, if any, was written)."""
        if neo_dir is not None:
            _rewrite(neo_dir, lambda items: [i for i in items if i["id"] != item["id"]])

    def describe(self, item: dict) -> tuple[str, list[str]]:
        """Headline and details for the terminal."""
        lines = [item.get("why", ""),
                 f"by: {', '.join(item.get('by') or ['?'])} (self-declared; commits "
                 f"{', '.join(item.get('commits') or [])})"]
        proposed = item.get("proposed")
        if proposed is not None:
            lines.append(f"theirs: {proposed.get('subject', '')}: {str(proposed.get('body', ''))[:200]}")
            lines.append(f"valid: {proposed.get('is_valid', True)}; superseded by: {proposed.get('superseded_by')}")
        return f"{item['id']} {item.get('subject', '')}", lines


SOURCE = IncomingSource()
