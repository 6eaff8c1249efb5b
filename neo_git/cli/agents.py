"""`git neo mcp | agent install … | turns`: how coding agents reach the memory."""
from __future__ import annotations

import argparse

from neo_git.cli.output import print_json, visible
from neo_git.cli.parser import json_flag

AGENTS = ("claude", "codex")


def register(sub) -> dict[str, str]:
    """Add mcp, agent, turns."""
    p = sub.add_parser("mcp", help="run the stdio MCP server agents start (needs git-neo[mcp])")

    p = sub.add_parser("agent", help="register git-neo with a coding agent: install claude|codex")
    p.add_argument("action", choices=("install",))
    p.add_argument("agent", choices=AGENTS)
    p.add_argument("--user", action="store_true", help="the user-level files instead of this project's")
    p.add_argument("--uninstall", action="store_true", help="remove what install added, restoring the files")
    p.add_argument("--dry-run", action="store_true", help="print the change without writing it")
    json_flag(p)

    p = sub.add_parser("turns", help="agents' turns: active, stale (no progress), finished, expired")
    p.add_argument("--all", "-a", action="store_true", help="every stored turn, not only each session's newest")
    p.add_argument("--show", metavar="SESSION",
                   help="one agent session's turns and the facts injected into each (and by which hook)")
    json_flag(p)
    return {"mcp": "cmd_mcp", "agent": "cmd_agent", "turns": "cmd_turns"}


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the memory over MCP on stdin/stdout until the client closes it."""
    from neo_git.agents.mcp_server import serve

    return serve()


def cmd_agent(args: argparse.Namespace) -> int:
    """Install or uninstall the MCP registration and hooks for one agent."""
    from neo_git.agents.install import agent_install

    report = agent_install(args.agent, user=args.user, uninstall=args.uninstall, dry_run=args.dry_run)
    if args.json:
        print_json(report)
        return 0
    verb = "would change" if args.dry_run else "changed"
    for item in report["files"]:
        if item["action"] == "unchanged":
            print(f"{item['path']}: already {'clean' if args.uninstall else 'set up'}")
            continue
        print(f"{verb} {item['path']}: {item['action']}")
        if args.dry_run and item.get("diff"):
            print(item["diff"], end="" if item["diff"].endswith("\n") else "\n")
    return 0


def cmd_turns(args: argparse.Namespace) -> int:
    """Each agent session's newest turn and its state."""
    import time

    from neo_git.agents.turns import load_turns, newest_per_agent
    from neo_git.identity import open_repository, repository_paths

    paths = repository_paths(open_repository())
    now = time.time()
    stored = load_turns(paths)
    if args.show is not None:
        return _show_session(args, stored, now)
    shown = sorted(stored, key=lambda t: t.started_at, reverse=True) if args.all else newest_per_agent(stored)
    views = [t.to_view(now) for t in shown]
    if args.json:
        print_json(views)
        return 0
    if not views:
        print("no agent turns recorded (`git neo agent install claude|codex` sets up the hooks)")
        return 0
    for view in views:
        state = view["status"] + (f" ({view['terminal_state']})" if view["terminal_state"] else "")
        print(visible(f"{view['agent']:<7} {view['session_id'][:20]:<20} {state:<22} started {view['started_at']}  "
                      f"last progress {view['seconds_since_progress']:.0f}s ago"))
    return 0


def _show_session(args: argparse.Namespace, stored: list, now: float) -> int:
    """`git neo turns --show SESSION`: each turn of the session and what memory injected into it."""
    from neo_git.agents.turns import session_turns
    from neo_git.errors import NeoError
    from neo_git.store import FactStore

    chosen = session_turns(stored, args.show.strip())
    if not chosen:
        raise NeoError(f"no turns recorded for agent session '{args.show}'",
                       "`git neo turns --all` lists the sessions on record")
    store = FactStore.open()
    known = {f.id: f for f in store.list(include_invalid=True)}
    views = []
    for turn in chosen:
        view = turn.to_view(now)
        for entry in view["injected"]:
            entry["facts"] = [{"id": i, **({"subject": known[i].subject, "kind": known[i].kind.value,
                                           "valid": known[i].is_valid} if i in known else {"missing": True})}
                              for i in entry["ids"]]
        views.append(view)
    if args.json:
        print_json(views)
        return 0
    for view in views:
        state = view["status"] + (f" ({view['terminal_state']})" if view["terminal_state"] else "")
        print(visible(f"turn {view['turn_id']}  {view['agent']} session {view['session_id']}  {state}  "
                      f"started {view['started_at']}"))
        if not view["injected"]:
            print("  nothing injected")
        for entry in view["injected"]:
            print(f"  {entry['hook']} at {entry['at']}:")
            for fact in entry["facts"]:
                if fact.get("missing"):
                    print(f"    {fact['id']}  (no longer in the store)")
                else:
                    note = "" if fact["valid"] else "  [no longer valid]"
                    print(visible(f"    {fact['id']}  {fact['kind']:<13} {fact['subject']}") + note)
    return 0
