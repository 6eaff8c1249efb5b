"""Code health from git objects: import cycles, god files, nesting depth (DESIGN.md §6).

    from neo_git.health import snapshot_commit, snapshot_index, health_delta

    before = snapshot_commit(repo, "HEAD~1")
    after = snapshot_commit(repo, "HEAD")          # or snapshot_index(repo) for staged changes
    delta = health_delta(before, after, paths=["src/app.py"])
    delta.verdict                                  # "regression" | "neutral" | "improvement"
    cached_summary(repo)                           # a few counts if HEAD was measured before, else None

Names are imported on first use, so `import neo_git.health` loads neither
pygit2 nor tree-sitter.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "snapshot_commit", "snapshot_index", "cached_summary", "health_delta", "HealthSnapshot", "HealthDelta",
    "FileMetrics", "ImportGraph", "ImportRef",
]

_LAZY = {
    "snapshot_commit": "neo_git.health.measure",
    "snapshot_index": "neo_git.health.measure",
    "cached_summary": "neo_git.health.measure",
    "HealthSnapshot": "neo_git.health.measure",
    "health_delta": "neo_git.health.delta",
    "HealthDelta": "neo_git.health.delta",
    "FileMetrics": "neo_git.health.model",
    "ImportGraph": "neo_git.health.model",
    "ImportRef": "neo_git.health.model",
}

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.health.delta import HealthDelta, health_delta
    from neo_git.health.model import FileMetrics, ImportGraph, ImportRef
    from neo_git.health.measure import HealthSnapshot, cached_summary, snapshot_commit, snapshot_index


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'neo_git.health' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
