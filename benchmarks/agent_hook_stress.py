"""Agent hooks under stress: N prompt-submit hooks started at once, and hooks whose stdin
never closes, spawn to exit, next to the same number of bare interpreters.

    .venv/bin/python benchmarks/agent_hook_stress.py [--concurrent N] [--runs R]

Each row is the median over --runs rounds of the round's slowest process (what an agent
waiting on all of them sees) and of its median process. Rounds of `python -c pass` started
the same way are the floor: on a 2-core machine twenty interpreters alone take a while.
The limit (`neo.agentHookTimeoutMs`, 1.5 s) counts from the spawn; a hook out of time exits
0 with no output, so "answered" says how many still gave context.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import machine_info, median, ms, ratio, scratch_dir, table  # noqa: E402


def _round(argv: list[str], cwd: Path, payloads: list[bytes] | None, keep_open: bool) -> tuple[float, float, int]:
    procs = []
    count = len(payloads) if payloads else 0
    for n in range(count):
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)
        proc.stdin.write(payloads[n])
        proc.stdin.flush()
        if not keep_open:
            proc.stdin.close()
        procs.append((proc, start))
    times, answered = [], 0
    for proc, start in procs:
        proc.wait()
        times.append(time.monotonic() - start)
        answered += bool(proc.stdout.read().strip())
        if proc.stdin and not proc.stdin.closed:
            proc.stdin.close()
    return max(times), median(times), answered


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with scratch_dir("neo-hook-stress") as root:
        repo = root / "repo"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@example.com",
                        "commit", "-q", "--allow-empty", "-m", "x"], check=True)
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from neo_git.store import FactStore

        store = FactStore.open(repo, embedder="hash")
        for n in range(200):
            store.add(f"rule {n} about the http client", f"body {n}: outbound calls use httpx, timeout {n} s")
        hook = [sys.executable, "-m", "neo_git.cli", "hook", "agent", "prompt-submit", "--agent", "claude"]
        rows = []
        floor = None
        for label, argv, keep_open in (("python -c pass", [sys.executable, "-c", "pass"], False),
                                       ("prompt-submit hook", hook, False),
                                       ("prompt-submit hook, stdin never closed", hook, True)):
            slowest, typical, answered = [], [], []
            for run in range(args.runs):
                payloads = [json.dumps({"session_id": f"r{run}-s{n}", "cwd": str(repo), "prompt": "which http client?",
                                        "hook_event_name": "UserPromptSubmit"}).encode()
                            for n in range(args.concurrent)]
                worst, mid, ok = _round(argv, repo, payloads, keep_open)
                slowest.append(worst), typical.append(mid), answered.append(ok)
            if floor is None:
                floor = median(slowest)
            rows.append([f"{label} ×{args.concurrent}", ms(median(slowest)), ms(median(typical)),
                         ratio(median(slowest), floor), f"{median(answered):.0f}/{args.concurrent}"])
        print(machine_info())
        print(table(["what", "slowest (median of rounds)", "median process", "vs floor", "answered"], rows))


if __name__ == "__main__":
    main()
