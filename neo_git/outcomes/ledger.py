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
MAX_ATTEMPTS = 20  # a commit whose processing keeps failing (on a lock) is recorded as failed in the end


class Ledger:
    """The processed commits of one repository: {commit hex: {"author": key, "via": how}}."""

    def __init__(self, neo_dir: Path) -> None:
        self.path = Path(neo_dir) / FILE_NAME
        self.commits: dict[str, dict] = {}
        self.retry: list[str] = []      # commits whose processing failed (a locked store...): retried first
        self.attempts: dict[str, int] = {}   # failed attempts of the commits in `retry`
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
        attempts = envelope.get("attempts") if isinstance(envelope, dict) else None
        self.attempts = {c: int(n) for c, n in (attempts or {}).items()
                         if c in self.retry and isinstance(n, int)} if isinstance(attempts, dict) else {}

    def __contains__(self, commit: str) -> bool:
        return commit in self.commits

    def mark(self, commit: str, author_key: str, via: str) -> None:
        """Record *commit* as processed (by "post-commit", "post-merge", "rewrite of <id>", ...)."""
        self.commits[commit] = {"author": author_key, "via": via}
        if commit in self.retry:
            self.retry.remove(commit)
        self.attempts.pop(commit, None)

    def failed(self, commit: str, author_key: str = "", reason: str = "", transient: bool = True) -> bool:
        """A commit whose processing failed: retried by the next worker when the cause may pass
        (a lock) and it has failed fewer than MAX_ATTEMPTS times; otherwise recorded as failed,
        once, and never tried again (a commit the worker cannot process must not block the
        loop). Returns True when it will be retried."""
        if commit in self.commits:
            return False
        tries = self.attempts.get(commit, 0) + 1
        if transient and tries < MAX_ATTEMPTS:
            self.attempts[commit] = tries
            if commit not in self.retry:
                self.retry = (self.retry + [commit])[-MAX_RETRY:]
            return True
        self.commits[commit] = {"author": author_key, "via": "failed", "failed": reason[:300]}
        if commit in self.retry:
            self.retry.remove(commit)
        self.attempts.pop(commit, None)
        return False

    def retry_later(self, commit: str) -> None:
        """Forget that *commit* was processed and retry it with the next worker."""
        self.commits.pop(commit, None)
        self.failed(commit)

    def save(self) -> None:
        """Write atomically, keeping the newest MAX_COMMITS entries (dicts keep insertion order)."""
        items = list(self.commits.items())[-MAX_COMMITS:]
        self.commits = dict(items)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.attempts = {c: n for c, n in self.attempts.items() if c in self.retry}
        atomic_write(self.path, (json.dumps({"version": 1, "commits": self.commits, "retry": self.retry,
                                             "attempts": self.attempts}, indent=0, ensure_ascii=True) + "\n").encode())


def author_key(commit) -> str:
    """Author, author time and parent of a commit (what `git commit --amend` keeps)."""
    author = commit.author
    parent = str(commit.parent_ids[0]) if commit.parent_ids else "-"
    return f"{author.email}|{author.time}|{author.offset}|{parent}"
