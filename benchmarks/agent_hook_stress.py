"""Agent hooks under stress: N prompt-submit hooks started at once, with and without the
agent's `git neo mcp` server running, and with stdin never closed; spawn to exit, next to
the same number of bare interpreters.

    .venv/bin/python benchmarks/agent_hook_stress.py [--concurrent N] [--runs R] [--facts F]

Each row gives, over --runs rounds: the median of the rounds' median process and slowest
process (what an agent waiting on all of them sees), how many answered with context (the
median round), and the CPU: per hook process (user + system of the processes the agent
spawned, from getrusage), and, with the server, the server's CPU per hook (/proc). The limit
(`neo.agentHookTimeoutMs`, 1.5 s) counts from the spawn; a hook out of time exits 0 with
no output, so "answered" says how many gave context in time. Rounds of `python -c pass`
started the same way are the floor: on a two-core machine twenty interpreters alone take a
while. Without a server a hook's forked child does the work: the per-process CPU then counts
only the children that ended before their parent (those killed at the limit are not reaped).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import machine_info, median, ms, ratio, scratch_dir, table


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _process_cpu(pid: int) -> float:
    """User + system seconds of a live process (its own threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _round(argv: list[str], cwd: Path, payloads: list[bytes], keep_open: bool, env: dict,
           server: subprocess.Popen | None) -> tuple[float, float, int, float, float]:
    """(slowest, median process, answered, CPU per hook process, server CPU per hook)."""
    procs = []
    cpu_before = _children_cpu()
    server_before = _process_cpu(server.pid) if server else 0.0
    for payload in payloads:
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                cwd=cwd, env=env)
        proc.stdin.write(payload)
        proc.stdin.flush()
        if not keep_open:
            proc.stdin.close()
        procs.append((proc, start))
    # Each process's end as it happens (os.wait takes whichever ends first): waiting on them in
    # order would stamp a process that ended early with the time a slower one before it ended.
    starts = {proc.pid: start for proc, start in procs}
    ended: dict[int, float] = {}
    while len(ended) < len(procs):
        pid, status = os.wait()
        if pid in starts:
            ended[pid] = time.monotonic() - starts[pid]
            next(p for p, _ in procs if p.pid == pid).returncode = os.waitstatus_to_exitcode(status)
    times, answered = list(ended.values()), 0
    for proc, _ in procs:
        if proc.returncode != 0:
            raise RuntimeError(f"a hook exited {proc.returncode}")
        answered += b"additionalContext" in proc.stdout.read()
        if proc.stdin and not proc.stdin.closed:
            proc.stdin.close()
    time.sleep(0.3)   # the server records what it gave after the acks: count that too
    per_hook = (_children_cpu() - cpu_before) / len(payloads)
    served = (_process_cpu(server.pid) - server_before) / len(payloads) if server else float("nan")
    return max(times), median(times), answered, per_hook, served


def _start_server(repo: Path, env: dict) -> subprocess.Popen:
    """`git neo mcp` as the agent starts it (stdin held open), once its hook socket listens."""
    server = subprocess.Popen([sys.executable, "-m", "neo_git.cli", "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=repo, env=env)
    sock = repo / ".git" / "neo" / "agent.sock"
    deadline = time.monotonic() + 60
    from neo_git.agents.hook_socket import listening

    while not listening(sock):
        if time.monotonic() > deadline or server.poll() is not None:
            raise RuntimeError("the MCP server did not open .git/neo/agent.sock (is the `mcp` extra installed?)")
        time.sleep(0.05)
    return server


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--facts", type=int, default=200)
    args = parser.parse_args()
    with scratch_dir("neo-hook-stress") as root:
        repo = root / "repo"
        env = {**os.environ, "NEO_HOME": str(root / "home")}
        env.pop("NEO_AGENT_HOOK_TIMEOUT_MS", None)   # the real limit, 1.5 s
        os.environ["NEO_HOME"] = env["NEO_HOME"]
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@example.com",
                        "commit", "-q", "--allow-empty", "-m", "x"], check=True)
        from neo_git.store import FactStore

        store = FactStore.open(repo, embedder="hash")
        for n in range(args.facts):
            store.add(f"rule {n} about the http client", f"body {n}: outbound calls use httpx, timeout {n} s")
        hook = [sys.executable, "-m", "neo_git.cli", "hook", "agent", "prompt-submit", "--agent", "claude"]
        rows = []
        floor = None
        for label, argv, keep_open, with_server in (
                ("python -c pass", [sys.executable, "-c", "pass"], False, False),
                ("prompt-submit hook, MCP server up", hook, False, True),
                ("prompt-submit hook, MCP server up, stdin never closed", hook, True, True),
                ("prompt-submit hook, no server", hook, False, False),
                ("prompt-submit hook, no server, stdin never closed", hook, True, False)):
            server = _start_server(repo, env) if with_server else None
            try:
                results = []
                for run in range(args.runs):
                    payloads = [json.dumps({"session_id": f"{label[-12:]}-r{run}-s{n}", "cwd": str(repo),
                                            "prompt": "which http client?",
                                            "hook_event_name": "UserPromptSubmit"}).encode()
                                for n in range(args.concurrent)]
                    results.append(_round(argv, repo, payloads, keep_open, env, server))
            finally:
                if server is not None:
                    server.stdin.close()
                    server.wait(timeout=30)
            slowest, typical, answered, cpu, served = (median(column) for column in zip(*results))
            if floor is None:
                floor = slowest
            rows.append([f"{label} ×{args.concurrent}", ms(typical), ms(slowest), ratio(slowest, floor),
                         f"{answered:.0f}/{args.concurrent}", ms(cpu), "-" if served != served else ms(served)])
        print(machine_info())
        print(f"load average before the last row: {os.getloadavg()[0]:.1f}; {args.facts} facts; "
              f"median of {args.runs} rounds")
        print(table(["what", "median process", "slowest process", "slowest vs floor", "answered",
                     "CPU per hook process", "server CPU per hook"], rows))


if __name__ == "__main__":
    main()
