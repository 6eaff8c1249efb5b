"""The report's derived caches: one JSON file each under `.git/neo/cache/`.

Everything in them can be recomputed from git objects, so a missing, damaged or
foreign file (another format, another analyzer version) is simply a miss, and a
write that loses a race with another report costs a little time next run, never
data. Files are replaced atomically; no fsync (derived data).
"""
from __future__ import annotations

import json
from pathlib import Path

from neo_git import safejson
from neo_git.fileio import atomic_write

MAX_BYTES = 64 * 1024 * 1024   # a cache this large was not written by us: ignore it


def cache_file(neo_dir: Path, name: str) -> Path:
    """Where the report keeps the cache called *name* (`.git/neo/cache/report-<name>.json`)."""
    return neo_dir / "cache" / f"report-{name}.json"


def load(path: Path, key: str) -> dict | None:
    """The payload stored under *key*, or None (missing, unreadable, other key)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        data = safejson.loads(path.read_bytes())
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("payload"), dict):
        return None
    return data["payload"]


def save(path: Path, key: str, payload: dict) -> None:
    """Replace the cache with *payload* under *key*; a file system error is ignored (a cache
    that cannot be written only costs time)."""
    try:
        text = json.dumps({"key": key, "payload": payload}, separators=(",", ":"), ensure_ascii=False)
        atomic_write(path, text.encode("utf-8", "surrogatepass"), durable=False)
    except (OSError, ValueError):
        pass
