"""Upkeep's local state: `.git/neo/upkeep.json`.

`{"last_run": ISO time, "demotion_evidence": {fact id: access count already acted on}}`.
Access counts are local (`.git/neo/access.json`), so the record of which accesses a
demotion already used is local too. Losing the file costs at most one extra demotion
per fact and one early daily run, never a fact.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterable

from neo_git import safejson
from neo_git.fileio import atomic_write
from neo_git.upkeep.rules import parse_time, stamp

STATE_FILE = "upkeep.json"
LOCK_FILE = "upkeep.lock"


@dataclass
class UpkeepState:
    """What upkeep remembers between runs in this clone."""

    last_run: datetime | None = None
    demotion_evidence: dict[str, int] = field(default_factory=dict)

    @classmethod
    def read(cls, neo_dir: Path) -> "UpkeepState":
        """The state in *neo_dir* (an unreadable file starts afresh: it is local, derived data)."""
        try:
            data = safejson.loads((Path(neo_dir) / STATE_FILE).read_bytes())
        except (OSError, ValueError, UnicodeDecodeError):
            return cls()
        if not isinstance(data, dict):
            return cls()
        evidence = data.get("demotion_evidence")
        evidence = {k: v for k, v in evidence.items() if isinstance(k, str) and isinstance(v, int)
                    and not isinstance(v, bool)} if isinstance(evidence, dict) else {}
        last = data.get("last_run")
        return cls(parse_time(last) if isinstance(last, str) else None, evidence)

    def write(self, neo_dir: Path, known_ids: Iterable[str] | None = None) -> None:
        """Save atomically (the caller holds the upkeep lock); entries of facts that no longer
        exist are dropped when *known_ids* is given."""
        evidence = self.demotion_evidence
        if known_ids is not None:
            keep = set(known_ids)
            evidence = {k: v for k, v in evidence.items() if k in keep}
        data = {"last_run": stamp(self.last_run) if self.last_run else None,
                "demotion_evidence": dict(sorted(evidence.items()))}
        Path(neo_dir).mkdir(parents=True, exist_ok=True)
        atomic_write(Path(neo_dir) / STATE_FILE, (json.dumps(data, indent=1) + "\n").encode("utf-8"))
