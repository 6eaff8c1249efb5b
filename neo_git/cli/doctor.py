"""`git neo doctor [--fix] [--json]`: check the facts ref, local caches, locks and temp files."""
from __future__ import annotations

import argparse
import sys

from neo_git.cli.output import print_json, visible
from neo_git.cli.parser import json_flag


def register(sub) -> dict[str, str]:
    """Add doctor."""
    p = sub.add_parser("doctor", help="check the facts ref, caches, locks, hooks, agents and remotes "
                                      "(--fix repairs local state)")
    p.add_argument("--fix", action="store_true",
                   help="delete caches that do not verify, stale locks and orphaned temp files; reinstall "
                        "stale hooks; process commits the hooks missed; cut pointers to missing facts in local scopes; "
                        "put a damaged refs/neo/facts back to its last good tip; move aside local facts files "
                        "that are folders or link loops")
    p.add_argument("--ref", action="store_true",
                   help="with --fix: also propose the commit that cuts dangling pointers on refs/neo/facts "
                        "(made only when you confirm)")
    p.add_argument("--yes", "-y", action="store_true", help="with --fix --ref: confirm without asking")
    json_flag(p)
    return {"doctor": "cmd_doctor"}


def cmd_doctor(args: argparse.Namespace) -> int:
    """Report problems (and what --fix would do); with --fix, repair local state. Exit 1 while any remain."""
    from neo_git.doctor import examine, repair
    from neo_git.identity import open_repository

    repo = open_repository()
    if args.ref and not args.fix:
        from neo_git.errors import NeoError

        raise NeoError("--ref goes with --fix", "`git neo doctor --fix --ref`")
    if args.fix and args.ref:
        committed = _fix_ref(repo, args)
        if committed is not None:
            return committed
    findings = examine(repo)
    fixed = repair(findings, repo) if args.fix else []
    remaining = [f for f in findings if f not in fixed]
    if args.json:
        print_json({"problems": [f.to_dict() for f in remaining], "fixed": [f.to_dict() for f in fixed]})
        return 1 if remaining else 0
    for finding in fixed:
        print(f"fixed:   {visible(finding.problem)}\n         ({visible(finding.fix)})")
    for finding in remaining:
        print(f"problem: {visible(finding.problem)}")
        if finding.fix:
            print(f"         would fix with --fix: {visible(finding.fix)}")
        if finding.hint:
            print(f"         {visible(finding.hint)}")
    if not remaining:
        print("git-neo doctor: no problems found" if not fixed else f"git-neo doctor: fixed {len(fixed)} problems")
        return 0
    fixable = sum(1 for f in remaining if f.fix)
    print(f"fatal: {len(remaining)} problem{'s' if len(remaining) != 1 else ''} found", file=sys.stderr)
    # Each clause only when it is about what was found (a hooks-only report has no ref problem).
    clauses = [f"`git neo doctor --fix` repairs {fixable} of them (local state only, or a damaged ref put back "
               "to its own last good tip)"] if fixable else []
    if any(f.check in REF_CHECKS and not f.fix for f in remaining):
        clauses.append("the facts ref is shared, so problems in what it holds are reported, never rewritten")
    if clauses:
        print("hint: " + "; ".join(clauses), file=sys.stderr)
    return 1


# The findings about what refs/neo/facts holds (not the ref's file, which --fix puts back to its
# own last good tip; its findings --fix cannot repair say themselves what to do).
REF_CHECKS = ("ref", "pointers")


def _fix_ref(repo, args: argparse.Namespace) -> int | None:
    """`--fix --ref`: show the commit that cuts the ref's dangling pointers and make it once the
    user confirms (a terminal prompt, or --yes). Returns an exit code to stop with, or None to go
    on with the usual checks and local repairs."""
    from neo_git.doctor import context
    from neo_git.doctor.pointers import propose_ref_fix

    proposal = propose_ref_fix(context(repo))
    if proposal is None:
        return None
    print(f"proposed commit on refs/neo/facts: cut dangling pointers of {len(proposal.lines)} fact(s)")
    for line in proposal.lines:
        print(f"  {visible(line)}")
    if not args.yes:
        if not sys.stdin.isatty():
            print("fatal: not committed: the facts ref is shared, so this needs your confirmation", file=sys.stderr)
            print("hint: run `git neo doctor --fix --ref` at a terminal, or add --yes", file=sys.stderr)
            return 1
        answer = input("Commit this to refs/neo/facts? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("not committed")
            return 1
    proposal.apply()
    print("committed to refs/neo/facts (`git log -1 refs/neo/facts` shows it)")
    return None
