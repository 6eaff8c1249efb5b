"""git-neo: git-native, team-shared, self-correcting memory for AI-assisted coding.

The public API (docs/architecture.md §11) is imported lazily so that ``import neo_git`` and
``git neo -h`` stay instant; numpy and pygit2 load on first use of the store.
"""
from __future__ import annotations

import os

# The one place that decides BLAS threading, for the CLI and the library alike (issue 35): a
# call multiplies one query by a few thousand rows, and OpenBLAS's thread pool (one spinning
# thread per core, started when numpy is imported) costs more CPU than the product: in-process
# recall on 2 cores was 1.7-2.7x slower with it. Every import of git-neo's modules runs this
# first, so it holds whenever numpy is first imported through git-neo. A user's own setting
# wins; a program that imported numpy before neo_git keeps the pool it already started.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

TYPE_CHECKING = False   # not `typing`'s: importing typing costs every hook process ~3 ms

__version__ = "0.1.0"

__all__ = [
    "FactStore", "Fact", "FactMetadata", "FactKind", "FactScope", "ContextResult",
    "NeoError", "FactNotFound", "InvalidFact", "NeoEngine", "AskResult", "__version__",
]

_LAZY = {
    "FactStore": "neo_git.store",
    "Fact": "neo_git.facts",
    "FactMetadata": "neo_git.facts",
    "FactKind": "neo_git.facts",
    "FactScope": "neo_git.facts",
    "ContextResult": "neo_git.recall",
    "NeoError": "neo_git.errors",
    "FactNotFound": "neo_git.errors",
    "InvalidFact": "neo_git.errors",
    "NeoEngine": "neo_git.ask.engine",
    "AskResult": "neo_git.ask.model",
}

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from neo_git.ask.engine import NeoEngine
    from neo_git.ask.model import AskResult
    from neo_git.errors import FactNotFound, InvalidFact, NeoError
    from neo_git.facts import Fact, FactKind, FactMetadata, FactScope
    from neo_git.recall import ContextResult
    from neo_git.store import FactStore


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'neo_git' has no attribute {name!r}")
    import importlib

    if name == "FactStore":   # the citations feature registers its cite resolver (neo_git/citing.py)
        importlib.import_module("neo_git.citations")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
