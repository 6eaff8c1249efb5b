"""Upkeep's local state: `.git/neo/upkeep.json`.

`{"last_run": ISO time}`: when this clone last ran gc (`maybe_run_daily`). Losing the file
costs one early daily run, never a fact. (Which evidence a demotion already used is on the
facts themselves, shared by every clone: see `steps.plan_demotions`. An older file's
`demotion_evidence`, access counts acted on, is ignored: retrievals no longer demote.)
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from neo_git import safejson
from neo_git.fileio import atomic_write
from neo_git.upkeep.rules import parse_time, stamp

STATE_FILE = "upkeep.json"
LOCK_FILE = "upkeep.lock"


@dataclass
class UpkeepState:
    """What upkeep remembers between runs in this clone."""

    last_run: datetime | None = None

    @classmethod
    def read(cls, neo_dir: Path) -> UpkeepState:
        """The state in *neo_dir* (an unreadable file starts afresh: it is local, derived data)."""
        try:
            data = safejson.loads((Path(neo_dir) / STATE_FILE).read_bytes())
        except (OSError, ValueError, UnicodeDecodeError):
            return cls()
        if not isinstance(data, dict):
            return cls()
        last = data.get("last_run")
        return cls(parse_time(last) if isinstance(last, str) else None)

    def write(self, neo_dir: Path) -> None:
        """Save atomically (the caller holds the upkeep lock)."""
        data = {"last_run": stamp(self.last_run) if self.last_run else None}
        Path(neo_dir).mkdir(parents=True, exist_ok=True)
        atomic_write(Path(neo_dir) / STATE_FILE, (json.dumps(data, indent=1) + "\n").encode("utf-8"))
