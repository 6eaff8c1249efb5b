"""Reading a facts tree from a commit someone else wrote, trusting nothing in it.

The tree layout is `facts/<id[0:2]>/<id>.json` (see `store/refstore.py`). A
teammate's commit may hold anything: a folder where a blob belongs, a file named
`../x`, 10 MB of JSON, an id that does not match its path. Every incoming fact
goes through `read_fact`: a size check on the object header (so a huge blob is
never loaded), then `Fact.from_dict` (the one validation path, shared with the
hardening work), then a check that the path is exactly the one its id implies.
"""
from __future__ import annotations

from typing import NamedTuple

import pygit2

from neo_git.errors import InvalidFact
from neo_git.facts import Fact, FactScope
from neo_git.store.ref_facts import fact_from_blob, fact_id_of  # noqa: F401 - fact_id_of re-exported for treemerge

MAX_FACT_BYTES = 64 * 1024


class Entry(NamedTuple):
    """One tree entry: its object id and whether git says it is a plain file."""

    oid: pygit2.Oid
    is_blob: bool


def facts_subtrees(repo: pygit2.Repository, commit: pygit2.Oid | None) -> dict[str, Entry]:
    """`facts/<xx>` entries of *commit* by name ({} for None or a commit without facts/)."""
    if commit is None:
        return {}
    tree = repo[commit].peel(pygit2.Tree)
    if "facts" not in tree:
        return {}
    facts = repo[tree["facts"].id]
    if not isinstance(facts, pygit2.Tree):
        return {}
    return {e.name: Entry(e.id, e.type_str == "blob") for e in facts}


def subtree_entries(repo: pygit2.Repository, entry: Entry | None) -> dict[str, Entry]:
    """Entries of one `facts/<xx>` folder ({} when absent or not a folder)."""
    if entry is None or entry.is_blob:
        return {}
    tree = repo[entry.oid]
    if not isinstance(tree, pygit2.Tree):
        return {}
    return {e.name: Entry(e.id, e.type_str == "blob") for e in tree}


def read_fact(repo: pygit2.Repository, prefix: str, name: str, entry: Entry,
              scope: FactScope = FactScope.PROJECT) -> Fact:
    """Validate one incoming fact: a file of at most 64 KB at the path its id implies, which
    the ref reader would accept (`store.ref_facts.fact_from_blob`: parses, path matches id,
    the ref's *scope*). Raises InvalidFact saying why."""
    path = f"facts/{prefix}/{name}"
    if fact_id_of(prefix, name) is None:
        raise InvalidFact(f"{path}: not a fact path (facts/<2 hex>/<16 hex>.json)")
    if not entry.is_blob:
        raise InvalidFact(f"{path}: not a file")
    kind, size = repo.odb.read_header(entry.oid)
    if size > MAX_FACT_BYTES:
        raise InvalidFact(f"{path}: {size:,} bytes, over the {MAX_FACT_BYTES // 1024} KB limit for one fact")
    return fact_from_blob(repo[entry.oid].data, path, scope=scope)


def read_fact_or_none(repo: pygit2.Repository, prefix: str, name: str, entry: Entry | None,
                      scope: FactScope = FactScope.PROJECT) -> Fact | None:
    """`read_fact` for our own side or the base: None where there is nothing valid to read."""
    if entry is None:
        return None
    try:
        return read_fact(repo, prefix, name, entry, scope)
    except InvalidFact:
        return None
