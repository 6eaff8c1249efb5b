"""`git neo construct list|search|show|validate`: the curated pattern library.

    git neo construct list [--json]                 patterns by domain
    git neo construct search QUERY [-k N] [--json]  best matches for a question
    git neo construct show ID [--json]              one pattern in full
    git neo construct validate [PATH] [--json]      check a pattern folder (exit 1 listing every problem)

Inside a repository, `.neo/construct/` in the work tree is searched too and wins
on an id clash; outside one, only the shipped library is used.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from neo_git.cli.output import print_json, warn
from neo_git.cli.parser import json_flag
from neo_git.errors import NeoError


def register(sub) -> dict[str, str]:
    """Add construct and its four actions."""
    p = sub.add_parser("construct", help="curated patterns: list | search | show | validate",
                       description="The Construct pattern library (shipped patterns plus .neo/construct/).")
    actions = p.add_subparsers(dest="construct_action", metavar="ACTION", required=True)
    q = actions.add_parser("list", help="the patterns, by domain")
    json_flag(q)
    q = actions.add_parser("search", help="patterns matching a question")
    q.add_argument("query", help="what you are trying to do, in words")
    q.add_argument("-k", type=int, default=5, metavar="N", help="how many results (default 5)")
    json_flag(q)
    q = actions.add_parser("show", help="one pattern in full")
    q.add_argument("id", help="<domain>/<name>, e.g. architecture/dependency-inversion")
    json_flag(q)
    q = actions.add_parser("validate", help="check a pattern folder; exit 1 listing every problem")
    q.add_argument("path", nargs="?", help="folder of <domain>/<name>.md files "
                                           "(default: .neo/construct if present, else the shipped library)")
    json_flag(q)
    return {"construct": "cmd_construct"}


def cmd_construct(args: argparse.Namespace) -> int:
    """Run one construct action."""
    action = {"list": _list, "search": _search, "show": _show, "validate": _validate}[args.construct_action]
    return action(args)


def _workdir() -> Path | None:
    """The work tree git finds from here (honours GIT_DIR/GIT_WORK_TREE), or None outside one."""
    from neo_git.gitrun import run_git

    try:
        proc = run_git(["rev-parse", "--show-toplevel"], check=False, timeout=10)
    except NeoError:
        return None
    top = proc.stdout.strip()
    return Path(top) if proc.returncode == 0 and top else None


def _warn_skipped(library) -> None:
    warn(f"skipped {p}" for p in library.problems)


def _list(args: argparse.Namespace) -> int:
    from neo_git.patterns import load_library

    library = load_library(_workdir())
    _warn_skipped(library)
    patterns = list(library.patterns.values())
    if args.json:
        print_json({"patterns": [p.to_dict(full=False) for p in patterns],
                    "overridden": library.overridden,
                    "problems": [str(p) for p in library.problems]})
        return 0
    if not patterns:
        print("no patterns found")
        return 0
    width = max(len(p.id) for p in patterns)
    domain = None
    for pattern in patterns:
        if pattern.domain != domain:
            if domain is not None:
                print()
            domain = pattern.domain
            print(f"{domain}/")
        mark = "  (project)" if pattern.source == "project" else ""
        print(f"  {pattern.id:<{width}}  {pattern.name}{mark}")
    return 0


def _search(args: argparse.Namespace) -> int:
    from neo_git.patterns import load_library, search_patterns

    if args.k < 1:
        print("error: -k must be at least 1", file=sys.stderr)
        return 2
    workdir = _workdir()
    _warn_skipped(load_library(workdir))
    hits = search_patterns(args.query, args.k, workdir=workdir)
    if args.json:
        print_json({"query": args.query, "hits": [h.to_dict() for h in hits]})
        return 0
    if not hits:
        print("no patterns found")
        return 0
    width = max(len(h.id) for h in hits)
    for hit in hits:
        print(f"{hit.score:5.2f}  {hit.id:<{width}}  {hit.pattern.name}")
        print(f"{'':7}{hit.pattern.summary}")
    return 0


def _show(args: argparse.Namespace) -> int:
    from neo_git.patterns import find_pattern

    pattern = find_pattern(args.id, _workdir())
    if args.json:
        print_json(pattern.to_dict())
        return 0
    sys.stdout.write(pattern.text if pattern.text.endswith("\n") else pattern.text + "\n")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from neo_git.patterns import project_root, shipped_root, validate_folder

    if args.path:
        root = Path(args.path)
    else:
        own = project_root(_workdir())
        root = own if own is not None and own.is_dir() else shipped_root()
    patterns, problems = validate_folder(root)
    if args.json:
        print_json({"path": str(root), "valid": [p.id for p in patterns], "problems": [
            {"path": p.path, "line": p.line, "message": p.message} for p in problems]})
        return 1 if problems or not patterns else 0
    for problem in problems:
        print(problem)
    if problems:
        files = len({p.path for p in problems})
        raise NeoError(f"{len(problems)} problem(s) in {files} file(s) under {root} "
                       f"({len(patterns)} valid pattern(s))",
                       "each pattern needs '# Pattern: <Name>', 'Author:', the sections "
                       "Intent, Forces, Solution, Consequences, References, and at most 300 lines")
    if not patterns:
        raise NeoError(f"no patterns under {root}", "patterns live at <folder>/<domain>/<name>.md")
    print(f"ok: {len(patterns)} pattern(s) under {root}")
    return 0
