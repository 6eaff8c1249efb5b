"""One file a commit changed: what the outcome loop (`outcomes/processing.py`) reads from a
commit and its records (`outcomes/records.py`) describe."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileChange:
    """One file a commit changed (renames followed: *old_path* is where it came from)."""

    path: str
    old_path: str | None
    old_id: str | None
    new_id: str | None
