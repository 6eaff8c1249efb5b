"""Shared by the outcome-loop and git-hook tests: a repository with a module and a fact,
recording suggestions, and running the outcome worker in-process."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.conftest import commit_files, git

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
