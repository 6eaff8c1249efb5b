"""The argparse parser for `git neo`. Only argparse and the small command modules are
imported here (each keeps numpy, pygit2, tree-sitter and SDKs inside its functions), so
`-h` stays instant.

Each command group is one module under `neo_git.cli` with a `register(sub)` function
that adds its subcommands and returns {command: "module:function"}; adding a group is
one line in GROUPS.
"""
from __future__ import annotations

import argparse
import importlib

from neo_git.facts import FactKind, FactScope

# Choices come from the enums themselves (facts.py imports only the standard library).
KINDS = tuple(k.value for k in FactKind)
SCOPES = tuple(s.value for s in FactScope)

# Command groups, in the order `git neo -h` lists them.
GROUPS = ("facts", "verify", "review", "transfer", "sync", "org", "model", "health", "report", "upkeep",
          "construct", "outcomes", "ask", "agents", "hook", "doctor", "demo")

# command -> its group, so running one command imports one command module, not all of them
# (tests/test_cli_parser.py checks this table against what the groups register).
COMMAND_GROUPS = {
    "init": "facts", "add": "facts", "list": "facts", "show": "facts", "recall": "facts", "why": "facts",
    "history": "facts", "restore": "facts", "verify": "verify", "review": "review", "invalidate": "review", "import": "transfer",
    "export": "transfer", "sync": "sync", "pull": "sync", "push": "sync", "trust": "sync", "org": "org", "model": "model",
    "health": "health", "report": "report", "gc": "upkeep", "ingest": "upkeep", "construct": "construct",
    "suggest": "outcomes", "outcomes": "outcomes", "install": "outcomes", "ask": "ask", "stats": "ask", "mcp": "agents",
    "agent": "agents", "turns": "agents", "hook": "hook", "doctor": "doctor", "demo": "demo",
}

DESCRIPTION = "git-neo: team-shared, self-correcting memory of a codebase, kept in git."


def json_flag(p: argparse.ArgumentParser) -> None:
    """Add the `--json` flag every read command takes."""
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def command_in(argv: list[str]) -> str | None:
    """The command word of *argv* (after any `-C PATH`), or None."""
    rest = list(argv)
    while rest:
        word = rest.pop(0)
        if word == "-C":
            rest = rest[1:]
        elif not word.startswith("-"):
            return word
        elif not word.startswith("-C"):
            return None  # -h and friends: the whole parser
    return None


def build_parser(command: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, str]]:
    """The `git neo` parser and {command: "module:function"} (cheap: no heavy imports). For a
    known *command* only its group is registered; otherwise every group (help, a typo)."""
    parser = argparse.ArgumentParser(prog="git neo", description=DESCRIPTION)
    parser.add_argument("-C", dest="chdir", metavar="PATH", help="run as if started in PATH")
    parser.add_argument("--version", action="store_true", help="print the version and the embedder in use")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands: dict[str, str] = {}
    group_of = COMMAND_GROUPS.get(command or "")
    for group in (group_of,) if group_of else GROUPS:
        module = importlib.import_module(f"neo_git.cli.{group}")
        for name, target in module.register(sub).items():
            commands[name] = target if ":" in target else f"{group}:{target}"
    p = sub.add_parser("help", help="show help for git neo or one command")
    p.add_argument("topic", nargs="?")
    commands["help"] = "help"
    return parser, commands
