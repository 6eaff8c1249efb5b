"""The parser: one command imports only its group's module, and the command table says
exactly what the groups register."""
from __future__ import annotations

import subprocess
import sys

from neo_git.cli.parser import COMMAND_GROUPS, GROUPS, build_parser, command_in


def test_the_command_table_matches_what_the_groups_register():
    _, commands = build_parser()
    registered = {name: target.split(":")[0] for name, target in commands.items() if name != "help"}
    assert registered == COMMAND_GROUPS
    assert set(COMMAND_GROUPS.values()) == set(GROUPS)


def test_command_in_skips_dash_c_and_stops_at_options():
    assert command_in(["-C", "some/dir", "recall", "q"]) == "recall"
    assert command_in(["-Csome/dir", "list"]) == "list"
    assert command_in(["-h"]) is None and command_in([]) is None


def test_running_one_command_imports_only_its_group():
    code = ("import sys\nfrom neo_git.cli import main\nmain(['list', '-h'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('neo_git.cli.')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    loaded = proc.stdout.strip().splitlines()[-1]
    assert "neo_git.cli.facts" in loaded and "neo_git.cli.ask" not in loaded and "neo_git.cli.sync" not in loaded
