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
                        "stale hooks; process commits the hooks missed")
    json_flag(p)
    return {"doctor": "cmd_doctor"}


def cmd_doctor(args: argparse.Namespace) -> int:
    """Report problems (and what --fix would do); with --fix, repair local state. Exit 1 while any remain."""
    from neo_git.doctor import examine, repair
    from neo_git.identity import open_repository

    repo = open_repository()
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
    print("hint: " + (f"`git neo doctor --fix` repairs {fixable} of them (local state only); " if fixable else "")
          + "the facts ref is shared, so its problems are reported, never rewritten", file=sys.stderr)
    return 1
