"""`git-neo-guard`: the pre-commit guard as the pre-commit framework runs it (`neo-guard` in
`.pre-commit-hooks.yaml`), under the same hard time limit as the shell shim.

The framework treats any exit but 0 as "blocked", so the guard cannot run in the framework's
own process: an interpreter that hangs past the guard's in-process limit (faulthandler ends it
with status 1) would block the commit. This supervisor imports nothing of git-neo: it starts
`python -m neo_git hook pre-commit --block-exit 86`, waits `neo.guardTimeoutMs` (+1 s for the
guard's own clean give-up), and maps what happened as `hooks/pre-commit` does: 86 blocks (exit
1), a time-out lets the commit through with a warning (blocks with `neo.strict=true`), anything
else (a crash, a missing module) lets it through.
"""
from __future__ import annotations

import subprocess
import sys

BLOCK = 86
DEFAULT_TIMEOUT_MS = 10_000   # githooks/guard.py DEFAULT_TIMEOUT_MS (not imported: nothing heavy here)


def _git_config(*args: str) -> str:
    try:
        return subprocess.run(["git", "config", *args], capture_output=True, text=True, timeout=10,
                              stdin=subprocess.DEVNULL).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _limit_ms() -> int:
    value = _git_config("--get", "neo.guardTimeoutMs")
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_TIMEOUT_MS


def main() -> int:
    """Run the guard in a child process; the framework's exit code."""
    ms = _limit_ms()
    command = [sys.executable, "-m", "neo_git", "hook", "pre-commit", "--block-exit", str(BLOCK),
               "--timeout-ms", str(ms)]
    try:
        status = subprocess.run(command, stdin=subprocess.DEVNULL, timeout=ms / 1000 + 1).returncode
    except subprocess.TimeoutExpired:   # run() has killed the child
        strict = _git_config("--bool", "--get", "neo.strict") == "true"
        print(f"git-neo guard: no answer within {ms} ms (neo.guardTimeoutMs), "
              f"{'blocking (neo.strict=true)' if strict else 'commit allowed'}", file=sys.stderr)
        return 1 if strict else 0
    except OSError as exc:              # no interpreter to start: never the commit's problem
        print(f"git-neo guard: not run ({exc}), commit allowed", file=sys.stderr)
        return 0
    return 1 if status == BLOCK else 0


if __name__ == "__main__":
    raise SystemExit(main())
