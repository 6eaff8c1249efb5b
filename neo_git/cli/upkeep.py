"""`git neo gc [--dry-run]` and `git neo ingest`: keep the memory lean, and learn the
rules the team wrote down for its AI tools."""
from __future__ import annotations

import argparse

from neo_git.cli.output import print_json, warn
from neo_git.cli.parser import json_flag

_VERB = {"prune": "pruned", "demote": "demoted", "synthesize": "synthesized", "evict": "evicted",
         "purge": "purged"}


def register(sub) -> dict[str, str]:
    """Add gc and ingest."""
    p = sub.add_parser("gc", help="evict, prune, demote, synthesize and purge facts (each step one commit)")
    p.add_argument("--dry-run", "-n", action="store_true", help="show what would be done, write nothing")
    json_flag(p)
    p = sub.add_parser("ingest", help="constraints from CLAUDE.md, AGENTS.md, .cursorrules, … in the work tree")
    p.add_argument("--dry-run", "-n", action="store_true", help="show what would change, write nothing")
    json_flag(p)
    return {"gc": "cmd_gc", "ingest": "cmd_ingest"}


def _run(args: argparse.Namespace, job):
    """Open the store, run *job(store, dry_run=…)*, print its warnings (and, with --json, the
    report): returns the report, or None when it was printed as JSON."""
    from neo_git.store import FactStore

    store = FactStore.open()
    report = job(store, dry_run=args.dry_run)
    warn([*store.warnings, *getattr(report, "warnings", ())])
    if args.json:
        print_json(report.to_dict())
        return None
    return report


def cmd_gc(args: argparse.Namespace) -> int:
    """Run every upkeep step and say what happened to which fact, and why."""
    from neo_git.upkeep import run_gc

    report = _run(args, run_gc)
    if report is None:
        return 0
    would = "would be " if args.dry_run else ""
    for action in report.actions:
        target = f" into {action.result_id}" if action.result_id else ""
        print(f"{_VERB[action.step]:<12} {action.fact_id} ({action.scope}) {action.subject}{target}")
        print(f"{'':<12} why: {action.why}")
        if action.evidence:
            print(f"{'':<12} evidence: {action.evidence}")
    counts = ", ".join(f"{n} {would}{_VERB[step]}" for step, n in report.counts().items())
    tail = "" if args.dry_run else f" in {report.commits} commit{'s' if report.commits != 1 else ''}"
    print(f"gc: {counts}{tail} ({report.seconds:.2f} s)" if report.actions else "gc: nothing to do")
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    """Read the agent instruction files and keep one constraint per section."""
    from neo_git.ingest import ingest

    report = _run(args, ingest)
    if report is not None:
        print(report.summary())
    return 0
