"""What recording an agent's edit costs in the hooks: the PreToolUse hook (facts for the file,
now also counted as consulted) and the PostToolUse hook (the edit recorded as whole lines, the
facts it relied on kept apart), run as the agent runs them (`python -m neo_git.cli hook agent
…`, a new process each time), against a baseline checkout in the same run, alternating.

    python benchmarks/edit_hook_cost.py --baseline /tmp/baseline [--runs 15]

*--baseline* is a folder holding another version's `neo_git` package (e.g. `git archive
<commit> neo_git | tar -x -C /tmp/baseline`); it is put first on PYTHONPATH for its runs.
Prints the median wall time per hook and arm, and the ratio new / baseline.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIG = "".join(f"SETTING_{n} = {n}  # seconds\n" for n in range(400)) + "TIMEOUT = 5  # seconds\n"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=60,
                   env={**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
                        "GIT_COMMITTER_EMAIL": "b@x"})


def _repo(root: Path) -> Path:
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "src" / "config.py").write_text(CONFIG)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "config")
    facts = [{"subject": f"Setting {n}", "body": f"Setting {n} of src/config.py is tuned for load test {n}.",
              "kind": "decision", "scope": "project", "metadata": {"paths": ["src/config.py"]} if n % 5 == 0 else {}}
             for n in range(60)]
    (root / "facts.json").write_text(json.dumps({"version": "2.0", "facts": facts}))
    subprocess.run([sys.executable, "-m", "neo_git.cli", "import", str(root / "facts.json")], cwd=repo,
                   check=True, capture_output=True, timeout=120)
    return repo


def _payload(repo: Path, event: str, session: str) -> bytes:
    data = {"session_id": session, "cwd": str(repo), "hook_event_name": event, "tool_name": "Edit",
            "tool_input": {"file_path": str(repo / "src" / "config.py"), "old_string": "TIMEOUT = 5",
                           "new_string": "TIMEOUT = 10"}}
    if event == "PostToolUse":   # what Claude Code hands PostToolUse: the file before, the hunks applied
        data["tool_response"] = {"filePath": str(repo / "src" / "config.py"), "originalFile": CONFIG,
                                 "structuredPatch": [{"oldStart": 401, "oldLines": 1, "newStart": 401, "newLines": 1,
                                                      "lines": ["-TIMEOUT = 5  # seconds",
                                                                "+TIMEOUT = 10  # seconds"]}]}
    return json.dumps(data).encode()


def _run(repo: Path, event: str, hook: str, pythonpath: str | None, session: str) -> float:
    env = {**os.environ, "NEO_AGENT_HOOK_TIMEOUT_MS": "60000"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "neo_git.cli", "hook", "agent", hook, "--agent", "claude"],
                   input=_payload(repo, event, session), cwd=repo, capture_output=True, timeout=120, env=env, check=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="folder holding the baseline's neo_git package")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    os.chdir(tempfile.gettempdir())   # never import neo_git from the current folder
    with tempfile.TemporaryDirectory() as tmp:
        arms = {"new": None, "baseline": str(Path(args.baseline).resolve())}
        repos = {arm: _repo(Path(tmp) / arm) for arm in arms}
        times: dict[tuple[str, str], list[float]] = {}
        for run in range(args.runs):   # a new session each run: the file's facts are given every time
            for hook, event in (("pre-tool-use", "PreToolUse"), ("post-tool-use", "PostToolUse")):
                for arm, path in arms.items():   # alternating: the machine's load falls on both arms
                    times.setdefault((hook, arm), []).append(_run(repos[arm], event, hook, path, f"bench-{run}"))
        print(f"{'hook':<14} {'new s':>8} {'baseline s':>11} {'ratio':>6}   (median of {args.runs}, alternating)")
        for hook in ("pre-tool-use", "post-tool-use"):
            new, base = statistics.median(times[(hook, "new")]), statistics.median(times[(hook, "baseline")])
            print(f"{hook:<14} {new:>8.3f} {base:>11.3f} {new / base:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
