"""Code health from git objects: import cycles, god files, nesting depth (docs/architecture.md §6).

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

from neo_git.health.cache_file import CACHE_FILE

__all__ = [
    "snapshot_commit", "snapshot_index", "cached_summary", "health_delta", "HealthSnapshot", "HealthDelta",
    "FileMetrics", "ImportGraph", "ImportRef",
]

_LAZY = {
    "snapshot_commit": "neo_git.health.measure",
    "snapshot_index": "neo_git.health.measure",
    "HealthSnapshot": "neo_git.health.snapshot",
    "health_delta": "neo_git.health.delta",
    "HealthDelta": "neo_git.health.delta",
    "FileMetrics": "neo_git.health.model",
    "ImportGraph": "neo_git.health.model",
    "ImportRef": "neo_git.health.model",
}

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.health.delta import HealthDelta, health_delta
    from neo_git.health.measure import HealthSnapshot, snapshot_commit, snapshot_index
    from neo_git.health.model import FileMetrics, ImportGraph, ImportRef


def cached_summary(repo: pygit2.Repository, rev: str = "HEAD") -> dict | None:
    """The health summary of *rev* if a scan already measured its tree, else None (see
    `measure.cached_summary`). A repository without a health cache answers None before
    any health module loads: recall asks on every call, and loading them cost ~35 ms."""
    from neo_git.identity import repository_paths

    try:
        if not (repository_paths(repo).neo_dir / CACHE_FILE).is_file():
            return None
    except (OSError, ValueError):
        return None
    from neo_git.health.measure import cached_summary as summary

    return summary(repo, rev)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'neo_git.health' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
