"""`list`, `recall` and `add` behind a held parse-cache lock (issue 37): two source trees
alternated in the same run, so the machine's load hits both alike.

    git archive <old commit> neo_git | tar -x -C /tmp/old
    python benchmarks/held_lock_bench.py --old /tmp/old [--rounds 2]

Each round: every command with the old tree, then with this one, while another process holds
every `facts-*.lock` of `.git/neo/cache`. The first round may find the cache current (nothing
to write, so nothing to wait for); from the second on each command follows an `add`."""
from __future__ import annotations

import argparse
import fcntl
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = str(Path(__file__).resolve().parent.parent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="a folder holding the old tree's neo_git/")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    trees = {"old": args.old, "new": HERE}
    root = Path(tempfile.mkdtemp(prefix="held-lock-"))
    env = {**os.environ, "HOME": str(root), "NEO_HOME": str(root / ".neo"), "NEO_EMBEDDER": "hash",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com",
           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com"}
    repo = root / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=repo, check=True, env=env)

    def neo(tree: str, *argv: str) -> float:
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "neo_git", *argv], cwd=repo, capture_output=True, text=True,
                              env={**env, "PYTHONPATH": trees[tree]})
        if proc.returncode != 0:
            raise SystemExit(proc.stderr)
        return time.monotonic() - started

    neo("new", "init")
    for i in range(20):
        neo("new", "add", f"Fact {i}", f"body {i}")
    neo("new", "list")
    held = []
    for path in sorted((repo / ".git" / "neo" / "cache").glob("facts-*.lock")):
        fd = os.open(path, os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.append(fd)
    times: dict[tuple[str, str], list[float]] = {}
    count = 0
    for _ in range(args.rounds):
        for tree in trees:
            for command in ("list", "recall", "add"):
                count += 1
                argv = {"list": ["list"], "recall": ["recall", "fact"], "add": ["add", f"New {count}", "b"]}[command]
                times.setdefault((tree, command), []).append(neo(tree, *argv))
    print(f"load average {os.getloadavg()[0]:.1f}; seconds per round")
    for (tree, command), values in times.items():
        print(f"{tree:<4} {command:<7} " + " ".join(f"{v:6.2f}" for v in values))


if __name__ == "__main__":
    main()
