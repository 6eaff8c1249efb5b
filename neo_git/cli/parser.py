"""The argparse parser for `git neo`. Only argparse is imported here: `-h` stays instant."""
from __future__ import annotations

import argparse

KINDS = ("constraint", "architecture", "pattern", "review", "decision", "known_unknown", "failure")
SCOPES = ("global", "org", "project", "session")

# command name -> "module:function" under neo_git.cli; imported only when the command runs.
COMMANDS = {
    "init": "facts:cmd_init",
    "add": "facts:cmd_add",
    "list": "facts:cmd_list",
    "show": "facts:cmd_show",
    "recall": "facts:cmd_recall",
    "why": "facts:cmd_why",
    "history": "facts:cmd_history",
    "restore": "facts:cmd_restore",
    "import": "transfer:cmd_import",
    "export": "transfer:cmd_export",
    "model": "model:cmd_model",
    "health": "health:cmd_health",
    "demo": "demo:cmd_demo",
    "help": "help",
}

DESCRIPTION = "git-neo: team-shared, self-correcting memory of a codebase, kept in git."


def _json_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def build_parser() -> argparse.ArgumentParser:
    """Build the full `git neo` parser (cheap: no heavy imports)."""
    parser = argparse.ArgumentParser(prog="git neo", description=DESCRIPTION)
    parser.add_argument("-C", dest="chdir", metavar="PATH", help="run as if started in PATH")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("init", help="set up refs/neo/facts and .git/neo in this repository")
    _json_flag(p)

    p = sub.add_parser("add", help="add a fact (supersedes a paraphrased older one)")
    p.add_argument("subject")
    p.add_argument("body", nargs="?", default="")
    p.add_argument("--kind", "-k", default="pattern", choices=KINDS, metavar="KIND",
                   help="one of: " + ", ".join(KINDS) + " (default: pattern)")
    p.add_argument("--scope", "-s", default="project", choices=SCOPES, metavar="SCOPE",
                   help="one of: " + ", ".join(SCOPES) + " (default: project)")
    p.add_argument("--tag", "-t", action="append", default=[], dest="tags", metavar="TAG")
    p.add_argument("--depends-on", action="append", default=[], metavar="ID")
    p.add_argument("--supersedes", metavar="ID", help="replace this fact explicitly")
    p.add_argument("--confidence", type=float, default=0.5, metavar="X", help="0..1 (default 0.5)")
    _json_flag(p)

    p = sub.add_parser("list", help="list facts")
    p.add_argument("--scope", "-s", choices=SCOPES, metavar="SCOPE")
    p.add_argument("--kind", "-k", choices=KINDS, metavar="KIND")
    p.add_argument("--all", "-a", action="store_true", help="include superseded/invalid facts")
    _json_flag(p)

    for name, text in (("show", "show one fact"),
                       ("why", "explain why a fact is in its state"),
                       ("history", "the supersession chain of a fact, oldest first"),
                       ("restore", "bring back a wrongly superseded or evicted fact")):
        p = sub.add_parser(name, help=text)
        p.add_argument("id", help="fact id (a unique prefix of at least 4 hex digits works)")
        _json_flag(p)

    p = sub.add_parser("recall", help="the facts relevant to a question, in layers")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=5, dest="k", help="ranked facts to return (default 5)")
    p.add_argument("--max-tokens", type=int, default=12000, help="token budget (default 12000)")
    _json_flag(p)

    p = sub.add_parser("import", help="import a Neo v2.0 facts file")
    p.add_argument("file")
    p.add_argument("--scope", "-s", choices=SCOPES, metavar="SCOPE",
                   help="put every fact in this scope (default: the scope in the file)")
    _json_flag(p)

    p = sub.add_parser("export", help="write facts as a Neo v2.0 facts file")
    p.add_argument("file", nargs="?", default="-", help="output path (default: stdout)")
    p.add_argument("--scope", "-s", choices=SCOPES, metavar="SCOPE")
    p.add_argument("--all", "-a", action="store_true", help="include superseded/invalid facts")

    p = sub.add_parser("model", help="embedding model: status | pull [NAME]")
    p.add_argument("action", nargs="?", default="status", choices=("status", "pull"))
    p.add_argument("name", nargs="?", help="model name (default: the configured one)")
    _json_flag(p)

    p = sub.add_parser("health", help="code health: import cycles, god files, nesting")
    p.add_argument("rev", nargs="?", default=None, help="commit to measure (default HEAD)")
    p.add_argument("--staged", action="store_true", help="measure the index instead of a commit")
    p.add_argument("--diff", nargs=2, metavar=("A", "B"), help="compare two revisions")
    _json_flag(p)

    p = sub.add_parser("demo", help="run the offline demo on a throwaway repository")
    p.add_argument("--keep", action="store_true", help="keep the demo repository and print its path")

    p = sub.add_parser("help", help="show help for git neo or one command")
    p.add_argument("topic", nargs="?")
    return parser
