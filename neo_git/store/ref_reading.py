"""Reading a fact ref's tree: objects (fetched in a partial clone), and the 2-hex folders
parsed into `Subtree`s, unchanged ones taken from the parse cache or this process, changed ones
read from git (a folder the cache holds keeps its unchanged facts as they are: `Subtree.spliced`).
`RefStore` (refstore.py) is built on it."""
from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pygit2

from neo_git.errors import CorruptStore, InvalidFact
from neo_git.facts import Fact, FactScope
from neo_git.store.objects import MissingObject, fetch_missing
from neo_git.store.parse_cache import REWRITE_AFTER, Subtree, parse_cache_path
from neo_git.store.parse_journal import read_parse_cache, save_parse_cache
from neo_git.store.ref_facts import fact_from_blob, fact_path

_BLOB = pygit2.enums.FileMode.BLOB
_EMPTY = Subtree(None, {}, {}, ())  # stands in for a subtree that is absent
_TREE = pygit2.enums.FileMode.TREE


def _name(entry: pygit2.Object) -> str:
    """A tree entry's name (pygit2 types it optional: an object read by id has none)."""
    name = entry.name
    assert name is not None
    return name


class SubtreeReading:
    """The reading half of `RefStore`: needs `repo`, `ref`, `scope`, `common_dir` and the
    `_subtrees`, `_subtrees_tip` and `_persisted` attributes it keeps."""

    repo: pygit2.Repository
    ref: str
    scope: FactScope
    common_dir: Path
    _subtrees: dict[str, Subtree]
    _subtrees_tip: pygit2.Oid | None
    _persisted: dict[str, Subtree] | None

    def _object(self, oid: pygit2.Oid, where: str) -> pygit2.Object:
        """The object *oid*, fetched from the promisor remote if this is a partial clone;
        MissingObject (a `fatal:` naming it) if it cannot be had."""
        try:
            return self.repo[oid]
        except (KeyError, ValueError, pygit2.GitError):
            pass
        remote = fetch_missing(self.repo, [oid])
        try:
            return self.repo[oid]
        except (KeyError, ValueError, pygit2.GitError):
            raise MissingObject(str(oid), where, remote) from None

    def _prefetch(self, oids: list[pygit2.Oid]) -> None:
        """Fetch every object of *oids* this repository lacks in one go (partial clones)."""
        missing = [oid for oid in oids if oid not in self.repo]
        if missing:
            fetch_missing(self.repo, missing)

    def _commit(self, oid: pygit2.Oid) -> pygit2.Commit:
        obj = self._object(oid, self.ref)
        if not isinstance(obj, pygit2.Commit):
            raise CorruptStore(f"{self.ref} does not point at a commit",
                               f"inspect it with `git log {self.ref}`; nothing was changed")
        return obj

    def _subtrees_at(self, tip: pygit2.Oid | None) -> dict[str, Subtree]:
        """The parsed subtrees at *tip*: unchanged ones as they were (from this process or the
        parse cache), changed ones read from git; the cache is brought up to date."""
        if tip == self._subtrees_tip and tip is not None:
            return self._subtrees
        if tip is None:
            self._subtrees, self._subtrees_tip = {}, None
            return self._subtrees
        tree = cast(pygit2.Tree, self._object(self._commit(tip).tree_id, f"the tree of {self.ref}"))
        # A link or submodule named facts holds nothing to read (a gitlink's commit is not in
        # this repository, so asking for it would fail as a missing object).
        facts_tree = self._object(tree["facts"].id, f"{self.ref}:facts") \
            if "facts" in tree and tree["facts"].filemode == _TREE else None
        known = self._subtrees
        cold = not known and self._subtrees_tip is None
        if cold:
            # A cold process: skip unchanged subtrees.
            known = read_parse_cache(self._parse_cache_path(), self.ref, self._cached_blob_fact)
            self._persisted = known
        subtrees: dict[str, Subtree] = {}
        read = 0
        if isinstance(facts_tree, pygit2.Tree):
            self._prefetch_changed(facts_tree, known)
            for entry in facts_tree:
                name = _name(entry)
                cached = known.get(name)
                if cached is not None and cached.oid == entry.id:
                    subtrees[name] = cached
                    continue
                subtrees[name] = self._read_subtree(entry, cached)
                read += 1
        self._subtrees, self._subtrees_tip = subtrees, tip
        if read:
            self._save_parse_cache(subtrees, cold)
        return subtrees

    def _save_parse_cache(self, subtrees: dict[str, Subtree], cold: bool) -> None:
        self._persisted = save_parse_cache(self._parse_cache_path(), self.ref, self._persisted, subtrees, cold,
                                           REWRITE_AFTER)

    def _prefetch_changed(self, facts_tree: pygit2.Tree, known: dict[str, Subtree]) -> None:
        """In a partial clone, fetch the subtrees and blobs about to be read in two batches,
        not one lazy fetch per object."""
        changed = [e for e in facts_tree if e.filemode == _TREE and known.get(_name(e), _EMPTY).oid != e.id]
        self._prefetch([e.id for e in changed])
        blobs: list[pygit2.Oid] = []
        for entry in changed:
            earlier = known.get(_name(entry), _EMPTY).blob_ids()   # a cached folder stays undecoded
            sub = self.repo.get(entry.id)
            if isinstance(sub, pygit2.Tree):
                blobs += [b.id for b in sub if b.filemode == _BLOB and earlier.get(_name(b)) != b.id.raw]
        self._prefetch(blobs)

    def _read_subtree(self, entry: pygit2.Object, previous: Subtree | None) -> Subtree:
        """Parse one 2-hex folder; blobs unchanged since *previous* reuse their parsed fact."""
        if entry.filemode != _TREE:   # a file, link or submodule (whose object is not here)
            return Subtree(entry.id, {}, {}, (f"{self.ref}:facts/{entry.name} is not a folder; skipped",))
        subtree = self._object(entry.id, f"{self.ref}:facts/{entry.name}")
        if not isinstance(subtree, pygit2.Tree):
            return Subtree(entry.id, {}, {}, (f"{self.ref}:facts/{entry.name} is not a folder; skipped",))
        lazy = previous is not None and previous.is_lazy   # from the parse cache: keep its rows as they are
        # name -> (raw blob id, what to keep): a cached row (lazy) or the parsed fact; None when skipped
        earlier = previous.entries() if previous is not None and lazy else {
            name: (oid.raw, fact) for name, (oid, fact, _) in (previous.blobs if previous is not None else {}).items()}
        # by name: a tree that lists a name twice keeps the last entry; a fact, or (lazy) a cached row number
        kept: dict[str, tuple[pygit2.Oid, Any, str | None]] = {}
        for blob_entry in subtree:
            name = _name(blob_entry)
            seen = earlier.get(name)
            # Reuse only a fact whose blob is unchanged and still a regular file: the cache keeps
            # no modes, and a skipped blob's warning may depend on its mode (re-read: they are rare).
            if seen is not None and seen[0] == blob_entry.id.raw and seen[1] is not None \
                    and blob_entry.filemode == _BLOB:
                kept[name] = (blob_entry.id, seen[1], None)
                continue
            fact, warning = self._read_blob(_name(entry), blob_entry)
            kept[name] = (blob_entry.id, fact, warning)
        if previous is None or not lazy:
            return Subtree.of(entry.id, kept)
        items = [("row", found) if isinstance(found, int) else
                 ("fact", name, oid, found) if found is not None else ("skip", name, oid, warning)
                 for name, (oid, found, warning) in kept.items()]
        return Subtree.spliced(entry.id, previous, items)

    def _read_blob(self, folder: str, blob_entry: pygit2.Object) -> tuple[Fact | None, str | None]:
        """(the fact in one blob of `facts/<folder>/`, None) or (None, why it was skipped)."""
        path = f"facts/{folder}/{blob_entry.name}"
        if blob_entry.filemode != _BLOB:   # a link, executable, folder or submodule
            return None, f"{self.ref}:{path}: not a regular file (mode {int(blob_entry.filemode):o}); skipped"
        blob = self._object(blob_entry.id, f"{self.ref}:{path}")
        try:
            if not isinstance(blob, pygit2.Blob):
                raise InvalidFact(f"{self.ref}:{path}: not a file")
            return fact_from_blob(blob.data, path, self.ref, self.scope), None
        except InvalidFact as exc:
            # A teammate's malformed fact: skip it, keep it on the ref untouched.
            return None, f"{exc.message}; skipped"

    def _cached_blob_fact(self, fact_id: str, blob: bytes) -> Fact:
        """A fact the parse cache lists (its sealed row names it and its blob) but whose encoded
        form the cache no longer gives back (the file was replaced since its header was read, or
        edited): read from its blob, as a full read would."""
        path = fact_path(fact_id)
        obj = self._object(pygit2.Oid(raw=blob), f"{self.ref}:{path}")
        if not isinstance(obj, pygit2.Blob):
            raise InvalidFact(f"{self.ref}:{path}: not a file")
        return fact_from_blob(obj.data, path, self.ref, self.scope)

    def _parse_cache_path(self) -> Path:
        return parse_cache_path(self.common_dir, self.ref)
