"""The work queue between hook runs and the one worker that processes it.

Each hook run appends its work to `.git/neo/queue.jsonl` (under `queue.lock`) and then
tries the processing lock without waiting. Whoever holds it drains the queue until it
is empty, releases, and looks once more (work appended between its last look and the
release would otherwise wait for the next commit). So a burst of commits costs one
worker doing the processing while the other hook runs exit at once, and nothing queued
is lost: an item is either taken by the current holder or by the process that queued it.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from neo_git import safejson
from neo_git.errors import NeoError
from neo_git.fileio import atomic_write, locked

QUEUE_FILE = "queue.jsonl"
PROCESS_LOCK = "outcomes.lock"
MAX_ITEMS = 1000


def enqueue(neo_dir: Path, item: dict) -> None:
    """Append one work item (a JSON object)."""
    neo_dir.mkdir(parents=True, exist_ok=True)
    with locked(neo_dir / "queue.lock"):
        with open(neo_dir / QUEUE_FILE, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(item, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def take_all(neo_dir: Path) -> list[dict]:
    """Every queued item (oldest first), emptying the queue; unreadable lines are dropped."""
    path = neo_dir / QUEUE_FILE
    with locked(neo_dir / "queue.lock"):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        if not text:
            return []
        atomic_write(path, b"", durable=False)
    items = []
    for line in text.splitlines()[-MAX_ITEMS:]:
        try:
            item = safejson.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            items.append(item)
    return items


def _has_items(neo_dir: Path) -> bool:
    try:
        return (neo_dir / QUEUE_FILE).stat().st_size > 0
    except OSError:
        return False


def drain(neo_dir: Path, handle: Callable[[list[dict]], None], *, wait: float = 0) -> bool:
    """Process queued items with *handle* while holding the processing lock; False when
    another process holds it (it will take our items). *wait*: seconds to wait for it."""
    drained = False
    while True:
        try:
            with locked(neo_dir / PROCESS_LOCK, timeout=wait):
                while True:
                    items = take_all(neo_dir)
                    if not items:
                        break
                    handle(items)
                    drained = True
        except NeoError:
            return drained
        if not _has_items(neo_dir):
            return True
