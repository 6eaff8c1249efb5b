"""`git-neo-guard`: the pre-commit guard as the pre-commit framework runs it (`neo-guard` in
`.pre-commit-hooks.yaml`), under the same hard time limit as the shell shim.

The framework treats any exit but 0 as "blocked", so the guard cannot run in the framework's
own process: an interpreter that hangs past the guard's in-process limit (faulthandler ends it
with status 1) would block the commit. This supervisor imports nothing of git-neo but the limit
(`limit.py`): it starts `python -m neo_git hook pre-commit --block-exit 86 --timeout-ms N` with
the limit it decided, waits that long (+1 s for the guard's own clean give-up), and maps what happened as `hooks/pre-commit` does: 86 blocks (exit
1), a time-out lets the commit through with a warning (blocks with `neo.strict=true`), anything
else (a crash, a missing module) lets it through. The guard runs in a process group of its own,
and the whole group is ended at the limit: a descendant left running would keep git's output
pipes open, and a caller reading them would wait for it although the commit is done.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

from neo_git.githooks.limit import SETTING, limit_ms

BLOCK = 86


def _git_config(*args: str) -> str:
    try:
        return subprocess.run(["git", "config", *args], capture_output=True, text=True, timeout=10,
                              stdin=subprocess.DEVNULL).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def configured_limit_ms() -> int:
    """neo.guardTimeoutMs as git config holds it (files, includes, `-c`), by `limit.limit_ms`'s rule."""
    return limit_ms(_git_config("--get", SETTING) or None)


def _end_group(child: subprocess.Popen) -> None:
    """Kill the guard and every process it started (its process group), then reap it."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except OSError:          # the group is already gone
        child.kill()
    child.wait()


def main() -> int:
    """Run the guard in a child process; the framework's exit code."""
    ms = configured_limit_ms()
    command = [sys.executable, "-m", "neo_git", "hook", "pre-commit", "--block-exit", str(BLOCK),
               "--timeout-ms", str(ms)]
    try:
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:              # no interpreter to start: never the commit's problem
        print(f"git-neo guard: not run ({exc}), commit allowed", file=sys.stderr)
        return 0
    try:
        status = child.wait(timeout=ms / 1000 + 1)
    except subprocess.TimeoutExpired:
        _end_group(child)
        strict = _git_config("--bool", "--get", "neo.strict") == "true"
        print(f"git-neo guard: no answer within {ms} ms ({SETTING}), "
              f"{'blocking (neo.strict=true)' if strict else 'commit allowed'}", file=sys.stderr)
        return 1 if strict else 0
    except BaseException:               # Ctrl-C: the guard, in a session of its own, did not see it
        _end_group(child)
        raise
    return 1 if status == BLOCK else 0


if __name__ == "__main__":
    raise SystemExit(main())
