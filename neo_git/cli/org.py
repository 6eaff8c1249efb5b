"""`git neo org connect|sync|disconnect|status`: the org's memory shared through a git remote."""
from __future__ import annotations

import argparse

from neo_git.cli.output import print_json, visible, warn
from neo_git.cli.parser import json_flag


def register(sub) -> dict[str, str]:
    """Add `org` and its actions."""
    p = sub.add_parser("org", help="share org facts through a git remote (connect, sync, disconnect, status)")
    actions = p.add_subparsers(dest="org_action", metavar="ACTION")
    a = actions.add_parser("connect", help="keep org facts in ~/.neo/org/<org>.git, synced with URL")
    a.add_argument("url", help="the git remote that holds the org's memory")
    _org_args(a)
    a = actions.add_parser("sync", help="fetch, merge and push the org memory")
    _org_args(a)
    a = actions.add_parser("disconnect", help="return to the plain facts_org_<org>.json (nothing is lost)")
    _org_args(a)
    a = actions.add_parser("status", help="whether the org memory is connected, to what")
    _org_args(a)
    return {"org": "cmd_org"}


def _org_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--org", metavar="NAME", help="the organisation (default: this repository's org id)")
    json_flag(p)


def _store():
    from neo_git.store import FactStore

    return FactStore.open()


def cmd_org(args: argparse.Namespace) -> int:
    """Dispatch to the org action."""
    from neo_git.errors import NeoError

    action = getattr(args, "org_action", None)
    if action is None:
        raise NeoError("`git neo org` needs an action", "connect URL | sync | disconnect | status")
    return {"connect": _connect, "sync": _sync, "disconnect": _disconnect, "status": _status}[action](args)


def _connect(args: argparse.Namespace) -> int:
    from neo_git.org import connect

    report = connect(_store(), args.url, args.org)
    warn(report["warnings"])
    if args.json:
        print_json(report)
        return 0
    print(f"org '{report['org']}' connected: {report['path']} <-> {visible(report['url'])}")
    if report["imported"] or report["file_moved_to"]:
        print(f"moved {report['imported']} facts from the org file into it (file kept as {report['file_moved_to']})")
    synced = report["sync"]
    if synced:
        print(f"org facts: {synced['facts']}" + (f" ({synced['summary']})" if synced["summary"] else ""))
        if synced["pushed"]:
            print(f"pushed to {visible(report['url'])}: {', '.join(synced['pushed'])}")
    return 0


def cmd_sync_org(args: argparse.Namespace) -> int:
    """`git neo sync --org`: the same as `git neo org sync`."""
    return _sync(args)


def _sync(args: argparse.Namespace) -> int:
    from neo_git.org import sync_org

    named = getattr(args, "org", None)  # `git neo sync --org` alone gives True: this repository's org
    report = sync_org(_store(), named if isinstance(named, str) else None)
    warn(report.warnings)
    if args.json:
        print_json(report.to_dict())
        return 0
    print(f"org facts: {report.facts}" + (f" ({report.summary})" if report.summary else ""))
    for line in report.keys:
        print(visible(f"trust: {line}"))
    if report.pushed:
        print(f"pushed to {report.remote}: {', '.join(report.pushed)}")
    return 0


def _disconnect(args: argparse.Namespace) -> int:
    from neo_git.org import disconnect

    report = disconnect(_store(), args.org)
    warn(report["warnings"])
    if args.json:
        print_json(report)
        return 0
    print(f"org '{report['org']}' disconnected: its {report['facts']} facts are in {report['file']}")
    print(f"the org memory's history is kept at {report['history_kept_at']}; {visible(report['url'])} is untouched")
    if report["unpushed"]:
        print("note: it held changes never pushed to the remote; they are in the file")
    return 0


def _status(args: argparse.Namespace) -> int:
    from neo_git.org import org_status

    status = org_status(_store(), args.org)
    if args.json:
        print_json(status)
    elif status["connected"]:
        print(f"org '{status['org']}': connected to {visible(status['url'])} ({status['path']}), "
              f"{status['facts']} facts")
    else:
        print(f"org '{status['org']}': not connected; {status['facts']} facts in {status['file']}")
    return 0
