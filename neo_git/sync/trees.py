"""Reading a facts tree from a commit someone else wrote, trusting nothing in it.

The tree layout is `facts/<id[0:2]>/<id>.json` (see `store/refstore.py`). A
teammate's commit may hold anything: a folder where a blob belongs, a file named
`../x`, 10 MB of JSON, an id that does not match its path. Every incoming fact
goes through `read_fact`: a size check on the object header (so a huge blob is
never loaded), then `Fact.from_dict` (the one validation path, shared with the
hardening work), then a check that the path is exactly the one its id implies.
"""
from __future__ import annotations

from typing import NamedTuple, cast

import pygit2

from neo_git.errors import InvalidFact
from neo_git.facts import Fact, FactScope
from neo_git.store.ref_facts import fact_from_blob, fact_id_of  # fact_id_of re-exported for treemerge

MAX_FACT_BYTES = 64 * 1024


_FILE = pygit2.enums.FileMode.BLOB     # 100644: the only mode a fact or meta.json may have
_FOLDER = pygit2.enums.FileMode.TREE
MAX_META_BYTES = 4096


class Entry(NamedTuple):
    """One tree entry: its object id and git's file mode."""

    oid: pygit2.Oid
    mode: int

    @property
    def is_blob(self) -> bool:
        """A regular, non-executable file (links, executables and submodules are not)."""
        return self.mode == _FILE

    @property
    def is_tree(self) -> bool:
        """A folder."""
        return self.mode == _FOLDER


def _entry(e) -> Entry:
    return Entry(e.id, e.filemode)


def foreign_entries(repo: pygit2.Repository, theirs: pygit2.Oid, ours: pygit2.Oid | None) -> list[tuple[str, str]]:
    """(path, reason) for each entry at the root of *theirs* that is not ours to take: anything
    but a `facts` folder and a small, regular, valid `meta.json` (skipped unless ours has
    the very same entry). Only fact blobs and meta.json cross a sync."""
    root = repo[theirs].peel(pygit2.Tree)
    our_root = repo[ours].peel(pygit2.Tree) if ours is not None else None
    out = []
    for e in root:
        name = str(e.name)   # a tree entry always has one
        same = our_root is not None and name in our_root and our_root[name].id == e.id \
            and our_root[name].filemode == e.filemode
        if same:
            continue
        if name == "facts" and e.filemode == _FOLDER:
            continue
        if name == "meta.json" and e.filemode == _FILE and _meta_ok(repo, e.id):
            continue
        out.append((name, _foreign_reason(name, e.filemode)))
    return out


def _meta_ok(repo: pygit2.Repository, oid: pygit2.Oid) -> bool:
    from neo_git import safejson

    try:
        if repo.odb.read_header(oid)[1] > MAX_META_BYTES:
            return False
        data = safejson.loads(cast(pygit2.Blob, repo[oid]).data)
    except (ValueError, UnicodeDecodeError, KeyError):
        return False
    return isinstance(data, dict) and isinstance(data.get("schema_version"), int)


_KINDS = {0o120000: "a symbolic link", 0o160000: "a submodule (gitlink)", 0o100755: "an executable file",
          int(_FOLDER): "a folder", int(_FILE): "a file"}


def kind_of(mode: int) -> str:
    """What a tree entry of *mode* is, in words ("a symbolic link", "a submodule (gitlink)", …)."""
    return _KINDS.get(int(mode), f"an entry of mode {int(mode):o}")


def _foreign_reason(name: str, mode: int) -> str:
    what = kind_of(mode)
    if name in ("facts", "meta.json"):
        return f"{what} where {'a folder' if name == 'facts' else 'a small regular meta.json'} belongs; dropped"
    return f"{what} that is not part of a facts tree; dropped"


def facts_subtrees(repo: pygit2.Repository, commit: pygit2.Oid | None) -> dict[str, Entry] | None:
    """`facts/<xx>` entries of *commit* by name ({} for None or a commit without facts/; None
    when `facts` is there but is not a folder: nothing can be read, and nothing is removed)."""
    if commit is None:
        return {}
    tree = repo[commit].peel(pygit2.Tree)
    if "facts" not in tree:
        return {}
    if tree["facts"].filemode != _FOLDER:
        return None   # a link or submodule named facts: unreadable (and a gitlink's object is not here)
    facts = repo.get(tree["facts"].id)
    if not isinstance(facts, pygit2.Tree):
        return None
    return {str(e.name): _entry(e) for e in facts}   # a tree entry always has a name


def subtree_entries(repo: pygit2.Repository, entry: Entry | None) -> dict[str, Entry]:
    """Entries of one `facts/<xx>` folder ({} when absent or not a folder)."""
    if entry is None or not entry.is_tree:
        return {}
    tree = repo.get(entry.oid)
    if not isinstance(tree, pygit2.Tree):
        return {}
    return {str(e.name): _entry(e) for e in tree}   # a tree entry always has a name


def read_fact(repo: pygit2.Repository, prefix: str, name: str, entry: Entry,
              scope: FactScope = FactScope.PROJECT) -> Fact:
    """Validate one incoming fact: a file of at most 64 KB at the path its id implies, which
    the ref reader would accept (`store.ref_facts.fact_from_blob`: parses, path matches id,
    the ref's *scope*). Raises InvalidFact saying why."""
    path = f"facts/{prefix}/{name}"
    if fact_id_of(prefix, name) is None:
        raise InvalidFact(f"{path}: not a fact path (facts/<2 hex>/<16 hex>.json)")
    if not entry.is_blob:
        raise InvalidFact(f"{path}: {kind_of(entry.mode)}, not a fact file")
    kind, size = repo.odb.read_header(entry.oid)
    if size > MAX_FACT_BYTES:
        raise InvalidFact(f"{path}: {size:,} bytes, over the {MAX_FACT_BYTES // 1024} KB limit for one fact")
    return fact_from_blob(cast(pygit2.Blob, repo[entry.oid]).data, path, scope=scope)


def read_fact_or_none(repo: pygit2.Repository, prefix: str, name: str, entry: Entry | None,
                      scope: FactScope = FactScope.PROJECT) -> Fact | None:
    """`read_fact` for our own side or the base: None where there is nothing valid to read."""
    if entry is None:
        return None
    try:
        return read_fact(repo, prefix, name, entry, scope)
    except InvalidFact:
        return None
