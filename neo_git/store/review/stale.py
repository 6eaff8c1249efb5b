"""Review items of type `stale`: facts whose cited code changed or went away.

A fact is stale when every citation it has is `changed` or `gone` (recorded by the commit
worker or `git neo verify`, `neo_git.citations`). A person decides:

- keep    the fact still holds: its citations are re-anchored to the code as it is now in
          HEAD (a citation whose file or symbol is gone is dropped);
- retire  it no longer holds: invalidated (`git neo restore` undoes it);
- update  say what is true now: `git neo review update ID "new text"` writes a successor that
          supersedes it, citing the same code as it is now (`git neo add --supersedes ID` does
          the same with every option of add).

Pure functions over one scope's facts, like every source; what needs the repository (reading
the code now, a new fact's id) is computed before the transaction by `prepare`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from neo_git.citing import resolver_for
from neo_git.errors import NeoError
from neo_git.fact_schema import Citation, Invalidation
from neo_git.facts import Fact, check_text, now_iso
from neo_git.store.base import Change

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.identity import RepositoryPaths


class CitingStore(Protocol):
    """What re-anchoring reads of a store: `FactStore` (store/__init__.py; its review queue
    imports this module)."""

    repo: pygit2.Repository | None
    paths: RepositoryPaths | None
    author: str

    def get(self, fact_id: str) -> Fact: ...

TYPE = "stale"
ACTIONS = {"keep": "it still holds: re-anchor its citations to the code as it is now",
           "retire": "it no longer holds: invalidate it (`git neo restore` undoes it)",
           "update": 'write what is true now: `git neo review update ID "new text"` supersedes it'}
RETIRE_MARK = " (git neo review retire)"


def _broken(fact: Fact) -> bool:
    citations = fact.metadata.citations
    return bool(citations) and all(c.state in ("changed", "gone") for c in citations)


def _is_outcome_record(fact: Fact) -> bool:
    """An outcome record (what shipped in a commit) stays true when the code moves on: recall
    marks it stale, nobody is asked to review it."""
    return fact.kind.value == "review" and "outcome" in fact.tags


def stale_items(facts: Mapping[str, Fact]) -> list[dict]:
    """Valid facts whose citations are all changed or gone, oldest first."""
    out = []
    for fact in sorted(facts.values(), key=lambda f: (f.metadata.created_at, f.id)):
        if not fact.is_valid or not _broken(fact) or _is_outcome_record(fact):
            continue
        citations = [{"citation": c.label, "state": c.state, "since": c.since, "date": c.since_date}
                     for c in fact.metadata.citations]
        commits = sorted({c.since[:7] for c in fact.metadata.citations if c.since})
        where = f"in {', '.join(commits[:3])}" if commits else "since it was cited"
        out.append({"type": TYPE, "id": fact.id, "scope": fact.scope.value, "kind": fact.kind.value,
                    "actions": list(ACTIONS), "subject": fact.subject, "body": fact.body,
                    "citations": citations,
                    "why": f"cited code changed {where}: keep, update, or retire"})
    return out


def reanchor(store: CitingStore, fact: Fact) -> list[Citation]:
    """The fact's citations as they would be cited now (from HEAD and the work tree); the ones
    whose file or symbol no longer exists are left out."""
    resolve = resolver_for(store.repo, store.paths.workdir if store.paths else None)
    out = []
    for citation in fact.metadata.citations:
        try:
            fresh = resolve(citation.label)
        except NeoError:
            continue
        out.append(replace(fresh, cited=citation.key))
    return out


class StaleFacts:
    """The review source for stale facts."""

    type = TYPE
    actions = ACTIONS

    def items(self, facts: Mapping[str, Fact]) -> list[dict]:
        """Open stale facts of one scope."""
        return stale_items(facts)

    def prepare(self, store: CitingStore, item: dict, action: str, arg: str | None) -> Any:
        """What the plan needs from outside the scope's facts: the re-anchored citations (keep,
        update) and the successor's id (update)."""
        if action == "retire":
            return arg
        from neo_git.facts import new_fact_id

        if action == "update" and not (arg or "").strip():
            raise NeoError(f"`update` needs what is true now about {item['id']}",
                           f'git neo review update {item["id"][:8]} "what the code does now" '
                           f'(or `git neo add --supersedes {item["id"][:8]} …` for every option of add)')
        fact = store.get(item["id"])
        return {"citations": reanchor(store, fact), "text": arg, "new_id": new_fact_id(), "author": store.author}

    def plan(self, facts: Mapping[str, Fact], item: dict, action: str, arg: Any,
             embedder_id: str) -> tuple[dict, Change]:
        """keep: re-anchor; retire: invalidate; update: a successor supersedes it."""
        fact = facts[item["id"]]
        if not fact.is_valid or not _broken(fact):
            raise NeoError(f"{fact.id} is no longer stale", "`git neo review` lists the open items")
        if action == "retire":
            labels = ", ".join(c.label for c in fact.metadata.citations)
            retired = fact.evolve(is_valid=False, metadata={"invalidation": Invalidation(
                reason="invalidated", at=now_iso(), detail=f"cited code changed or gone: {labels}{RETIRE_MARK}"[:1000])})
            return ({"id": fact.id, "retired": True, "message": f"retired {fact.id} (`git neo restore {fact.id}` "
                                                                "undoes it)"},
                    Change((retired,), f"retire stale {fact.id}: {fact.subject}"[:120],
                           ("its cited code changed or went away",)))
        if not isinstance(arg, Mapping):
            raise NeoError(f"`{action}` needs the code as it is now", "run it through `git neo review`")
        citations = tuple(arg.get("citations") or ())
        if action == "keep":
            kept = fact.evolve(metadata={"citations": citations})
            dropped = len(fact.metadata.citations) - len(citations)
            message = (f"kept {fact.id}: {len(citations)} citation(s) re-anchored to the code now"
                       + (f", {dropped} dropped (gone)" if dropped else ""))
            return ({"id": fact.id, "kept": True, "citations": len(citations), "dropped": dropped,
                     "message": message},
                    Change((kept,), f"keep stale {fact.id}: re-anchored to the code now"[:120], (message,)))
        return self._update(facts, fact, arg, citations, embedder_id)

    def _update(self, facts: Mapping[str, Fact], old: Fact, arg: Mapping, citations: tuple[Citation, ...],
                embedder_id: str) -> tuple[dict, Change]:
        from neo_git.redact import redact
        from neo_git.store.policy import index_of, supersede
        from neo_git.store.supersession import RULE_EXPLICIT, Decision

        body = redact(check_text("body", str(arg.get("text") or ""), 16_384).strip())
        raw = {**old.to_dict(), "id": arg["new_id"], "body": body, "is_valid": True, "superseded_by": None,
               "supersedes": None, "needs_review": False}
        raw["metadata"] = {**raw["metadata"], "created_at": now_iso(), "author": arg.get("author") or "unknown",
                           "invalidation": None, "success_count": 0, "access_count": 0, "last_accessed": None,
                           "citations": [c.to_json() for c in citations], "possibly_supersedes": [],
                           "distinct_from": []}
        new = Fact.from_dict(raw)
        changed: dict[str, Fact] = {}
        new, old, flagged = supersede(facts, index_of(facts), new, old, Decision(old.id, RULE_EXPLICIT),
                                      embedder_id, now_iso(), changed)
        changed[new.id] = new
        return ({"id": old.id, "by": new.id,
                 "message": f"{new.id} supersedes stale {old.id} (`git neo restore {old.id}` undoes it)"},
                Change(tuple(changed.values()), f"supersede stale {old.id} by {new.id}: {new.subject}"[:120],
                       ("rule: explicit (a stale fact updated in review)",
                        *(f"flag {fid} for review (depends on {old.id})" for fid in flagged))))

    def describe(self, item: dict) -> tuple[str, list[str]]:
        """`<id> is stale (…)`, then its text and its citations."""
        lines = [item["subject"] + (f" — {item['body'].splitlines()[0][:160]}" if item.get("body") else "")]
        lines += [f"{c['citation']}: {c['state']}" + (f" in {c['since'][:12]}" if c.get("since") else "")
                  + (f" ({c['date'][:10]})" if c.get("date") else "") for c in item["citations"]]
        return f"{item['id']} is stale ({item['kind']}, {item['scope']}; {item['why']})", lines


SOURCE = StaleFacts()
