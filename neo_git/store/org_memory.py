"""Org scope kept in a git repository: `<NEO_HOME>/org/<org>.git` (bare), once connected.

Without a connection org facts live in `facts_org_<org>.json` (store/filestore.py) and
nothing here runs but one `is_dir` (a cold recall pays nothing more for the feature).
`git neo org connect <url>` (neo_git/org/) creates the bare repository with the remote
as its `origin`; from then on the org scope is a `RefStore` on its `refs/neo/facts`:
the project scope's ref layout, fact format and validation (`fact_from_blob` with scope
org), field merge, trust and sync engine, with the repository as a parameter.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.errors import NeoError
from neo_git.facts import FactScope

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.store.refstore import RefStore

ORG_FOLDER = "org"


def org_memory_path(home: Path, org: str) -> Path:
    """Where the org memory of *org* lives under NEO_HOME (it exists only while connected)."""
    return Path(home) / ORG_FOLDER / f"{org}.git"


def open_org_memory(home: Path, org: str, signature: pygit2.Signature) -> RefStore | None:
    """The org scope's RefStore when *org* is connected under *home*, else None."""
    path = org_memory_path(home, org)
    if not path.is_dir():
        return None
    import pygit2

    from neo_git.store.refstore import RefStore

    try:
        repo = pygit2.Repository(str(path))
    except pygit2.GitError as exc:
        raise NeoError(f"the org memory {path} is not a git repository ({exc})",
                       f"move it out of the way (org facts then come from facts_org_{org}.json), "
                       f"or connect again: `git neo org connect <url> --org {org}`") from None
    store = RefStore(repo, path, signature, scope=FactScope.ORG, meta={"org_id": org}, home=home)
    store.description = f"{path} (refs/neo/facts)"
    return store
