"""Resolving `--cite` strings into citations: the citations feature's work, registered here.

The store validates citations in their stored form itself. A cite string
(`PATH[:SYMBOL|:START-END]`) has to be resolved against the work tree and HEAD, and re-anchoring a
stale fact's citations (`store/review/stale.py`) resolves their labels again: both are the
citations feature's (`neo_git/citations/resolve.py`), which the store never imports. The
feature registers how to resolve (`register`, run when `neo_git.citations` is imported: the CLI,
the MCP server and `neo_git.FactStore` import it) and the store asks `resolver_for`.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.errors import NeoError

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.fact_schema import Citation

Resolve = Callable[[str], "Citation"]                                    # cite string -> citation
ResolverFactory = Callable[["pygit2.Repository | None", "Path | None"], Resolve]   # (repo, work tree) -> Resolve

_FACTORY: list[ResolverFactory] = []


def register(factory: ResolverFactory) -> None:
    """Make *factory* the way cite strings are resolved (the citations feature's)."""
    _FACTORY[:] = [factory]


def resolver_for(repo: pygit2.Repository | None, workdir: Path | None) -> Resolve:
    """What resolves cite strings against *repo*'s HEAD and *workdir*."""
    if not _FACTORY:
        raise NeoError("resolving a citation needs the citations feature, which is not loaded",
                       "import neo_git.citations before citing code through the library")
    return _FACTORY[0](repo, workdir)
