"""`git neo review [accept|reject ID [CANDIDATE]]` and `git neo invalidate ID --reason …`."""
from __future__ import annotations

import argparse

from neo_git.cli.output import print_json, warn
from neo_git.cli.parser import json_flag
from neo_git.errors import NeoError


def register(sub) -> dict[str, str]:
    """Add review and invalidate."""
    p = sub.add_parser("review", help="possible supersessions: list them, accept or reject one")
    p.add_argument("action", nargs="?", choices=("accept", "reject"),
                   help="accept: the newer fact supersedes the candidate; reject: keep both, never ask again")
    p.add_argument("id", nargs="?", help="the newer fact (a unique prefix of at least 4 hex digits)")
    p.add_argument("candidate", nargs="?", help="the fact it may supersede (needed when it names several)")
    json_flag(p)

    p = sub.add_parser("invalidate", help="retract a fact that is no longer true, without a successor")
    p.add_argument("id", help="fact id (a unique prefix of at least 4 hex digits works)")
    p.add_argument("--reason", "-r", required=True, help="why it is no longer true (kept on the fact)")
    json_flag(p)
    return {"review": "cmd_review", "invalidate": "cmd_invalidate"}


def _store():
    from neo_git.store import FactStore

    return FactStore.open()


def cmd_review(args: argparse.Namespace) -> int:
    """List open possible supersessions, or accept/reject one."""
    store = _store()
    if args.action is None:
        if args.id:
            raise NeoError(f"unknown review action '{args.id}'", "use `git neo review accept|reject ID`")
        pending = store.review()
        warn(store.warnings)
        if args.json:
            print_json(pending)
            return 0
        if not pending:
            print("nothing to review: no open possible supersessions")
            return 0
        for item in pending:
            print(f"{item['id']} may supersede {item['candidate']} ({item['kind']}, {item['scope']}; {item['why']})")
            print(f"  new: {_one_line(item['new'])}")
            print(f"  old: {_one_line(item['old'])}")
        print(f"({len(pending)} open; `git neo review accept|reject ID [CANDIDATE]`)")
        return 0
    if not args.id:
        raise NeoError(f"`git neo review {args.action}` needs the id of the newer fact",
                       "`git neo review` lists the open possible supersessions")
    if args.action == "accept":
        old = store.accept(args.id, args.candidate)
        result = {"id": old.superseded_by, "superseded": old.id, "rule": "review"}
        text = f"{old.superseded_by} supersedes {old.id} (`git neo restore {old.id}` undoes it)"
    else:
        fact = store.get(args.id)
        kept = store.reject(fact.id, args.candidate)
        result = {"id": fact.id, "distinct_from": kept}
        text = f"kept {kept} beside {fact.id}: the pair will not be proposed again"
    if args.json:
        print_json(result)
    else:
        print(text)
    return 0


def cmd_invalidate(args: argparse.Namespace) -> int:
    """Retract a fact without a successor."""
    fact = _store().invalidate(args.id, args.reason)
    if args.json:
        print_json(fact.to_dict())
    else:
        print(f"invalidated {fact.id}: {fact.subject} (`git neo restore {fact.id}` undoes it)")
    return 0


def _one_line(texts: dict) -> str:
    body = (texts.get("body") or "").splitlines()
    return texts["subject"] + (f" — {body[0][:160]}" if body else "")
