"""Global, org and session scope: a JSON file in Neo's v2.0 envelope.

`{"version": "2.0", "facts": [...]}` in `~/.neo/facts/facts_global.json`,
`facts_org_<org>.json`, and `.git/neo/session.json` per worktree. Every write
happens under an exclusive lock, re-reads the file and applies the change to
what is there now (merge-on-save), then replaces the file atomically. Entries
that fail validation are carried through untouched; a file that is not JSON
is moved aside and reported, never overwritten.
"""
from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from types import MappingProxyType

from neo_git import safejson
from neo_git.errors import CorruptStore, InvalidFact
from neo_git.facts import Fact
from neo_git.fileio import atomic_write, locked, move_aside
from neo_git.store.base import Change, LoadedScope, Transaction

ENVELOPE_VERSION = "2.0"


def file_problem(path: Path) -> str | None:
    """What makes *path* unreadable as a facts file: a folder, a link loop, not a regular file
    (a FIFO would block the read); None when it is a file or absent."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop, not a facts file"
        return None   # the read reports it (permissions, …)
    if stat.S_ISDIR(mode):
        return "is a directory, not a facts file"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a FIFO, socket or device), not a facts file"
    return None


class FileStore:
    """One facts file, safe for several processes."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.description = str(self.path)
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        # (inode, size, mtime) of the file when last parsed, and what it held. Every write
        # replaces the file (new inode), so an unchanged key means unchanged content, and
        # recall gets the same Fact objects back, which keeps its vector memo warm.
        self._parsed: tuple[tuple[int, int, int] | str, LoadedScope] | None = None

    def load(self) -> LoadedScope:
        """Read the file (a missing file is an empty scope); re-parsed only when it changed, and
        then the same LoadedScope is returned (read it, do not change it)."""
        try:
            stat = self.path.stat()
            key: tuple[int, int, int] | str | None = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        except FileNotFoundError:
            key = "missing"          # an empty scope until the file appears
        except OSError:
            key = None
        if key is not None and self._parsed is not None and self._parsed[0] == key:
            return self._parsed[1]  # the same object while the file is the same (callers only read it)
        facts, _raw_invalid, warnings = self._read(have_lock=False)
        loaded = LoadedScope(facts, warnings)
        self._parsed = (key, loaded) if key is not None else None
        return loaded

    def transact(self, body: Transaction) -> Change | None:
        """Apply *body* to the current contents under the lock and save atomically."""
        with locked(self._lock_path):
            facts, raw_invalid, _ = self._read(have_lock=True)
            change = body(MappingProxyType(facts))  # read-only: the body plans, this method writes
            if change is None or not (change.facts or change.removed):
                return change
            for fact_id in change.removed:
                facts.pop(fact_id, None)
            for fact in change.facts:
                facts[fact.id] = fact
            self._write(facts, raw_invalid)
            return change

    # --- file format ---------------------------------------------------------------

    def _read(self, have_lock: bool) -> tuple[dict[str, Fact], list, list[str]]:
        problem = file_problem(self.path)
        if problem is not None:
            # Never read as an empty scope (a write would then replace what was there).
            raise CorruptStore(f"{self.path} {problem}", "`git neo doctor --fix` moves it aside and starts the file "
                                                        "anew; nothing was changed")
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}, [], []
        except IsADirectoryError:
            raise CorruptStore(f"{self.path} is a directory, not a facts file") from None
        try:
            envelope = safejson.loads(data)
            if isinstance(envelope, list):  # a bare list of facts: accept, rewrite as envelope
                envelope = {"version": ENVELOPE_VERSION, "facts": envelope}
            if not isinstance(envelope, dict) or not isinstance(envelope.get("facts"), list):
                raise ValueError('expected {"version": "2.0", "facts": [...]}')
        except (ValueError, UnicodeDecodeError) as exc:
            aside = self._move_aside(data, have_lock)
            raise CorruptStore(
                f"{self.path} is not a valid facts file ({exc}); moved it to {aside}",
                f"fix the JSON and move it back, or `git neo import {aside}`; nothing was overwritten",
            ) from None
        facts: dict[str, Fact] = {}
        raw_invalid: list = []
        warnings: list[str] = []
        for index, raw in enumerate(envelope["facts"]):
            try:
                fact = Fact.from_dict(raw)
            except InvalidFact as exc:
                raw_invalid.append(raw)
                warnings.append(f"{self.path}: fact #{index} skipped: {exc.message}")
                continue
            facts[fact.id] = fact
        return facts, raw_invalid, warnings

    def _write(self, facts: dict[str, Fact], raw_invalid: list) -> None:
        ordered = sorted(facts.values(), key=lambda f: (f.metadata.created_at, f.id))
        envelope = {"version": ENVELOPE_VERSION, "facts": [f.to_dict() for f in ordered] + raw_invalid}
        data = json.dumps(envelope, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        atomic_write(self.path, data.encode("utf-8"))

    def _move_aside(self, seen: bytes, have_lock: bool) -> Path:
        """Rename the unreadable file out of the way, unless someone replaced it meanwhile."""
        if not have_lock:
            with locked(self._lock_path):
                return self._move_aside(seen, have_lock=True)
        return move_aside(self.path, expected=seen)
