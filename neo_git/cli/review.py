"""`git neo review [ACTION ID [ARG]]` (the review queue, `store/review/`) and `git neo invalidate ID --reason …`."""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, cast

from neo_git.cli.output import print_json, visible, warn
from neo_git.cli.parser import json_flag
from neo_git.errors import NeoError

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store.review.possible import PossibleSupersessions


def register(sub) -> dict[str, str]:
    """Add review and invalidate."""
    # The action names come from the review sources (store/review/), checked when the command
    # runs: importing them here would load the store (pygit2) for every `git neo -h`.
    p = sub.add_parser("review", help="what memory asks you to decide: list the open items, or resolve one",
                       description="Without an action: list the open review items; each names the actions "
                                   "it offers (accept, reject, …).")
    p.add_argument("action", nargs="?", help="what to do with the item: accept, reject, … (as `git neo review` lists)")
    p.add_argument("id", nargs="?", help="the fact the item is about (a unique prefix of at least 4 hex digits)")
    p.add_argument("arg", nargs="?", metavar="candidate|text",
                   help="the action's argument: the fact a possible supersession names, when it names several; "
                        "for `update` of a stale fact, what is true now")
    p.add_argument("--type", help="only items of this type (possible_supersession, agent_proposal, conflict, "
                                  "stale, …)")
    p.add_argument("--judge", action="store_true",
                   help="ask the configured model about each open possible supersession and record its verdict "
                        "(it retires nothing unless `git config neo.reviewJudge auto`)")
    p.add_argument("--provider", "-p", choices=PROVIDERS, metavar="P",
                   help="with --judge: one of " + ", ".join(PROVIDERS) + " (default: as `git neo ask`)")
    p.add_argument("--model", "-m", metavar="M", help="with --judge: the model (default: as `git neo ask`)")
    p.add_argument("--wider", action="store_true",
                   help="with --judge: also ask about pairs no rule proposed — each recent fact's most similar "
                        "earlier long facts; an `updated` or `contradicts` verdict joins the queue")
    p.add_argument("--limit", type=int, metavar="N",
                   help="with --wider: at most N such pairs per run, newest facts first (default 20)")
    json_flag(p)

    p = sub.add_parser("invalidate", help="retract a fact that is no longer true, without a successor")
    p.add_argument("id", help="fact id (a unique prefix of at least 4 hex digits works)")
    p.add_argument("--reason", "-r", required=True, help="why it is no longer true (kept on the fact)")
    json_flag(p)
    return {"review": "cmd_review", "invalidate": "cmd_invalidate"}


PROVIDERS = ("openai", "anthropic", "ollama", "none")  # neo_git.ask.providers.PROVIDER_NAMES (import-free here)


def _store():
    from neo_git.store import FactStore

    return FactStore.open()


def cmd_review(args: argparse.Namespace) -> int:
    """List the open review items, or resolve one."""
    from neo_git.store.review import ACTIONS, SOURCES
    from neo_git.store.review.possible import questions

    if args.action is not None and args.action not in ACTIONS:
        print(f"git neo review: error: unknown action '{args.action}' (choose from {', '.join(ACTIONS)})",
              file=sys.stderr)
        return 2
    if args.type is not None and args.type not in SOURCES:
        print(f"git neo review: error: unknown type '{args.type}' (choose from {', '.join(SOURCES)})",
              file=sys.stderr)
        return 2
    if args.limit is not None and not args.wider:
        print("git neo review: error: --limit goes with --wider", file=sys.stderr)
        return 2
    if args.judge:
        if args.limit is not None and args.limit < 0:
            print("git neo review: error: --limit must be ≥ 0", file=sys.stderr)
            return 2
        if args.action is not None:
            print("git neo review: error: --judge takes no action (it judges every open possible supersession)",
                  file=sys.stderr)
            return 2
        return _judge(args)
    if args.provider or args.model or args.wider:
        print("git neo review: error: --provider, --model and --wider go with --judge", file=sys.stderr)
        return 2
    store = _store()
    if args.action is None:
        pending = store.review(types=None if args.type is None else (args.type,))
        warn(store.warnings)
        if args.json:
            print_json(pending)
            return 0
        if not pending:
            print("nothing to review: no open items")
            return 0
        asked = list(questions(pending))
        for group in asked:
            item, source = group[0], SOURCES[group[0]["type"]]
            # Only possible supersessions of one newer fact come grouped (`questions`).
            headline, details = (source.describe(item) if len(group) == 1
                                 else cast("PossibleSupersessions", source).describe_group(group))
            scope = item.get("scope")
            print(visible(headline) + (f"  [{scope}]" if scope and scope != "project" else ""))
            for line in details:
                print(f"  {visible(line)}")
            if len(group) == 1:   # a possible supersession names its candidate: the fact may have other links
                candidate = f" {item['candidate'][:8]}" if item.get("candidate") else ""
                print(f"  → git neo review {' | '.join(item['actions'])} {item['id'][:8]}{candidate}")
        count = f"{len(asked)} open" + (f", {len(pending)} items" if len(asked) < len(pending) else "")
        print(f"({count}; `git neo review ACTION ID`, ACTION one of: {', '.join(ACTIONS)})")
        return 0
    if not args.id:
        raise NeoError(f"`git neo review {args.action}` needs the id of the fact the item is about",
                       "`git neo review` lists the open items")
    result = store.resolve_review(args.action, args.id, args.arg, type=args.type)
    if args.json:
        print_json(result)
    else:
        print(visible(_resolved(result)))
    return 0


