"""Review items of type `unverified_constraint`: a teammate's constraint nobody trusted yet.

Facts from others flow as team knowledge, shown with the author they claim; a constraint,
though, would apply to every later agent session, so one from a commit that is not trusted
(unsigned, or signed by a key nobody here trusts) waits for a person (issue 36). *accept*
makes it apply in this clone from now on (recorded in `.git/neo/trust/accepted.json`
against the commit that gave it its text: a later untrusted rewrite is a claim again);
*reject* keeps it out of the rules and out of this list. Nothing is written to the ref:
the decision is this clone's (teammates decide for themselves, or trust its author's key).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from neo_git.errors import NeoError
from neo_git.facts import Fact, FactKind, FactScope

TYPE = "unverified_constraint"
ACTIONS = {"accept": "the constraint applies to your agents from now on (this clone only)",
           "reject": "it stays a claim and leaves this list"}


def _claims(neo_dir: Path) -> tuple[dict[str, tuple[str, str]], str]:
    """The claims on the ref ({fact id: (claimed e-mail, commit)}) and the local user's address."""
    import pygit2

    from neo_git.store.trust import claim_origins, local_address, trusted_here

    common_dir = Path(neo_dir).parent
    try:
        repo = pygit2.Repository(str(common_dir))
    except (pygit2.GitError, OSError):
        return {}, ""
    return claim_origins(repo, common_dir, trusted_here(repo)), local_address(repo)


class UnverifiedConstraints:
    """The `unverified_constraint` review source (reads the trust records: `local = True`)."""

    type = TYPE
    actions = ACTIONS
    local = True

    def items(self, facts: Mapping[str, Fact], neo_dir: Path | None = None) -> list[dict]:
        """Valid project constraints whose author is not trusted and that nobody decided yet."""
        wanted = [f for f in facts.values() if f.is_valid and f.kind is FactKind.CONSTRAINT
                  and f.scope is FactScope.PROJECT]
        if neo_dir is None or not wanted:
            return []
        from neo_git.store import accepted, received
        from neo_git.store.signers import signers_for

        claims, me = _claims(neo_dir)
        keys = signers_for(neo_dir, me)
        decided = accepted.decisions(neo_dir)
        verdicts = received.verdicts(neo_dir)
        out = []
        for fact in sorted(wanted, key=lambda f: (f.metadata.created_at, f.id)):
            if fact.id not in claims:
                continue
            email, commit = claims[fact.id]
            if (decided.get(fact.id) or {}).get("commit") == commit:
                continue   # decided for this text (rejected: an accepted one is no claim)
            how = received.describe(verdicts[commit], keys) if commit in verdicts else \
                "no verdict (not synced by git neo)"
            out.append({"type": TYPE, "id": fact.id, "scope": fact.scope.value, "kind": fact.kind.value,
                        "actions": list(ACTIONS), "subject": fact.subject, "body": fact.body,
                        "author": email, "commit": commit,
                        "why": f"a constraint claimed by {email} ({how}); it applies to your agents only once "
                               "you accept it, or trust a signature of its author"})
        return out

    def plan(self, facts: Mapping[str, Fact], item: dict, action: str, arg: str | None,
             embedder_id: str) -> tuple[dict, None]:
        """Nothing is written to the ref; `settle` records the decision."""
        if facts.get(item["id"]) is None:
            raise NeoError(f"{item['id']} is gone", "`git neo review` lists the open items")
        verb = "accepted: it applies to your agents from now on" if action == "accept" else \
            "rejected: it stays an unverified claim"
        return {"id": item["id"], action + "ed": True, "message": f"{item['id']} {verb}"}, None

    def settle(self, neo_dir: Path | None, item: dict, action: str) -> None:
        """Record the decision against the commit that gave the constraint its text."""
        if neo_dir is None:
            return
        import pygit2

        from neo_git.identity import author_identity
        from neo_git.store import accepted

        try:
            who = author_identity(pygit2.Repository(str(Path(neo_dir).parent)))
        except (pygit2.GitError, OSError):
            who = "unknown"
        accepted.decide(neo_dir, item["id"], item["commit"], "accepted" if action == "accept" else "rejected", who)

    def describe(self, item: dict) -> tuple[str, list[str]]:
        """Headline and details for the terminal."""
        body = (item.get("body") or "").splitlines()
        return (f"{item['id']} unverified constraint ({item['why']})",
                [f"text: {item['subject']}" + (f" — {body[0][:160]}" if body else "")])


SOURCE = UnverifiedConstraints()
