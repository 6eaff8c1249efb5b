"""`git neo init | add | list | show | recall | why | history | restore`."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from neo_git.cli.output import fact_block, fact_line, print_json, score_label, visible, warn
from neo_git.cli.parser import KINDS, SCOPES, json_flag

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.fact_schema import PossibleLink


def register(sub) -> dict[str, str]:
    """Add init, add, list, show, recall, why, history, restore."""
    p = sub.add_parser("init", help="set up refs/neo/facts and .git/neo in this repository")
    json_flag(p)

    p = sub.add_parser("add", help="add a fact (supersedes an older one its words show it replaces)")
    p.add_argument("subject")
    p.add_argument("body", nargs="?", default="")
    p.add_argument("--kind", "-k", default="pattern", choices=KINDS, metavar="KIND",
                   help="one of: " + ", ".join(KINDS) + " (default: pattern)")
    p.add_argument("--scope", "-s", default="project", choices=SCOPES, metavar="SCOPE",
                   help="one of: " + ", ".join(SCOPES) + " (default: project)")
    p.add_argument("--tag", "-t", action="append", default=[], dest="tags", metavar="TAG")
    p.add_argument("--depends-on", action="append", default=[], metavar="ID")
    p.add_argument("--supersedes", metavar="ID", help="replace this fact explicitly")
    p.add_argument("--confidence", type=float, default=0.5, metavar="X", help="0..1 (default 0.5)")
    p.add_argument("--cite", action="append", default=[], metavar="PATH[:SYMBOL|:START-END]",
                   help="code the fact is about: a file, a function/method (Class.method)/class, or lines; "
                        "checked now and on every commit (repeatable)")
    p.add_argument("--path", action="append", default=[], dest="paths", metavar="GLOB",
                   help="limit the fact to files matching this git pathspec glob, relative to the repository "
                        "root, e.g. 'migrations/**' (repeatable)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print only the fact's id, for scripts: id=$(git neo add -q …)")
    json_flag(p)

    p = sub.add_parser("list", help="list facts")
    p.add_argument("--scope", "-s", choices=SCOPES, metavar="SCOPE")
    p.add_argument("--kind", "-k", choices=KINDS, metavar="KIND")
    p.add_argument("--all", "-a", action="store_true", help="include superseded/invalid facts")
    p.add_argument("--untrusted", action="store_true", help="only claims: facts from authors not trusted yet")
    json_flag(p)

    for name, text in (("show", "show one fact"),
                       ("why", "explain why a fact is in its state"),
                       ("history", "the supersession chain of a fact, oldest first"),
                       ("restore", "bring back a wrongly superseded or evicted fact")):
        p = sub.add_parser(name, help=text)
        p.add_argument("id", help="fact id (a unique prefix of at least 4 hex digits works)")
        json_flag(p)

    p = sub.add_parser("recall", help="the facts relevant to a question, in layers")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=5, dest="k", help="ranked facts to return (default 5)")
    p.add_argument("--max-tokens", type=int, default=12000, help="token budget (default 12000)")
    p.add_argument("--file", metavar="PATH",
                   help="the file being worked on: facts citing it or scoped to it come first")
    p.add_argument("--explain", action="store_true",
                   help="why each fact is relevant (cosine, shared words, rank fusion), or why nothing is")
    json_flag(p)
    return {name: f"cmd_{name}" for name in ("init", "add", "list", "show", "recall", "why", "history",
                                             "restore")}


def _store():
    from neo_git.store import FactStore

    return FactStore.open()


def cmd_init(args: argparse.Namespace) -> int:
    """Set up refs/neo/facts (with a reflog) and .git/neo/."""
    from neo_git.ingest import ingest  # constraints the team already wrote (CLAUDE.md, AGENTS.md, …)

    store = _store()
    info = store.init()
    info["ingest"] = ingest(store).to_dict()
    warn(info["ingest"]["warnings"])
    if args.json:
        print_json(info)
    elif info["created"]:
        print(f"Initialized git-neo: {info['ref']} (project {info['project_id']}, org {info['org_id']})")
    else:
        print(f"git-neo is already set up here: {info['ref']} (project {info['project_id']})")
    if not args.json and info["ingest"]["files"]:
        print(f"  rules from {', '.join(info['ingest']['files'])}: {len(info['ingest']['added'])} constraints "
              f"added, {info['ingest']['unchanged']} unchanged (`git neo ingest` refreshes them)")
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    """Add a fact; report a supersession or a duplicate."""
    store = _store()
    result = store.add_detailed(args.subject, args.body, kind=args.kind, scope=args.scope, tags=args.tags,
                                depends_on=args.depends_on, supersedes=args.supersedes,
                                confidence=args.confidence, cites=_from_cwd(store, args.cite), paths=args.paths)
    warn(store.warnings)
    superseded = result.superseded.id if result.superseded else None
    if args.json:
        print_json(result.to_dict())
        return 0
    if args.quiet:
        print(result.fact.id)   # a duplicate's id is the fact already saying this
        return 0
    if result.duplicate:
        print(f"{result.fact.id} already says this; nothing added")
        return 0
    print(f"added {result.fact.kind.value} {result.fact.id}: {visible(result.fact.subject)}")
    for citation in result.fact.metadata.citations:
        print(f"  cites {visible(citation.label)} (verified at {(citation.commit or 'the work tree')[:12]})")
    if result.fact.metadata.paths:
        print(f"  limited to {visible(', '.join(result.fact.metadata.paths))}")
    if superseded:
        print(f"  supersedes {superseded} (see `git neo why {superseded}`)")
    by_similarity = sorted(result.possible, key=lambda link: -(link.similarity or 0))
    links = [_possible_link(link) for link in by_similarity]
    if len(links) == 1:
        print(f"  may supersede {links[0]}: `git neo review` to accept or reject")
    elif links:
        print(f"  may supersede one of {len(links)} facts (`git neo review` to accept the one it replaces, or reject):")
        for line in links:
            print(f"    {line}")
    for fid in result.flagged:
        print(f"  {fid} depends on it and is flagged for review")
    evicted = result.evicted
    for fid in evicted[:MAX_EVICTED_SHOWN]:
        print(f"  {fid} evicted: your {result.fact.scope.value} facts are over the cap")
    if len(evicted) > MAX_EVICTED_SHOWN:
        print(f"  ... and {len(evicted) - MAX_EVICTED_SHOWN:,} more evicted (`git neo list --all` shows them)")
    return 0


MAX_EVICTED_SHOWN = 10   # an add over a bulk-written store may evict thousands: name a few


def _from_cwd(store, specs: list[str]) -> list[str]:
    """`--cite` arguments with their paths made relative to the repository root (they are given
    relative to the current directory, as git takes paths)."""
    if not specs:
        return []
    from pathlib import Path

    from neo_git.citations.resolve import normalise, parse_spec

    workdir = store.paths.workdir if store.paths else None
    out = []
    for text in specs:
        spec = parse_spec(text)
        suffix = text.strip()[len(spec.path):] if text.strip().startswith(spec.path) else ""
        out.append(normalise(spec.path, workdir, Path.cwd()) + suffix)
    return out


def cmd_list(args: argparse.Namespace) -> int:
    """List facts of every (or one) scope."""
    store = _store()
    facts = store.list(scope=args.scope, kind=args.kind, include_invalid=args.all)
    claims = store.untrusted() if args.untrusted else {}
    if args.untrusted:
        facts = [f for f in facts if f.id in claims]
    warn(store.warnings)
    if args.json:
        print_json([f.to_dict() | ({"untrusted_author": claims[f.id]} if f.id in claims else {}) for f in facts])
    elif not facts:
        print(_nothing_listed(store, args))
    else:
        for fact in facts:
            print(fact_line(fact) + (f"  (unverified claim by {visible(claims[fact.id])})" if fact.id in claims else ""))
        if args.untrusted:
            print(f"({len(facts)} unverified: from commits nobody here trusted, or whose trust record is lost. They "
                  "are team knowledge; a constraint among them applies once accepted in `git neo review`. A signed "
                  "commit counts once you `git neo trust add` its signer; unsigned ones only with "
                  "`neo.trustUnsigned <remote>`)")
    return 0


def _claim_of(store, fact_id: str) -> tuple[str, str] | None:
    """(claimed e-mail, how it is known) when *fact_id* is a claim, else None."""
    claims = store.untrusted()
    if fact_id not in claims:
        return None
    from neo_git.store.trust import unverified_commits

    how = unverified_commits(store).get(fact_id) or f"written by {claims[fact_id]}, who is not trusted here"
    return claims[fact_id], how


def _nothing_listed(store, args: argparse.Namespace) -> str:
    """What an empty `list` means, and what to do next."""
    if args.untrusted:
        return "no unverified claims: every fact here was written by you or by someone you trust"
    if not store.list(include_invalid=True):
        return 'no facts yet: git neo add "Subject" "What is true and why" (see `git neo add -h`)'
    filters = [f"--{name} {value}" for name, value in (("scope", args.scope), ("kind", args.kind)) if value]
    if filters:
        return f"no {'' if args.all else 'valid '}facts with {' '.join(filters)}"
    return "no valid facts: every fact is superseded or retracted (`git neo list --all` shows them)"


def cmd_show(args: argparse.Namespace) -> int:
    """Show one fact."""
    store = _store()
    fact = store.get(args.id)
    from neo_git.outcomes.history import fact_outcome_history

    outcomes = fact_outcome_history(store.repo, fact.id)
    claim = _claim_of(store, fact.id)
    if args.json:
        print_json({**fact.to_dict(), **({"outcomes": outcomes} if outcomes else {}),
                    **({"untrusted_author": claim[0], "author_verified": False} if claim else {})})
    else:
        print(fact_block(fact, claim[1] if claim else None))
        from neo_git.cli.outcomes import format_fact_outcomes

        if outcomes:
            print("\n" + format_fact_outcomes(outcomes))
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    """The layered context for a question."""
    if not args.query.strip():
        from neo_git.errors import NeoError

        raise NeoError("the query is empty", 'ask a question, e.g. `git neo recall "how do we call services?"`')
    store = _store()
    file = _from_cwd(store, [args.file])[0] if args.file else None
    result = store.recall(args.query, k=args.k, max_tokens=args.max_tokens, file=file,
                          explain=getattr(args, "explain", False))
    warn(store.warnings)
    if args.json:
        print_json(result.to_dict())
        return 0
    explanation = result.explanation
    if explanation is not None:
        print(visible(explanation.reason))
    sections = (("Constraints", result.constraints), ("Relevant facts", result.valid_facts),
                ("Known unknowns", result.known_unknowns),
                ("Possibly replaced (a newer fact above may replace it: `git neo review`)", result.questioned),
                ("Changed (no longer true)", result.invalidated))
    for title, facts in sections:
        if not facts:
            continue
        print(f"{title}:")
        for fact in facts:
            score = result.scores.get(fact.id)
            prefix = f"  {score_label(score)} " if score is not None else "  "
            claim = " [unverified claim]" if fact.id in result.untrusted else ""
            if fact.id in result.proposals:
                claim += " [proposed by an agent: `git neo review`]"
            if fact.id in result.conflicts:
                claim += (f" [conflict: {result.conflicts[fact.id][:8]} also replaced the same fact; "
                          f"`git neo review keep {fact.id[:8]}`]")
            stale = result.stale.get(fact.id)
            marks = claim + (f" [stale: {stale}]" if stale else "")
            print(f"{prefix}{visible(fact.subject)} ({fact.kind.value}, {fact.scope.value}, {fact.id[:8]}){marks}")
            if fact.body:
                print(f"      {visible(fact.body.splitlines()[0][:200])}")
            why = explanation.facts.get(fact.id) if explanation is not None else None
            if why is not None:
                print(f"      why: {_evidence_line(why)}")
            if fact.superseded_by:
                print(f"      → now: {fact.superseded_by[:8]}")
            elif fact.id in result.questioned_by:
                print(f"      → maybe now: {result.questioned_by[fact.id][:8]}")
    if explanation is not None and explanation.held_back is not None:
        held = explanation.held_back
        print(visible(f"held back: {held['subject']} ({str(held['id'])[:8]}), cosine {held['cosine']:.3f}: {held['why']}"))
    if not any(facts for _, facts in sections):
        print("no facts match this question" if store.list(include_invalid=True) else
              'no facts yet: git neo add "Subject" "What is true and why"')
    env = result.environment
    where = env.get("branch") or ("detached " + (env.get("head") or "")) if env else ""
    print(f"({result.tokens} of {result.max_tokens} tokens; {visible(where)})")
    return 0


def _evidence_line(why) -> str:
    """`cosine 0.412 (1st by cosine); words: http, client (bm25 3.20, 1st by words); fused 0.38`."""
    def place(n):
        return f"{n}{'st' if n % 10 == 1 and n != 11 else 'nd' if n % 10 == 2 and n != 12 else 'rd' if n % 10 == 3 and n != 13 else 'th'}"
    parts = [f"cosine {why.cosine:.3f}" + (f" ({place(why.rank_cosine)} by cosine)" if why.rank_cosine else "")]
    if why.terms:
        parts.append(f"words: {', '.join(why.terms[:8])} (bm25 {why.bm25:.2f}"
                     + (f", {place(why.rank_words)} by words)" if why.rank_words else ")"))
    else:
        parts.append("no shared words")
    parts.append(f"fused {why.fused:.3f}")
    return "; ".join(parts)


def cmd_why(args: argparse.Namespace) -> int:
    """Explain a fact's state."""
    info = _store().why(args.id)
    if args.json:
        print_json(info)
    else:
        print(visible(info["explanation"]))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    """The supersession chain, oldest first."""
    chain = _store().history(args.id)
    if args.json:
        print_json([f.to_dict() for f in chain])
        return 0
    for fact in chain:
        state = "valid" if fact.is_valid else "superseded" if fact.superseded_by else "invalid"
        print(visible(f"{fact.metadata.created_at}  {fact.id}  {state:<10}  {fact.metadata.author}"))
        print("    " + visible(fact.subject + (f": {fact.body.splitlines()[0][:160]}" if fact.body else "")))
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """Make an invalidated fact valid again."""
    fact = _store().restore(args.id)
    if args.json:
        print_json(fact.to_dict())
    else:
        print(f"restored {fact.id}: {visible(fact.subject)}")
    return 0


def _possible_link(link: PossibleLink) -> str:
    """`<id> (similarity 0.412, change)`: a possible supersession as `add` reports it."""
    how = [f"similarity {link.similarity or 0:.3f}", *link.evidence]
    return f"{link.id} ({', '.join(how)})"
