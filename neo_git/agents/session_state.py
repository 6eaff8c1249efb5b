"""What one agent session has already been given, so hooks never repeat a fact.

`.git/neo/agents/<agent>-<session slug>-<hash>.json`: fact ids injected in this session, the current
turn's id and the facts given during that turn (recorded with the agent's edits as the facts
in its context), the facts given for each file it edits (what an edit of that file relies
on), and the facts the session start gave before any turn existed (put on record on the
session's first turn). Local and disposable: a lost file only means a fact may be
shown twice.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from neo_git import safejson
from neo_git.fileio import atomic_write, locked
from neo_git.identity import RepositoryPaths

MAX_GIVEN = 2000
MAX_FILES = 200


@dataclass
class SessionState:
    """The facts an agent session has seen and its current turn."""

    given: list[str] = field(default_factory=list)
    turn_id: str | None = None
    turn_facts: list[str] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)   # session-start ids no turn lists yet
    # {repository path: ids given to the agent for that file} (the pre/post-tool-use hooks): an
    # edit of the file relies on them, whichever turn gave them.
    file_facts: dict[str, list[str]] = field(default_factory=dict)


def state_path(paths: RepositoryPaths, agent: str, session_id: str) -> Path:
    """A file name safe for any agent/session string (sanitised, with a hash against clashes)."""
    raw = f"{agent}\0{session_id}"
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{agent}-{session_id}")[:80]
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return paths.neo_dir / "agents" / f"{slug}-{digest}.json"


def load_state(path: Path) -> SessionState:
    """The stored state (empty when missing or unreadable)."""
    try:
        data = safejson.loads(path.read_bytes())
        return SessionState(given=[str(i) for i in data.get("given", [])][-MAX_GIVEN:],
                            turn_id=data.get("turn_id") if isinstance(data.get("turn_id"), str) else None,
                            turn_facts=[str(i) for i in data.get("turn_facts", [])],
                            unrecorded=[str(i) for i in data.get("unrecorded", [])][-MAX_GIVEN:],
                            file_facts=_file_facts(data.get("file_facts")))
    except (OSError, ValueError, AttributeError, TypeError, RecursionError):
        return SessionState()


def _file_facts(raw) -> dict[str, list[str]]:
    """The stored {path: [fact id, ...]} map, the newest MAX_FILES paths (junk dropped)."""
    if not isinstance(raw, dict):
        return {}
    out = {str(k): [str(i) for i in v][-MAX_GIVEN:] for k, v in raw.items() if isinstance(v, list)}
    return dict(list(out.items())[-MAX_FILES:])


def update_state(path: Path, change) -> SessionState:
    """Apply *change* (SessionState -> None, mutating) under a lock and save."""
    with locked(path.with_name(path.name + ".lock"), timeout=2.0):
        state = load_state(path)
        change(state)
        state.given = state.given[-MAX_GIVEN:]
        state.file_facts = dict(list(state.file_facts.items())[-MAX_FILES:])
        atomic_write(path, (json.dumps(asdict(state), sort_keys=True) + "\n").encode(), durable=False)
        return state
