"""`git neo report [--commits N] [--out PATH] [--json]` and the table behind
`git neo health --history N [REV] [--json]`."""
from __future__ import annotations

import argparse
import sys

from neo_git.cli.output import print_json
from neo_git.cli.parser import json_flag

MAX_COMMITS = 100_000


def positive_count(text: str) -> int:
    """argparse type: a whole number from 1 to MAX_COMMITS."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if not 1 <= value <= MAX_COMMITS:
        raise argparse.ArgumentTypeError(f"give a number from 1 to {MAX_COMMITS:,}, not {value}")
    return value


def register(sub) -> dict[str, str]:
    """Add report."""
    from neo_git.report import DEFAULT_COMMITS

    p = sub.add_parser("report", help="write a self-contained HTML page: health and memory over time")
    p.add_argument("--commits", type=positive_count, default=DEFAULT_COMMITS, metavar="N",
                   help=f"first-parent commits of HEAD to chart (default {DEFAULT_COMMITS})")
    p.add_argument("--out", metavar="PATH", help="where to write the page (default .git/neo/report.html)")
    json_flag(p)
    return {"report": "cmd_report"}


def _progress(total_hint: int):
    from neo_git.health.progress import Progress

    return Progress(total_hint, label="measuring commits")


def cmd_report(args: argparse.Namespace) -> int:
    """Write the page and print its path and file:// URL."""
    from pathlib import Path

    from neo_git.identity import open_repository
    from neo_git.report.build import build_report

    repo = open_repository()
    bar = None

    def on_total(total: int) -> None:
        nonlocal bar
        if not args.json:
            bar = _progress(total)

    def on_measured() -> None:
        if bar is not None:
            bar.advance()

    try:
        result = build_report(repo, args.commits, Path(args.out) if args.out else None,
                              on_measured=on_measured, on_total=on_total)
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        print_json(result.to_dict())
        return 0
    print(result.path)
    print(result.url)
    measured = f"{result.measured:,} measured now" if result.measured else "all from the cache"
    print(f"{result.commits:,} commits ({measured}), {result.facts:,} valid facts, {result.outcomes:,} outcomes, "
          f"{result.turns:,} agent turns; {result.seconds:.1f} s", file=sys.stderr)
    return 0


# --- `git neo health --history N` ------------------------------------------------

_COLUMNS = (("cycles", "cycles"), ("import_time_cycles", "import-time"), ("modules_in_cycles", "in cycles"),
            ("god_files", "god files"), ("max_nesting", "nesting"), ("files", "files"), ("lines", "lines"))


def history_rows(repo, rev: str, count: int, progress: bool) -> list[dict]:
    """The health series as JSON rows, newest first (as `git log` lists commits)."""
    from neo_git.report.series import first_parent_commits, health_series
    from neo_git.report.text import local_time

    chain = first_parent_commits(repo, count, rev)
    bar = _progress(len(chain)) if progress else None
    try:
        points, _measured = health_series(repo, chain, on_measured=bar.advance if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    rows = []
    for point in reversed(points):
        info = point.commit
        rows.append({"commit": info.commit, "date": local_time(info.time, info.offset).isoformat(),
                     "subject": info.subject, **point.health})
    return rows


def format_history(rows: list[dict]) -> str:
    """The readable table of `git neo health --history N`."""
    from neo_git.cli.output import visible

    columns = [(key, title) for key, title in _COLUMNS if any(key in row for row in rows)]
    header = ["commit", "date"] + [title for _key, title in columns] + ["subject"]
    table = [[row["commit"][:7], row["date"][:10]]
             + [f"{row[key]:,}" if isinstance(row.get(key), int) else "-" for key, _title in columns]
             + [visible(row["subject"])] for row in rows]
    widths = [max(len(r[i]) for r in table + [header]) for i in range(len(header) - 1)]

    def line(cells: list[str]) -> str:
        body = [cells[0].ljust(widths[0]), cells[1].ljust(widths[1])]
        body += [cell.rjust(width) for cell, width in zip(cells[2:-1], widths[2:])]
        return "  ".join(body + [cells[-1]]).rstrip()

    return "\n".join([line(header)] + [line(r) for r in table])


def cmd_health_history(args: argparse.Namespace, repo) -> int:
    """`git neo health [REV] --history N [--json]`."""
    rows = history_rows(repo, args.rev or "HEAD", args.history, progress=not args.json)
    if args.json:
        print_json(rows)
    else:
        print(format_history(rows))
    return 0
