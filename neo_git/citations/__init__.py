"""Facts anchored to code (docs/architecture.md §13): citations resolved with the health engine's grammars,
fingerprints that ignore whitespace and comments, verification against a revision, path scope.

| module | job |
|---|---|
| `languages` | which symbol query (`neo_git/health/languages/<lang>.symbols.scm`) each language uses |
| `fingerprint`, `symbols` | token streams and their digests; a file's citable symbols |
| `code` | a blob's fingerprint and symbols, cached by blob id (`.git/neo/citations.sqlite`) |
| `resolve` | `--cite PATH[:SYMBOL|:START-END]` → a citation, checked against the work tree / HEAD |
| `verify` | a citation against a commit: verified / moved / changed / gone / unknown |
| `recording`, `audit` | writing states on the facts: the commit worker, `git neo verify` (feature layer) |

What a state means for a fact (stale) is core, not this feature's: `neo_git/citation_states.py`,
and path-scope globs are `neo_git/pathglob.py`; the store and recall never import this package.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from neo_git import citing

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.citing import Resolve


def resolver(repo: pygit2.Repository | None, workdir: Path | None) -> Resolve:
    """How the store resolves cite strings (`neo_git/citing.py`): `resolve.Resolver`'s."""
    from neo_git.citations.resolve import Resolver  # loaded when a citation is resolved, not at start-up

    return Resolver(repo, workdir).resolve


citing.register(resolver)
