"""A repository with cited code, and running the commit worker on it in-process."""
from __future__ import annotations

from pathlib import Path

from tests.helpers.git import commit_files, git

CONFIG = ("import os\n\n\n"
          "def load_config(path, attempts=3):\n"
          "    # retry: the file may be on a slow mount\n"
          "    for attempt in range(attempts):\n"
          "        try:\n"
          "            return open(path).read()\n"
          "        except OSError:\n"
          "            if attempt == attempts - 1:\n"
          "                raise\n\n\n"
          "class Settings:\n"
          "    def merge(self, other):\n"
          "        return {**self.__dict__, **other}\n")

REFORMATTED = ("import os\n\n\n"
               "def load_config(\n"
               "    path,\n"
               "    attempts=3,\n"
               "):  # reads a file\n"
               "  for attempt in range(attempts):   # tries a few times\n"
               "      try:\n"
               "          return open(path).read()\n\n"
               "      except OSError:\n"
               "          # the last attempt re-raises\n"
               "          if attempt == attempts - 1:\n"
               "              raise\n\n\n"
               "class Settings:\n"
               "    def merge(self, other):\n"
               "        return {**self.__dict__, **other}\n")


def cited_repo(repo: Path, *cites: str) -> str:
    """Commit src/app/config.py and add a fact citing *cites* (default: load_config); its id."""
    from neo_git.store import FactStore

    commit_files(repo, {"src/app/config.py": CONFIG}, "config")
    store = FactStore.open(repo)
    store.init()
    return store.add("Config loading retries", "load_config retries 3 times", kind="pattern",
                     cites=list(cites) or ["src/app/config.py:load_config"]).id


def process(repo: Path):
    """The post-commit worker for HEAD, in this process."""
    from neo_git.identity import open_repository
    from neo_git.outcomes.processing import process_commits

    r = open_repository(repo)
    return process_commits(r, [str(r.head.target)])


def citations(repo: Path, fact_id: str) -> tuple[dict, ...]:
    """The fact's citations as stored now."""
    from neo_git.store import FactStore

    return FactStore.open(repo).get(fact_id).metadata.citations


def state(repo: Path, fact_id: str, i: int = 0) -> str:
    """The recorded state of the fact's *i*-th citation."""
    return citations(repo, fact_id)[i]["state"]


def verify(repo: Path, rev: str = "HEAD") -> dict:
    """`git neo verify --json` in-process: {"rev", "facts"}."""
    from neo_git.citations.audit import verify_facts
    from neo_git.store import FactStore

    return verify_facts(FactStore.open(repo), rev).to_dict()


def facts_log(repo: Path) -> list[str]:
    """Subjects of the commits on refs/neo/facts, newest first."""
    return git(repo, "log", "--format=%s", "refs/neo/facts").splitlines()
