"""A small repository with everything a report draws, built with the real tools.

Six first-parent commits a day apart (a Python import cycle arrives in the third and
leaves in the fifth; a JavaScript cycle through a file whose name is an HTML tag stays;
a commit subject with markup), a merge on a side branch, project facts with a
supersession, a retraction and a hostile fact, one suggestion that ships (the real
outcome worker writes its note and raises the fact), and agent turns with injected facts.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.git import commit_files, git

HOSTILE_FACT = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
HOSTILE_FILE = "web/<img src=x onerror=alert(1)>.js"
HOSTILE_SUBJECT = "refactor <b>bold</b> & <script>alert('subject')</script> \u202egnp.exe"
DAY = 86400
START = 1_714_000_000            # 2024-04-24, a Wednesday


@dataclass
class Built:
    """What the fixture made, for the tests to compare with the page."""

    path: Path
    commits: list[str]           # first-parent, oldest first
    cycles: list[int]            # every-edge cycles per commit, oldest first
    hostile_fact: str
    accepted_fact: str
    superseded: str
    retracted: str


def _commit(repo: Path, files: dict[str, str | None], message: str, when: int) -> str:
    stamp = f"@{when} +0200"
    return commit_files(repo, files, message, env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})


def nested(depth: int) -> str:
    """A Python function nested *depth* levels deep."""
    lines, indent = ["def deep(x):"], "    "
    for level in range(depth):
        lines.append(f"{indent}if x > {level}:")
        indent += "    "
    lines.append(f"{indent}return x")
    return "\n".join(lines) + "\n"


def build(repo: Path) -> Built:
    """Fill the empty repository *repo* (the `git_repo` fixture)."""
    from neo_git.agents.turns import finish_turn, record_injection, start_turn
    from neo_git.identity import open_repository, repository_paths
    from neo_git.outcomes.processing import process_commits
    from neo_git.outcomes.suggestions import record_suggestion
    from neo_git.store import FactStore

    commits, cycles = [], []

    def step(files, message, day, cycle_count):
        commits.append(_commit(repo, files, message, START + day * DAY))
        cycles.append(cycle_count)

    js_cycle = {"web/app.js": f'import page from "./{HOSTILE_FILE.split("/")[1]}";\nexport default page;\n',
                HOSTILE_FILE: 'import app from "./app.js";\nexport const page = app;\n'}
    step({"app/__init__.py": "", "app/core.py": "import os\n\n\ndef run():\n    return os.getcwd()\n",
          "app/util.py": nested(2), **js_cycle}, "initial layout", 0, 1)
    step({"app/util.py": nested(3)}, "deeper util", 1, 1)
    step({"app/core.py": "from app import util\n\n\ndef run():\n    return util.deep(1)\n",
          "app/util.py": "from app import core\n\n" + nested(3)}, "core and util import each other", 2, 2)
    step({"app/extra.py": "X = 1\n"}, HOSTILE_SUBJECT, 3, 2)
    step({"app/util.py": nested(4)}, "break the cycle", 4, 1)

    store = FactStore.open(repo)
    store.init()
    old = store.add("HTTP client", "We use requests for outbound HTTP.", kind="decision")
    store.add("HTTP client", "All outbound HTTP goes through httpx, timeout 30 s.", kind="decision",
                    supersedes=old.id)
    helper = store.add("Keep util small", "Helpers in app/util.py stay under 50 lines.", kind="pattern")
    gone = store.add("Deploy on Fridays", "We deploy on Fridays.", kind="decision")
    store.invalidate(gone.id, reason="we stopped doing that")
    hostile = store.add(HOSTILE_FACT, "Body with \u202ereversed\u202c text and <b>markup</b>.", kind="constraint")

    # A suggestion that ships as written: the real outcome worker notes it and raises the fact.
    r = open_repository(repo)
    shipped = "def helper(value):\n    total = value * 2\n    return total + 1\n"
    record_suggestion(r, repository_paths(r), file="app/extra.py", code=shipped, fact_ids=[helper.id],
                      description="add a helper")
    step({"app/extra.py": "X = 1\n\n\n" + shipped}, "add helper", 5, 1)
    process_commits(open_repository(repo), [commits[-1]])

    # A merged side branch: the first-parent chain sees only the merge.
    git(repo, "checkout", "-q", "-b", "side", commits[-2])
    _commit(repo, {"side.py": "Y = 2\n"}, "side work", START + 5 * DAY + 100)
    git(repo, "checkout", "-q", "main")
    stamp = f"@{START + 6 * DAY} +0200"
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side",
        env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
    commits.append(git(repo, "rev-parse", "HEAD").strip())
    cycles.append(1)

    paths = repository_paths(open_repository(repo))
    for number, injected in enumerate((3, 0, 5)):
        at = START + 6 * DAY + 7200 + number * 600   # one UTC day
        start_turn(paths, "claude", "s1", now=at)
        if injected:
            record_injection(paths, "claude", "s1", "prompt-submit", [f"{n:016x}" for n in range(injected)],
                             now=at + 1)
        finish_turn(paths, "claude", "s1", "completed", now=at + 60)
    return Built(repo, commits, cycles, hostile.id, helper.id, old.id, gone.id)


def run_cli(repo: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`git neo …` through git, as a person runs it (the venv's git-neo on PATH)."""
    import os
    import sys

    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    return subprocess.run(["git", "neo", *args], cwd=repo, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=env)
