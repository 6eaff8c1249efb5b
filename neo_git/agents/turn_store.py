"""Where turn records live: one small file per agent session, `.git/neo/turns/<agent>-<session>-<hash>.json`.

Every turn update is about one agent session (start, progress, finish, the facts injected),
so each session's turns are one file with its own lock: twenty agents' hooks at once never
wait on each other, and a write costs the size of one session, not of a week of everyone's
turns (one `turns.json` is re-read and rewritten twice per prompt: at 217 rows that was most
of the 26 ms of CPU the agent's server spent on a prompt, against ~5 ms now; the cap was
2,000 rows). Listing (`git neo turns`, the report) reads every file.

Rows are plain dicts here (`agents/turns.py` checks them). Expired rows are dropped whenever
their file is written; files of sessions nobody writes any more are swept when a turn starts,
at most once an hour. A `turns.json` from an earlier version is read as it is until the first
write, which splits it into session files.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from neo_git.errors import CorruptStore
from neo_git.fileio import LockTimeout, atomic_write, locked, read_json_list
from neo_git.identity import RepositoryPaths

DIR_NAME = "turns"
LEGACY_NAME = "turns.json"
FORMAT_VERSION = 1
MAX_ROWS = 500              # turns kept per agent session (the newest)
MAX_SESSIONS = 2000         # session files kept by the sweep (the most recently written)
SWEEP_EVERY = 3600.0        # seconds between sweeps of other sessions' expired files
LOCK_WAIT = 5.0
_HINT = "turn records are local and rebuilt by the next agent turn"

Rows = list[dict]


def turns_dir(paths: RepositoryPaths) -> Path:
    """`.git/neo/turns/` (shared by the worktrees of the clone, never pushed)."""
    return paths.neo_dir / DIR_NAME


def session_file(paths: RepositoryPaths, agent: str, session_id: str) -> Path:
    """The file of one agent session (a name safe for any id: sanitised, with a hash)."""
    raw = f"{agent}\0{session_id}"
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{agent}-{session_id}")[:80]
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return turns_dir(paths) / f"{slug}-{digest}.json"


def _lock_of(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _read(path: Path, have_lock: bool) -> Rows:
    rows = read_json_list(path, "turns", have_lock=have_lock, what="turns file", hint=_HINT)
    return [row for row in rows or () if isinstance(row, dict)]


def _live(rows: Rows, now: float) -> Rows:
    return [row for row in rows if not isinstance(row.get("expires_at"), (int, float)) or row["expires_at"] > now]


def _write(path: Path, rows: Rows) -> None:
    envelope = {"version": FORMAT_VERSION, "turns": rows}
    # Compact: with `indent` json falls back to its pure-Python encoder.
    atomic_write(path, (json.dumps(envelope, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8"),
                 durable=False)


def update_session(paths: RepositoryPaths, agent: str, session_id: str, change: Callable[[Rows], Rows | None],
                   now: float) -> Rows:
    """Apply *change* to one session's rows under its lock (None: nothing to write), drop
    expired rows, keep the newest MAX_ROWS, save atomically; returns the rows now stored."""
    if (paths.neo_dir / LEGACY_NAME).exists():
        split_legacy(paths)
    return _rewrite(session_file(paths, agent, session_id), change, now)


def _rewrite(path: Path, change: Callable[[Rows], Rows | None], now: float | None) -> Rows:
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(_lock_of(path), timeout=LOCK_WAIT):
        try:
            current = _read(path, have_lock=True)
        except CorruptStore:
            current = []  # moved aside; start over (records are observations, not facts)
        updated = change(list(current))
        if updated is None:
            return current
        kept = (updated if now is None else _live(updated, now))[-MAX_ROWS:]
        _write(path, kept)
        return kept


def load_all(paths: RepositoryPaths) -> Rows:
    """Every stored row: each session's file (a corrupt one is set aside and skipped), and a
    `turns.json` not split yet."""
    rows: Rows = []
    folder = turns_dir(paths)
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    legacy = paths.neo_dir / LEGACY_NAME
    for path in (*files, legacy):
        try:
            rows.extend(_read(path, have_lock=False))
        except CorruptStore:
            continue
        except OSError:
            continue   # swept or split while listing
    return rows


def split_legacy(paths: RepositoryPaths) -> None:
    """Move the rows of a single `turns.json` (earlier versions) into session files, then remove it."""
    legacy = paths.neo_dir / LEGACY_NAME
    with locked(_lock_of(legacy), timeout=LOCK_WAIT):
        if not legacy.exists():
            return   # another process split it first
        try:
            rows = _read(legacy, have_lock=True)
        except CorruptStore:
            return   # moved aside: nothing left to split
        sessions: dict[tuple[str, str], Rows] = {}
        for row in rows:
            agent, session = row.get("agent"), row.get("session_id")
            if isinstance(agent, str) and isinstance(session, str):
                sessions.setdefault((agent, session), []).append(row)
        for (agent, session), old in sessions.items():
            def merge(current: Rows, old: Rows = old) -> Rows:
                seen = {row.get("turn_id") for row in current}
                return [row for row in old if row.get("turn_id") not in seen] + current

            _rewrite(session_file(paths, agent, session), merge, None)
        legacy.unlink()


def sweep(paths: RepositoryPaths, now: float | None = None) -> int:
    """Remove the files of sessions whose every turn expired, and the oldest past MAX_SESSIONS;
    at most once per SWEEP_EVERY (a marker's time). Returns how many files went."""
    now = time.time() if now is None else now
    folder = turns_dir(paths)
    marker = folder / ".swept"
    try:
        if now - marker.stat().st_mtime < SWEEP_EVERY:
            return 0
    except FileNotFoundError:
        pass
    except OSError:
        return 0
    try:
        folder.mkdir(parents=True, exist_ok=True)
        marker.touch()
        os.utime(marker, (now, now))
        files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return 0
    removed = 0
    for rank, path in enumerate(files):
        try:
            with locked(_lock_of(path), timeout=0):
                if rank < MAX_SESSIONS and _live(_read(path, have_lock=True), now):
                    continue
                path.unlink()
                removed += 1
            # A session whose every turn is a week old is not being written to: its lock file can go.
            _lock_of(path).unlink()
        except (OSError, CorruptStore, LockTimeout):   # held: swept next time
            continue
    return removed
