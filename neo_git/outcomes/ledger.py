"""Which commits the outcome loop has processed: `.git/neo/processed.json`.

Processing a commit twice must change nothing, so every processed commit is recorded
here (with its author key and how it was processed, for people reading the file). Only the outcome worker writes it, under the
processing lock; writes are atomic. A file that does not parse is moved aside and
processing starts a fresh ledger (the REVIEW fact ids still make a repeat a no-op for
the facts it touched).
"""
from __future__ import annotations

import json
from pathlib import Path

from neo_git import safejson
from neo_git.fileio import atomic_write, move_aside

FILE_NAME = "processed.json"
MAX_COMMITS = 20_000
MAX_RETRY = 50


class Ledger:
    """The processed commits of one repository: {commit hex: {"author": key, "via": how}}."""

    def __init__(self, neo_dir: Path) -> None:
        self.path = Path(neo_dir) / FILE_NAME
        self.commits: dict[str, dict] = {}
        self.retry: list[str] = []      # commits whose processing failed (a locked store...): retried first
        self._load()

    def _load(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        try:
            envelope = safejson.loads(data)
            commits = envelope["commits"]
            if not isinstance(commits, dict):
                raise ValueError("commits is not an object")
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            move_aside(self.path, expected=data)
            return
        self.commits = {k: v for k, v in commits.items() if isinstance(k, str) and isinstance(v, dict)}
        retry = envelope.get("retry") if isinstance(envelope, dict) else None
        self.retry = [c for c in retry if isinstance(c, str)][-MAX_RETRY:] if isinstance(retry, list) else []

    def __contains__(self, commit: str) -> bool:
        return commit in self.commits

    def mark(self, commit: str, author_key: str, via: str) -> None:
        """Record *commit* as processed (by "post-commit", "post-merge", "rewrite of <id>", ...)."""
        self.commits[commit] = {"author": author_key, "via": via}
        if commit in self.retry:
            self.retry.remove(commit)

    def failed(self, commit: str) -> None:
        """Remember a commit whose processing failed, so the next worker retries it."""
        if commit not in self.retry and commit not in self.commits:
            self.retry = (self.retry + [commit])[-MAX_RETRY:]

    def retry_later(self, commit: str) -> None:
        """Forget that *commit* was processed and retry it with the next worker."""
        self.commits.pop(commit, None)
        self.failed(commit)

    def save(self) -> None:
        """Write atomically, keeping the newest MAX_COMMITS entries (dicts keep insertion order)."""
        items = list(self.commits.items())[-MAX_COMMITS:]
        self.commits = dict(items)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, (json.dumps({"version": 1, "commits": self.commits, "retry": self.retry}, indent=0) + "\n").encode())


def author_key(commit) -> str:
    """Author, author time and parent of a commit (what `git commit --amend` keeps)."""
    author = commit.author
    parent = str(commit.parent_ids[0]) if commit.parent_ids else "-"
    return f"{author.email}|{author.time}|{author.offset}|{parent}"
