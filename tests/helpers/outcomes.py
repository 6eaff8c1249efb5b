"""Shared by the outcome-loop and git-hook tests: a repository with a module and a fact,
recording suggestions, and running the outcome worker in-process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.git import commit_files, git

BASE = "import os\n\n\ndef fetch(url):\n    return os.getenv(url)\n"
RETRY = ("def retry(fn, attempts=3):\n"
         "    for attempt in range(attempts):\n"
         "        try:\n"
         "            return fn()\n"
         "        except OSError:\n"
         "            if attempt == attempts - 1:\n"
         "                raise\n")
VENV_BIN = str(Path(sys.executable).parent)   # where the git-neo script is


def setup_repo(repo: Path) -> str:
    """Commit src/db.py and add one project fact; returns the fact id."""
    from neo_git.store import FactStore

    commit_files(repo, {"src/db.py": BASE}, "initial")
    return FactStore.open(repo).add("Retry network calls", "Wrap network calls in a retry helper.").id


def suggest(repo: Path, code: str, fact_ids=(), file: str = "src/db.py", **extra):
    """Record a suggestion about *file* in *repo*."""
    from neo_git.identity import open_repository, repository_paths
    from neo_git.outcomes.suggestions import record_suggestion

    r = open_repository(repo)
    return record_suggestion(r, repository_paths(r), file=file, code=code, fact_ids=fact_ids, **extra)


def process_head(repo: Path):
    """Run the post-commit worker for HEAD in this process."""
    from neo_git.identity import open_repository
    from neo_git.outcomes.processing import process_commits

    r = open_repository(repo)
    return process_commits(r, [str(r.head.target)])


def fact(repo: Path, fact_id: str):
    """The fact as stored now."""
    from neo_git.store import FactStore

    return FactStore.open(repo).get(fact_id)


def note(repo: Path, rev: str = "HEAD") -> list[dict]:
    """The JSON Lines note on *rev* (via git itself)."""
    text = git(repo, "notes", "--ref=neo", "show", rev, check=False)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def hook_env(**extra: str) -> dict:
    """Environment for git commands that run our shims: git-neo on PATH."""
    return {"PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", ""), **extra}


SQUASH_SECOND = "sed -i -e '2s/^pick/squash/'"


def _run(repo: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"git {' '.join(args)} failed: {proc.stderr}"
    return proc


def history_operations(repo: Path, env: dict) -> dict[str, str]:
    """commit, merge, rebase -i with a squash, amend, cherry-pick; returns commit ids."""
    ids = {}

    def commit_here(repo: Path, files: dict[str, str], message: str) -> None:
        # every commit runs the hooks with the test's PATH (CI has git-neo on its own PATH)
        for name, text in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
            _run(repo, env, "add", "--", name)
        _run(repo, env, "commit", "-q", "-m", message)

    (repo / "src" / "db.py").write_text(BASE + "\n\n" + RETRY)
    _run(repo, env, "commit", "-qam", "adopt retry")
    ids["commit"] = _run(repo, env, "rev-parse", "HEAD").stdout.strip()
    _run(repo, env, "checkout", "-q", "-b", "feature")
    commit_here(repo, {"src/feature.py": "def feature():\n    return 1\n"}, "feature")
    _run(repo, env, "checkout", "-q", "main")
    commit_here(repo, {"src/other.py": "def other():\n    return 2\n"}, "other")
    _run(repo, env, "merge", "-q", "--no-edit", "feature")
    commit_here(repo, {"src/one.py": "def one():\n    return 1\n"}, "one")
    commit_here(repo, {"src/two.py": "def two():\n    return 2\n"}, "two")
    _run(repo, {**env, "GIT_SEQUENCE_EDITOR": SQUASH_SECOND, "GIT_EDITOR": "true"}, "rebase", "-q", "-i", "HEAD~2")
    ids["squashed"] = _run(repo, env, "rev-parse", "HEAD").stdout.strip()
    _run(repo, env, "commit", "-q", "--amend", "-m", "one and two")
    ids["amended"] = _run(repo, env, "rev-parse", "HEAD").stdout.strip()
    _run(repo, env, "checkout", "-q", "-b", "side", "HEAD~1")
    commit_here(repo, {"src/side.py": "def side():\n    return 3\n"}, "side")
    side = _run(repo, env, "rev-parse", "HEAD").stdout.strip()
    _run(repo, env, "checkout", "-q", "main")
    _run(repo, env, "cherry-pick", side)
    ids["picked"] = _run(repo, env, "rev-parse", "HEAD").stdout.strip()
    assert _run(repo, env, "status", "--porcelain").stdout == ""
    assert (repo / "src" / "side.py").is_file() and (repo / "src" / "two.py").is_file()
    return ids