def _judge(args: argparse.Namespace) -> int:
    """`git neo review --judge`: a verdict per open possible supersession, printed as it comes."""
    from neo_git.ask.judge import WIDER_LIMIT, judge_candidates, judge_mode, judge_open_items
    from neo_git.ask.providers import make_provider
    from neo_git.ask.settings import resolve_settings

    store = _store()
    auto = judge_mode(store.repo) == "auto"
    provider = make_provider(resolve_settings(args.provider, args.model, repo=store.repo))

    def show(result) -> None:
        if args.json:
            return
        if result.error:
            print(visible(f"{result.id[:8]} / {result.candidate[:8]}: {result.error}"))
            return
        done = f"; superseded {result.candidate[:8]} (`git neo restore {result.candidate}` undoes it)" \
            if result.superseded else ""
        if result.held:
            done = "; kept for you to decide: the newer fact is an unverified claim"
        print(visible(f"{result.id[:8]} / {result.candidate[:8]}: {result.verdict} — {result.reason}{done}"))

    results = judge_open_items(store, provider, auto=auto, progress=show)
    unremembered: list[str] = []
    if args.wider:
        limit = WIDER_LIMIT if args.limit is None else args.limit
        results += judge_candidates(store, provider, auto=auto, limit=limit, progress=show,
                                    warnings=unremembered)
    warn([*store.warnings, *unremembered])
    if args.json:
        print_json([r.to_dict() for r in results])
    elif not results:
        print("nothing to judge: no open possible supersession without a verdict"
              + ("; no unjudged pair among the recent facts' most similar earlier ones" if args.wider else ""))
    else:
        retired = sum(1 for r in results if r.superseded)
        print(f"({len(results)} judged by {results[0].model}"
              + (f"; {retired} superseded (neo.reviewJudge auto)" if auto else
                 "; nothing retired: `git neo review accept|reject ID` decides") + ")")
    return 0


def _resolved(result: dict) -> str:
    if result.get("message"):  # a source that says what it did in its own words
        return result["message"]
    if "superseded" in result:
        return f"{result['id']} supersedes {result['superseded']} (`git neo restore {result['superseded']}` undoes it)"
    if "distinct_from" in result:
        return f"kept {result['distinct_from']} beside {result['id']}: the pair will not be proposed again"
    if result.get("accepted"):
        return f"accepted {result['id']}: this {result['kind']} applies from now on"
    if result.get("rejected"):
        return f"rejected {result['id']} (`git neo restore {result['id']}` brings it back as a proposal)"
    if "retired" in result:
        return (f"kept {result['kept']} as what replaced {result['predecessor']}; retired {result['retired']} "
                f"(`git neo restore {result['retired']}` undoes it)")
    return f"resolved the review item about {result['id']}"


def cmd_invalidate(args: argparse.Namespace) -> int:
    """Retract a fact without a successor."""
    fact = _store().invalidate(args.id, args.reason)
    if args.json:
        print_json(fact.to_dict())
    else:
        print(f"invalidated {fact.id}: {fact.subject} (`git neo restore {fact.id}` undoes it)")
    return 0
