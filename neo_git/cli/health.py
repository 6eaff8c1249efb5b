"""`git neo health [REV] [--staged] [--json]`, `git neo health --diff A B [--json]` and
`git neo health [REV] --history N [--json]` (the series `git neo report` draws, as a table).

A report, not a gate: exit 0 whatever the health, 1 only for a problem the
user can fix (unknown revision, empty repository).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from neo_git.cli.output import print_json
from neo_git.cli.parser import json_flag


def register(sub) -> dict[str, str]:
    """Add health."""
    p = sub.add_parser("health", help="code health: import cycles, god files, nesting")
    p.add_argument("rev", nargs="?", default=None, help="commit to measure (default HEAD)")
    p.add_argument("--staged", action="store_true", help="measure the index instead of a commit")
    p.add_argument("--diff", nargs=2, metavar=("A", "B"), help="compare two revisions")
    p.add_argument("--history", type=_count, metavar="N",
                   help="health of the last N first-parent commits of REV (default HEAD), newest first")
    p.add_argument("--check", action="store_true",
                   help="with --staged: the pre-commit gate (exit 1 if the change adds a cycle, god file or deep nesting)")
    p.add_argument("--include-tests", action="store_true",
                   help="judge tests, generated and vendored files and neo.healthExclude globs like any other file")
    json_flag(p)
    return {"health": "cmd_health"}


def cmd_health(args: argparse.Namespace) -> int:
    """Measure one revision (or the index), or compare two revisions."""
    from neo_git.health.delta import counts_every_edge, health_delta
    from neo_git.health.measure import snapshot_commit, snapshot_index

    if args.diff and (args.rev is not None or args.staged):
        return _usage_error("--diff takes both revisions itself; drop REV and --staged")
    if args.staged and args.rev is not None:
        return _usage_error("--staged measures the index; give either REV or --staged")
    if args.history is not None:
        if args.staged or args.diff or args.check:
            return _usage_error("--history measures commits: drop --staged, --diff and --check")
        from neo_git.cli.report import cmd_health_history

        return cmd_health_history(args, _open_repo())
    if args.check:
        if not args.staged or args.diff:
            return _usage_error("--check gates staged changes: use `git neo health --staged --check`")
        from neo_git.githooks.guard import check_staged, format_result

        result = check_staged(_open_repo())
        if args.json:
            _print_json(result.to_dict())
        else:
            print(format_result(result), file=sys.stdout if result.ok else sys.stderr)
        return 0 if result.ok else 1
    repo = _open_repo()
    progress = not args.json
    workers = _workers()
    everything = args.include_tests
    if args.diff:
        first, second = args.diff
        before = snapshot_commit(repo, first, progress=progress, workers=workers, include_excluded=everything)
        after = snapshot_commit(repo, second, progress=progress, workers=workers, include_excluded=everything)
        delta = health_delta(before, after, every_edge=counts_every_edge(repo))
        if args.json:
            _print_json(delta.to_dict())
        else:
            _print_text(format_delta(delta.to_dict(), first, second))
        return 0
    if args.staged:
        snapshot = snapshot_index(repo, progress=progress, workers=workers, include_excluded=everything)
        label = "the index (staged changes)"
    else:
        rev = args.rev or "HEAD"
        snapshot = snapshot_commit(repo, rev, progress=progress, workers=workers, include_excluded=everything)
        label = f"{rev} ({snapshot.rev[:12]})"
    if args.json:
        _print_json(snapshot.to_dict())
    else:
        _print_text(format_report(snapshot.to_dict(), label))
    return 0


USAGE = ("usage: git neo health [REV | --staged [--check]] [--include-tests] [--json]\n"
         "       git neo health --diff A B [--include-tests] [--json]\n"
         "       git neo health [REV] --history N [--json]")


def _count(text: str) -> int:
    from neo_git.cli.report import positive_count

    return positive_count(text)


def _usage_error(message: str) -> int:
    """Exit 2, as argparse does for a bad combination of options."""
    import sys

    print(f"{USAGE}\ngit neo health: error: {message}", file=sys.stderr)
    return 2


# Paths that are not UTF-8 reach us with surrogate escapes (pygit2 decodes them like
# os.fsdecode). JSON keeps them as \udcXX escapes, so `json.loads` + os.fsencode give
# back the original bytes; the text report shows U+FFFD instead, as a terminal would.

def _print_json(value: dict) -> None:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        print(json.dumps(value, indent=2))
        return
    print_json(value)


def _print_text(text: str) -> None:
    # File names come from the repository (a teammate's commit): control characters in them
    # are shown as escapes, line by line, so the report's own layout stays intact.
    from neo_git.cli.output import visible

    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    print("\n".join(visible(line) for line in text.split("\n")))


def _workers() -> int:
    """Parse a cold scan on up to 4 cores when a person is waiting at a terminal.

    Hooks get one process: git gives them /dev/null as stdin, and a commit must not
    fan out over the machine. On an idle 2-core machine the stdlib benchmark's cold
    scan drops from 1.65x to 1.00x the bare tree-sitter parse time; the pool only
    starts for 64+ uncached files, so warm and incremental scans never pay for it.
    """
    import sys

    try:
        interactive = sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        interactive = False
    return min(os.cpu_count() or 1, 4) if interactive else 1


def _open_repo():
    """The repository git would use here ($GIT_DIR and friends win, as in hooks)."""
    from neo_git.identity import open_repository

    return open_repository()


# --- human output ----------------------------------------------------------------

LIST_LIMIT = 10       # rows per section of the human report; --json has everything

_COLUMNS = (("files", "files"), ("lines", "lines"), ("functions", "functions"),
            ("god_files", "god files"), ("cycles", "cycles"), ("max_nesting", "max nesting"))


def format_report(data: dict, label: str) -> str:
    """The readable report of one snapshot dict."""
    out = [f"health of {label}"]
    if not data["files"]:
        out.append("no supported source files (Python, JavaScript, TypeScript, Go, Rust, Java)")
    else:
        out.append("")
        out += _language_table(data)
    thresholds = data.get("thresholds", {})
    out += [""] + _cycles_section(data)
    out += ["", f"god files (> {thresholds.get('god_file_lines', 800)} lines or "
                f"> {thresholds.get('god_file_functions', 30)} functions): {len(data['god_files'])}"]
    gods = sorted(data["god_files"], key=lambda g: (-g["lines"], g["path"]))  # biggest first
    for god in gods[:LIST_LIMIT]:
        out.append(f"  {god['path']}  {god['lines']:,} lines, {god['functions']} functions")
    out += _more(len(gods))
    out += ["", f"deepest nesting: {data['max_nesting']}"]
    for where in data["max_nesting_files"][:LIST_LIMIT]:
        out.append(f"  {where['path']}:{where['line']}" if where["line"] else f"  {where['path']}")
    out += _more(len(data["max_nesting_files"]))
    if data["skipped"]:
        counts = ", ".join(f"{reason.replace('_', ' ')} {n}" for reason, n in data["skipped"].items())
        out += ["", f"skipped: {counts}"]
    excluded = data.get("excluded") or {}
    if excluded:
        counts = ", ".join(f"{rule} {n}" for rule, n in excluded.items())
        if data.get("include_excluded"):
            out += ["", f"judged like the rest (--include-tests): {counts}"]
        else:
            out += ["", f"not judged as god files or by the guard: {counts} (--include-tests judges them too)"]
    errors = data.get("files_with_parse_errors") or []
    if errors:
        out.append(f"measured despite syntax errors: {len(errors)} file(s), e.g. {errors[0]}")
    return "\n".join(out)


def _cycles_section(data: dict) -> list[str]:
    """Import-time cycles (what loads in a loop), then the cycles that close only through a
    deferred import; each as a loop in import order, biggest tangle first."""
    from neo_git.health.cycles import Step, format_cycle

    def loop(component: list, path: list) -> str:
        steps = [Step(s["from"], s["to"], s["at"], s["deferred"]) for s in path]
        return format_cycle(steps) + (f"  ({len(component)} modules)" if len(component) > len(steps) else "")

    loading = sorted(zip(data["import_time_cycle_components"], data["import_time_cycle_paths"]),
                     key=lambda e: -len(e[0]))
    deferred = sorted(((c, p) for c, p in zip(data["cycle_components"], data["cycle_paths"])
                       if not p["import_time"]), key=lambda e: -len(e[0]))
    out = [f"import cycles: {data['cycles']} ({data['import_time_cycles']} at import time, "
           f"{len(deferred)} closing only through a deferred import)"]
    for number, (component, path) in enumerate(loading[:LIST_LIMIT], 1):
        out.append(f"  {number}. {loop(component, path)}")
    out += _more(len(loading))
    if deferred:
        out.append(" closing only through a deferred import (an import inside a function runs when it is called):")
    for number, (component, path) in enumerate(deferred[:LIST_LIMIT], 1):
        out.append(f"  {number}. {loop(component, path['path'])}")
        sites = path["deferred_imports"]
        more = f" and {len(sites) - 3} more" if len(sites) > 3 else ""
        out.append(f"     closes only through a deferred import at {', '.join(sites[:3])}{more}")
    out += _more(len(deferred))
    return out


def _more(count: int) -> list[str]:
    return [f"  … and {count - LIST_LIMIT} more (--json lists all)"] if count > LIST_LIMIT else []


def _language_table(data: dict) -> list[str]:
    rows = [[language] + [f"{row[key]:,}" for key, _ in _COLUMNS]
            for language, row in data["per_language"].items()]
    if len(rows) > 1:
        total = {"files": data["files"], "lines": data["lines"], "functions": data["functions"],
                 "god_files": len(data["god_files"]), "cycles": data["cycles"],
                 "max_nesting": data["max_nesting"]}
        rows.append(["total"] + [f"{total[key]:,}" for key, _ in _COLUMNS])
    header = ["language"] + [title for _, title in _COLUMNS]
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    def line(cells):
        return "  ".join([cells[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:])])
    return [line(header)] + [line(r) for r in rows]


def format_delta(data: dict, first: str, second: str) -> str:
    """The readable comparison of two snapshots."""
    before, after = data["before"], data["after"]
    out = [f"health {first} ({before['rev'][:12]}) -> {second} ({after['rev'][:12]}): {data['verdict']}"]
    out += [f"  {reason}" for reason in data["reasons"]]
    out.append("")
    rows = [("files", before["files"], after["files"]),
            ("lines", before["lines"], after["lines"]),
            ("god files", len(before["god_files"]), len(after["god_files"])),
            ("import cycles", before["cycles"], after["cycles"]),
            ("modules in cycles", len(before["modules_in_cycles"]), len(after["modules_in_cycles"])),
            ("max nesting", before["max_nesting"], after["max_nesting"])]
    out.append(f"{'':<18}{'before':>10}{'after':>10}{'change':>10}")
    for name, old, new in rows:
        change = f"{new - old:+,}" if new != old else "0"
        out.append(f"{name:<18}{old:>10,}{new:>10,}{change:>10}")
    if data["files"]:
        shown = data["files"][:LIST_LIMIT]
        more = f" and {len(data['files']) - LIST_LIMIT} more (--json lists all)" if len(data["files"]) > LIST_LIMIT else ""
        out += ["", "files responsible: " + ", ".join(shown) + more]
    return "\n".join(out)
