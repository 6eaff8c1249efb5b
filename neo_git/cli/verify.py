"""`git neo verify [--rev REV] [--json]`: cited facts checked against a revision."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, cast

from neo_git.cli.output import print_json, visible, warn
from neo_git.cli.parser import json_flag

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store.refstore import RefStore

_MARK = {"verified": "ok", "moved": "moved", "changed": "CHANGED", "gone": "GONE", "unknown": "?"}


def register(sub) -> dict[str, str]:
    """Add verify."""
    p = sub.add_parser("verify", help="check the code facts cite against a revision: verified, moved, changed, gone",
                       description="Every cited fact checked against REV (default HEAD). Checking HEAD also records "
                                   "what changed on the facts (as the commit hook does): moved citations follow the "
                                   "code, facts whose cited code all changed or went away enter `git neo review`.")
    p.add_argument("--rev", default="HEAD", help="the revision to check against (default HEAD; only HEAD records)")
    json_flag(p)
    return {"verify": "cmd_verify"}


def cmd_verify(args: argparse.Namespace) -> int:
    """Check every cited fact; print per citation its state."""
    from neo_git.citations.audit import verify_facts
    from neo_git.store import FactStore

    store = FactStore.open()
    cast("RefStore", store.project_store).tip()   # a damaged ref: a fatal pointing at `doctor --fix`, not "no fact cites code"
    report = verify_facts(store, args.rev)
    warn(store.warnings)
    if args.json:
        print_json(report.to_dict())
        return 0
    if not report.facts:
        print(f"no fact cites code (`git neo add … --cite PATH[:SYMBOL]`); checked against {report.rev[:12]}")
        return 0
    for fact in report.facts:
        print(f"{fact.id}  {visible(fact.subject)}" + ("  [stale: enters `git neo review`]" if fact.stale else ""))
        for row in fact.rows:
            since = f" since {row['since'][:12]}" if row.get("since") and row["state"] != "verified" else ""
            print(f"  {_MARK[row['state']]:<8} {visible(row['label'])}{since}"
                  + (f"  ({visible(row['detail'])})" if row["state"] not in ("verified",) else ""))
    counts = report.counts()
    summary = ", ".join(f"{counts[s]} {s}" for s in ("verified", "moved", "changed", "gone", "unknown") if counts.get(s))
    recorded = f"; recorded on {report.recorded} fact(s)" if report.recorded else ""
    print(f"({len(report.facts)} cited fact(s) against {report.rev[:12]}: {summary}{recorded})")
    return 0
