"""The README's first command: `python -m neo_git demo` runs the loop offline and leaves nothing behind."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_demo_runs_offline_and_cleans_up(tmp_path, isolated_env):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "neo_git", "demo"], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "supersedes" in out                          # the paraphrased decision replaced the first
    assert "Changed (no longer true):" in out           # recall shows what changed
    assert "because it restates the same subject" in out or "because their similarity" in out  # why: the rule
    assert "import cycles: 1" in out                    # health found the planted cycle
    assert ": improvement" in out                       # and the fix commit is judged an improvement
    assert "ACCEPTED    app/config.py  health: improvement" in out   # the outcome loop saw the advice ship
    assert "architecture/dependency-inversion" in out   # a curated pattern for the cycle
    assert out.rstrip().endswith("offline on a throwaway repository.")
    assert list(tmp_path.iterdir()) == []               # the throwaway repository is gone
    assert not (Path(isolated_env) / ".neo").exists()   # the user's ~/.neo was never touched
    _printed_commands_run_as_shown(out)


def _printed_commands_run_as_shown(out: str) -> None:
    """Every `$ git neo …` line is what a shell needs: split like a shell splits it, it is a
    command line `git neo` accepts, and subjects with spaces stay one argument."""
    import shlex

    from neo_git.cli.parser import build_parser

    commands = [shlex.split(line[2:], comments=True) for line in out.splitlines() if line.startswith("$ ")]
    neo = [argv[2:] for argv in commands if argv[:2] == ["git", "neo"]]
    assert len(neo) >= 10 and ["git", "commit", "-am", "config no longer imports http"] in commands
    for argv in neo:
        parser, _ = build_parser(argv[0])
        parser.parse_args(argv)                          # exits (fails the test) on anything unparsable
    assert ["add", "--kind", "constraint", "No network calls in hooks",
            "Post-commit work must never touch the network."] in neo
