"""`git neo suggest`, `git neo outcomes`, `git neo install [--uninstall]`: the outcome loop."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from neo_git.cli.output import print_json, visible
from neo_git.cli.parser import json_flag
from neo_git.errors import NeoError

MAX_INPUT_BYTES = 256 * 1024


def register(sub) -> dict[str, str]:
    """Add suggest, outcomes, install."""
    p = sub.add_parser("suggest", help="record a suggestion, to learn later whether it shipped")
    p.add_argument("--file", required=True, metavar="PATH", help="the file the suggestion is about")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--code-file", metavar="F", help="a file holding the suggested code ('-' for stdin)")
    source.add_argument("--diff-file", metavar="F", help="a file holding a unified diff ('-' for stdin)")
    p.add_argument("--fact", action="append", default=[], metavar="ID", help="a fact the advice relied on")
    p.add_argument("--description", default="", metavar="T", help="what the suggestion does")
    json_flag(p)

    p = sub.add_parser("outcomes", help="what became of recent suggestions, with the health verdict")
    p.add_argument("-n", type=int, default=20, dest="limit", help="outcomes to show (default 20)")
    p.add_argument("--wait", nargs="?", type=float, const=30.0, default=None, metavar="SECONDS",
                   help="first wait (default at most 30 s) for the hooks' background worker to finish with HEAD: "
                        "right after a commit its outcome may not be recorded yet")
    json_flag(p)

    p = sub.add_parser("install", help="install the git hooks (existing hooks are kept and chained)")
    p.add_argument("--uninstall", action="store_true", help="remove them and restore what was there")
    p.add_argument("--remote", metavar="R", help="also share facts with R (records neo.remote) and let a plain "
                   "`git fetch R` bring the facts and notes (forced refspecs into tracking refs only, like a branch's: "
                   "your own refs/neo/facts and refs/notes/neo are never a fetch's destination)")
    json_flag(p)
    return {"suggest": "cmd_suggest", "outcomes": "cmd_outcomes", "install": "cmd_install"}


def _read_input(name: str) -> str:
    if name == "-":
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        try:
            with open(name, "rb") as handle:
                data = handle.read(MAX_INPUT_BYTES + 1)
        except OSError as exc:
            raise NeoError(f"cannot read {name}: {exc.strerror}", "pass an existing file") from None
    if len(data) > MAX_INPUT_BYTES:
        raise NeoError(f"{name} is larger than {MAX_INPUT_BYTES // 1024} KiB", "suggest the part that changes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise NeoError(f"{name} is not UTF-8 text", "suggestions are source code") from None


def cmd_suggest(args: argparse.Namespace) -> int:
    """Record a pending suggestion."""
    from neo_git.outcomes.suggestions import normalise_path, record_suggestion, resolve_fact_ids
    from neo_git.store import FactStore

    code = _read_input(args.code_file) if args.code_file else None
    diff = _read_input(args.diff_file) if args.diff_file else None
    store = FactStore.open()
    repo, paths = store.repo, store.paths
    assert repo is not None and paths is not None   # opened from a repository
    file = args.file
    if not Path(file).is_absolute() and paths.workdir is not None:
        # a path typed in a subfolder is relative to it, as for git itself
        file = str((Path.cwd() / file).resolve())
    relative = normalise_path(file, paths.workdir)   # refuses a path outside the work tree
    where = (Path(paths.workdir) / relative) if paths.workdir is not None else None
    if where is not None and where.is_dir():
        raise NeoError(f"{args.file} is a directory", "a suggestion is about one file")
    fact_ids = resolve_fact_ids(store, args.fact)    # prefixes as `recall` prints them; refuses retired facts
    suggestion = record_suggestion(repo, paths, file=file, code=code, diff=diff, description=args.description,
                                   fact_ids=fact_ids, origin="person")
    if where is not None and not where.exists():
        print(f"warning: {visible(relative)} is not in the work tree yet; the suggestion matches when a commit adds it",
              file=sys.stderr)
    if args.json:
        print_json(suggestion.to_dict())
    else:
        print(f"recorded suggestion {suggestion.id} for {visible(suggestion.file)}"
              + (f" (relies on {len(suggestion.fact_ids)} fact(s))" if suggestion.fact_ids else ""))
    return 0


def cmd_outcomes(args: argparse.Namespace) -> int:
    """Recent outcomes (from the notes) and suggestions still pending."""
    from neo_git.identity import open_repository, repository_paths
    from neo_git.outcomes.history import agent_summary, outcome_records, recent_outcomes
    from neo_git.outcomes.suggestions import load_suggestions

    repo = open_repository()
    if args.wait is not None:
        from neo_git.githooks.install import hooks_installed
        from neo_git.outcomes.waiting import wait_for_worker

        paths = repository_paths(repo)
        if not wait_for_worker(repo, paths, args.wait, hooks_installed(paths)):
            print(f"warning: the hooks' background worker has not finished with HEAD within {args.wait:g} s; "
                  "showing what is recorded so far (.git/neo/hook.log says what it is doing)", file=sys.stderr)
    records = recent_outcomes(repo, max(1, args.limit))
    pending = load_suggestions(repository_paths(repo), status="pending")
    agents = agent_summary(outcome_records(repo))
    if args.json:
        print_json({"outcomes": records, "pending": [s.to_dict() for s in pending], "agents": agents})
        return 0
    if not records and not pending:
        print("no outcomes yet: record advice with `git neo suggest` (or `git neo ask`), "
              "install the hooks with `git neo install`, and commit")
        return 0
    for r in records:
        print(visible(format_outcome(r), keep_newlines=True))   # notes come from teammates too
    for agent, row in sorted(agents.items()):
        total = row["accepted"] + row["modified"]
        print(f"\nagent {agent}: {row['accepted']} of {total} recorded edits shipped as written "
              f"({row['shipped_unchanged']:.0%}), {row['modified']} changed by a person first, "
              f"over {len(row['sessions'])} session(s)")
    if pending:
        print(f"\npending: {len(pending)} suggestion(s) not shipped yet")
        for s in pending[-10:]:
            print(visible(f"  {s.id[:8]}  {s.file}  {_who(s.to_dict())}  {s.description[:60]}"))
    return 0


def _who(record: dict) -> str:
    origin = record.get("origin") or ""
    if origin == "agent":
        turn = f" turn {record['turn_id']}" if record.get("turn_id") else ""
        return f"agent {record.get('agent') or '?'} (session {str(record.get('session_id') or '?')[:12]}{turn})"
    return origin


def format_outcome(r: dict) -> str:
    """One outcome record as a short block."""
    commit = str(r.get("commit", ""))[:10]
    verdict = str(r.get("verdict", "")).upper()
    head = f"{commit}  {verdict:<11} {r.get('file', '')}"
    if r.get("health"):
        head += f"  health: {r['health']}"
    lines = [head]
    if r.get("suggestion"):
        desc = f" — {r['description']}" if r.get("description") else ""
        lines.append(f"    suggestion {str(r['suggestion'])[:8]} by {_who(r)}{desc}")
    if r.get("revised_by"):
        lines.append(f"    revised by its author's later suggestion {str(r['revised_by'])[:8]}, which shipped: "
                     "no fact moved")
    for moved in r.get("facts") or ():
        before, after = (moved.get("confidence") or [0, 0])[:2]
        lines.append(f"    fact {str(moved.get('id'))[:8]}: confidence {before:.2f} -> {after:.2f}, "
                     f"successes {moved.get('success_count', ['?', '?'])[1]}")
    return "\n".join(lines)


def cmd_install(args: argparse.Namespace) -> int:
    """Install or remove the hook shims."""
    from neo_git.githooks.install import install, uninstall
    from neo_git.identity import open_repository

    repo = open_repository()
    report = uninstall(repo) if args.uninstall else install(repo)
    refspecs = _configure_remote(repo, args.remote, args.uninstall) if args.remote else []
    if args.json:
        if args.remote:
            from neo_git.cli.sync import record_choice

            record_choice(repo, args.remote, args.uninstall, quiet=True)
        print_json(report.to_dict() | ({"remote_fetch": refspecs} if args.remote else {}))
        return 0
    for spec in refspecs:
        print(f"{'removed' if args.uninstall else 'added'} remote.{args.remote}.fetch {spec}")
    if args.remote:
        from neo_git.cli.sync import record_choice

        record_choice(repo, args.remote, args.uninstall, quiet=False)
    if args.uninstall:
        print(f"removed git-neo hooks from {report.hooks_dir}: "
              + (", ".join(report.removed + report.restored) or "none were installed"))
        if report.restored:
            print("  restored your own hooks: " + ", ".join(report.restored))
    else:
        print(f"installed git-neo hooks in {report.hooks_dir}: {', '.join(report.installed)}")
        if report.chained:
            print("  your existing hooks still run first: " + ", ".join(report.chained))
        if report.rewrite_ref == "added":
            print("  notes.rewriteRef=refs/notes/neo: outcome notes follow amend and rebase")
    for line in report.skipped:
        print(f"warning: {line}", file=sys.stderr)
    if not args.uninstall:
        _warn_unreachable(repo)
    return 0


def _warn_unreachable(repo) -> None:
    """The doctor's PATH check, at the moment it matters most: right after installing the hooks."""
    from neo_git.doctor import context
    from neo_git.doctor.reachability import check_reachable

    for finding in check_reachable(context(repo)):
        if finding.action != "catch-up":
            print(f"warning: {finding.problem}", file=sys.stderr)
            if finding.hint:
                print(f"hint: {finding.hint}", file=sys.stderr)


def _configure_remote(repo, remote: str, remove: bool) -> list[str]:
    """`--remote`: the sync work's fetch refspecs (neo_git.sync.configure_remote_fetch)."""
    from neo_git.sync import configure_remote_fetch

    return configure_remote_fetch(repo, remote, remove=remove)


def format_fact_outcomes(history: list[dict]) -> str:
    """`git neo show`: the commits that moved a fact's confidence, and why."""
    lines = ["Outcomes (commits that moved its confidence):"]
    for h in history:
        before, after = (h.get("confidence") or [0, 0])[:2]
        health = f", health {h['health']}" if h.get("health") else ""
        lines.append(f"  {str(h.get('commit'))[:10]}  {h.get('verdict')}  {h.get('file')}{health}: "
                     f"confidence {before:.2f} -> {after:.2f}")
    return "\n".join(lines)
