"""Access bookkeeping, kept local: `.git/neo/access.json`.

Recall counts every fact it returns once per request. Writing those counts to
the shared ref would add a commit (and a merge conflict for teammates) per
question, so they live beside the repository instead and are laid over the
stored facts when read: {fact id: [access count, last accessed]}. Without a
path (an in-memory store) the counts live only in this object.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from neo_git import safejson
from neo_git.facts import Fact, now_iso
from neo_git.fileio import LockTimeout, atomic_write, locked

ACCESS_LOCK_WAIT = 0.2   # seconds a recall waits to count accesses before skipping the counts


class AccessLog:
    """Per-repository access counts, safe for concurrent processes."""

    def __init__(self, path: Path | None) -> None:
        self.path = None if path is None else Path(path)
        self._lock = None if self.path is None else self.path.with_name(self.path.name + ".lock")
        self._cache: dict[str, list] | None = None

    def _read(self) -> dict[str, list]:
        if self.path is None:
            return dict(self._cache or {})
        try:
            data = safejson.loads(self.path.read_bytes())
        except (OSError, ValueError, UnicodeDecodeError):
            return {}  # derived, local data: a broken file just restarts the counts
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, list) and len(v) == 2 and isinstance(v[0], int)}

    def counts(self) -> dict[str, list]:
        """{fact id: [count, last_accessed]} (read once per process, refreshed after writes)."""
        if self._cache is None:
            self._cache = self._read()
        return self._cache

    def record(self, fact_ids: Iterable[str]) -> None:
        """Count one access for each id (duplicates in one request count once)."""
        ids = set(fact_ids)
        if not ids:
            return
        stamp = now_iso()
        if self.path is None:
            self._cache = self._counted(self._read(), ids, stamp)
            return
        try:
            # Optional bookkeeping: a held lock means skipping these counts, never a slow answer.
            with locked(self._lock, timeout=ACCESS_LOCK_WAIT):
                data = self._counted(self._read(), ids, stamp)
                # Still atomic (readers never see half a file), but not fsynced: counts are derived,
                # local data and an fsync per question would dominate recall.
                atomic_write(self.path, (json.dumps(data, sort_keys=True) + "\n").encode("utf-8"), durable=False)
        except (OSError, LockTimeout):
            return  # a read-only .git/neo, a folder in the way, a held lock: the answer matters, the count does not
        self._cache = data

    @staticmethod
    def _counted(data: dict[str, list], ids: set[str], stamp: str) -> dict[str, list]:
        for fact_id in ids:
            data[fact_id] = [data.get(fact_id, [0, None])[0] + 1, stamp]
        return data

    def apply(self, fact: Fact) -> Fact:
        """*fact* with the local access count added to the stored one."""
        entry = self.counts().get(fact.id)
        if not entry:
            return fact
        last = max(filter(None, (fact.metadata.last_accessed, entry[1])), default=None)
        return fact.evolve(metadata={"access_count": fact.metadata.access_count + entry[0], "last_accessed": last})
