"""Project scope on `refs/neo/facts`: a commit chain that is never checked out.

Tree: `meta.json` plus `facts/<id[0:2]>/<id>.json`, one canonical JSON blob per
fact. Each change is one commit built with pygit2 tree builders (never the
user's index or work tree) and published by compare-and-swap on the ref,
retried when another writer got there first (for as long as others keep moving the ref,
up to RETRY_SECONDS; MAX_ATTEMPTS times in a row when it stands still).
Only the 2-hex subtree that holds a changed fact is rewritten, so a write costs
the same whatever the number of stored facts.
"""
from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pygit2

from neo_git import safejson
from neo_git.errors import NeoError
from neo_git.facts import SCHEMA_VERSION, Fact, FactScope, canonical_json
from neo_git.store.base import Change, LoadedScope, Transaction
from neo_git.store.parse_cache import Subtree
from neo_git.store.ref_damage import checked_tip
from neo_git.store.ref_facts import fact_path, pointer_problems  # noqa: F401 - fact_path re-exported
from neo_git.store.ref_reading import _BLOB, _EMPTY, _TREE, SubtreeReading
from neo_git.store.refcas import compare_and_swap

if TYPE_CHECKING:  # pragma: no cover - the write policy's index loads with the first write
    from neo_git.fact_table import FactTable
    from neo_git.store.index import FactIndex
    from neo_git.store.tree_facts import TreeFacts

FACTS_REF = "refs/neo/facts"
# A lost compare-and-swap is retried. While the ref keeps moving, other writers are progressing,
# and a slow writer (a loaded machine, many writers at once) may lose many rounds before it
# wins one: that goes on for up to RETRY_SECONDS. Only MAX_ATTEMPTS losses in a row with the ref
# standing still (its lock held, nobody progressing) end it sooner.
MAX_ATTEMPTS = 60
RETRY_SECONDS = 60.0
STALE_LOCK_SECONDS = 5.0  # a ref update holds its lock for milliseconds (longer only on a stalled machine)


def ensure_reflog(common_dir: Path, ref: str = FACTS_REF, repo: pygit2.Repository | None = None) -> None:
    """Create the ref's reflog file: git and libgit2 append to a reflog that exists,
    so the ref gets a history without touching `core.logAllRefUpdates` -- except libgit2 in
    a bare repository (an org memory), which logs nothing unless that setting is true. The
    reflog is how trust knows which commits this clone wrote (`store/local_writes.py`)."""
    log = Path(common_dir) / "logs" / ref
    if not log.exists():
        log.parent.mkdir(parents=True, exist_ok=True)
        log.touch()
    if repo is not None and repo.is_bare and "core.logAllRefUpdates" not in repo.config:
        try:
            repo.config["core.logAllRefUpdates"] = "true"
        except (pygit2.GitError, OSError):
            pass   # read-only: its writes go unlogged, so count as unverified (closed)


class RefStore(SubtreeReading):
    """Facts of one repository's project scope, stored on a git ref."""

    def __init__(self, repo: pygit2.Repository, common_dir: Path, signature: pygit2.Signature,
                 project_id: Callable[[], str | None] | str | None = None, ref: str = FACTS_REF,
                 scope: FactScope = FactScope.PROJECT, meta: dict | None = None, home: Path | None = None) -> None:
        self.repo = repo
        self.ref = ref
        self.description = ref
        self.scope = scope          # the one scope this ref holds (org: a connected org memory)
        self._meta = meta           # what meta.json records instead of the project id (org memory)
        self.common_dir = Path(common_dir)
        self.signature = signature
        self.home = home            # the NEO_HOME whose key signs the commits (None: $NEO_HOME, ~/.neo)
        # Who the writes are made for when not the person (the MCP server sets its agent): named
        # in every commit's message as `Agent: …`, so the log says an agent made the change.
        self.on_behalf_of: str | None = None
        # What meta.json records on the first write: a fixed id or a function asked only then
        # (the FactStore passes its own lookup, so nobody sets it from outside).
        self._project_id = project_id
        # prefix -> its parsed subtree at _subtrees_tip; a reload parses only changed subtrees (and
        # in them only changed blobs), so re-reading after a write costs the same at any size.
        # Subtrees from the parse cache stay lazy (rows, facts decoded when asked for) until
        # something needs every fact.
        self._subtrees: dict[str, Subtree] = {}
        self._subtrees_tip: pygit2.Oid | None = None
        # id -> fact at _loaded_tip, and its index; both updated per changed fact, not rebuilt,
        # from _loaded_from (the subtrees they reflect). The index is built on the first write
        # only (`_indexed`): a reader (recall) never needs it.
        self._loaded: dict[str, Fact] = {}
        self._loaded_tip: pygit2.Oid | None = None
        self._loaded_from: dict[str, Subtree] = {}
        self._index: FactIndex | None = None
        self._index_from: dict[str, Subtree] | None = None   # the subtrees the index reflects
        self._in_tree_order = True       # False once incremental updates appended out of order
        self._pointer_warnings: tuple = (None, [])  # (tip, warnings about pointers leading nowhere)
        self._sign: tuple[str | None] | None = None   # (signing mode,): store/signing.py, read on the first write
        # The subtrees as the parse cache file holds them (None: not read from it in this process);
        # a save journals only what differs from them.
        self._persisted: dict[str, Subtree] | None = None
        self._view: tuple[pygit2.Oid, LoadedScope] | None = None  # what load() returned for that tip
        self._table: tuple[pygit2.Oid, FactTable, list[str]] | None = None  # what table() returned
        self._good_tips: set[pygit2.Oid] = set()   # tips `tip_problem` accepted (checked once each)

    # --- reading -------------------------------------------------------------------

    def tip(self) -> pygit2.Oid | None:
        """The commit the ref points at, or None before the first fact. Damage is never "no facts
        yet" (the next write would start a new, empty history over the real one): a ref file that
        holds no id, a symbolic ref, a ref to anything but a facts commit here, or a ref that is
        gone while its reflog, packed-refs or the parse cache remember it is a `CorruptStore`
        pointing at `git neo doctor --fix` (store/ref_damage.py)."""
        return checked_tip(self.repo, self.common_dir, self.ref, self._good_tips)

    def load(self) -> LoadedScope:
        """All facts at the current tip, in tree order (cached; only changed subtrees are re-read)."""
        self._load_at(self.tip())
        if not self._in_tree_order:
            # Readers (recall) see facts in the order git lists them, as a full read gives;
            # rebuilt here, on a read, rather than after every write.
            self._loaded = self._merge(self._loaded_from)
            self._in_tree_order = True
        view = self._view
        if view is not None and view[0] == self._loaded_tip:
            # Unchanged tip: the same LoadedScope object (callers only read it), so the FactStore
            # can tell "nothing changed" by identity instead of walking every fact again.
            return view[1]
        if self._pointer_warnings[0] != self._loaded_tip:
            self._pointer_warnings = (self._loaded_tip, pointer_problems(self._loaded, self.ref))
        warnings = [w for s in self._loaded_from.values() for w in s.warnings] + self._pointer_warnings[1]
        loaded = LoadedScope(dict(self._loaded), warnings)
        if self._loaded_tip is not None:
            self._view = (self._loaded_tip, loaded)
        return loaded

    def table(self) -> tuple[FactTable, list[str]]:
        """The facts at the current tip as a `FactTable` (in tree order, as `load` gives them) and
        the warnings `load` would give. Subtrees from the parse cache stay lazy: a cold recall
        decodes only the facts it returns. The same objects while the tip is unchanged."""
        from neo_git.store.ref_table import subtrees_table, table_pointer_problems

        tip = self.tip()
        memo = self._table
        if memo is not None and memo[0] == tip:
            return memo[1], memo[2]
        subtrees = self._subtrees_at(tip)
        table = subtrees_table(list(subtrees.values()))
        warnings = [w for s in subtrees.values() for w in s.warnings] + table_pointer_problems(table, self.ref)
        if tip is not None:
            self._table = (tip, table, warnings)
        return table, warnings

    def meta(self) -> dict:
        """`meta.json` at the tip ({} before the first write)."""
        tip = self.tip()
        if tip is None:
            return {}
        tree = cast(pygit2.Tree, self._object(self._commit(tip).tree_id, "the tree of " + self.ref))
        if "meta.json" not in tree:
            return {}
        try:
            data = safejson.loads(cast(pygit2.Blob, self._object(tree["meta.json"].id, f"{self.ref}:meta.json")).data)
        except (ValueError, UnicodeDecodeError):
            return {}
        return data if isinstance(data, dict) else {}

    def _load_at(self, tip: pygit2.Oid | None) -> dict[str, Fact]:
        if tip == self._loaded_tip and tip is not None:
            return self._loaded
        subtrees = self._subtrees_at(tip)
        try:
            self._merge_changes(subtrees)
            self._advance_index(subtrees)
        except BaseException:
            # Half-applied: forget everything, so the next load starts over from scratch.
            self._loaded, self._loaded_from, self._loaded_tip, self._index = {}, {}, None, None
            raise
        self._loaded_from, self._loaded_tip = subtrees, tip
        return self._loaded

    def _facts_for_write(self, tip: pygit2.Oid | None) -> Mapping[str, Fact]:
        """The facts at *tip* for a transaction: the loaded dict when this process has every fact
        in memory, else a mapping that decodes a fact when it is looked up (the first add of a
        process reads no more than it compares with)."""
        from neo_git.store.ref_table import SubtreeFacts

        if self._loaded_tip is not None:
            return self._load_at(tip)
        subtrees = self._subtrees_at(tip)
        try:
            self._advance_index(subtrees)
        except BaseException:
            self._index = None
            raise
        return SubtreeFacts(subtrees)

    def _advance_index(self, subtrees: dict[str, Subtree]) -> None:
        """Bring the index (if built) from the subtrees it reflects to *subtrees*, fact by fact."""
        index, previous = self._index, self._index_from
        if index is None or previous is subtrees:
            self._index_from = subtrees if index is not None else None
            return
        assert previous is not None   # set whenever the index is
        for name in previous.keys() | subtrees.keys():
            before, after = previous.get(name, _EMPTY), subtrees.get(name, _EMPTY)
            if before.oid == after.oid:
                continue
            old_facts, new_facts = before.facts, after.facts
            for fact_id, fact in old_facts.items():
                if fact_id not in new_facts:
                    index.update(fact, None)
            for fact_id, fact in new_facts.items():
                old = old_facts.get(fact_id)
                if old is not fact and old != fact:   # a spliced folder decodes its kept facts anew
                    index.update(old, fact)
        self._index_from = subtrees

    @staticmethod
    def _merge(subtrees: dict[str, Subtree]) -> dict[str, Fact]:
        merged: dict[str, Fact] = {}
        for subtree in subtrees.values():  # tree order, as git lists it; later entries win
            merged.update(subtree.facts)
        return merged

    def _merge_changes(self, subtrees: dict[str, Subtree]) -> None:
        """Bring `_loaded` and `_index` from `_loaded_from` to *subtrees*, fact by fact. (A fact
        sits only at its own path, `fact_from_blob`: no id is in two subtrees.)"""
        if self._loaded_tip is None:
            # First load: every fact, in tree order.
            self._loaded = self._merge(subtrees)
            self._in_tree_order = True
            return
        previous = self._loaded_from
        changed = [name for name in previous.keys() | subtrees.keys()
                   if previous.get(name, _EMPTY).oid != subtrees.get(name, _EMPTY).oid]
        merged = self._loaded
        for name in changed:
            before = previous.get(name, _EMPTY).facts
            after = subtrees.get(name, _EMPTY).facts
            for fact_id in before:
                if fact_id not in after:
                    del merged[fact_id]
            for fact_id, fact in after.items():
                old = before.get(fact_id)
                if old is not fact:  # unchanged blobs keep their parsed Fact object
                    if old is None:
                        self._in_tree_order = False  # appended at the end of the dict
                    merged[fact_id] = fact

    def _indexed(self) -> FactIndex:
        """The index of the facts a transaction sees, built now if no write needed it before:
        from the loaded facts when this process has them all, else from the subtrees' rows (its
        groups built when first asked for)."""
        if self._index is None:
            from neo_git.store.index import FactIndex

            if self._loaded_tip is not None and self._loaded_tip == self._subtrees_tip:
                self._index = FactIndex.build(self._loaded)
            else:
                from neo_git.store.ref_table import subtrees_table

                self._index = FactIndex.from_table(subtrees_table(list(self._subtrees.values())))
            self._index_from = self._subtrees
        return self._index

    # --- writing -------------------------------------------------------------------

    def transact(self, body: Transaction, *, lazy: bool = False) -> Change | None:
        """Run *body* on the facts at the tip (a read-only `IndexedFacts`) and publish its
        change by CAS, retrying. *lazy* (a sync's merge, which looks up only the facts the
        tree diff names): the body gets a `TreeFacts` view that reads those blobs on demand,
        without the write index, unless this process has the tip loaded already."""
        from types import MappingProxyType

        from neo_git.store.index import IndexedFacts
        from neo_git.store.tree_facts import TreeFacts

        ensure_reflog(self.common_dir, self.ref, self.repo)
        delay = 0.002
        give_up = time.monotonic() + RETRY_SECONDS
        stalled = 0   # lost rounds in a row in which no other writer moved the ref
        attempts = 0
        while True:
            attempts += 1
            tip = self.tip()
            if lazy:
                loaded = tip is not None and tip == self._loaded_tip
                change = body(MappingProxyType(self._loaded) if loaded else TreeFacts(self, tip))
            else:
                facts = self._facts_for_write(tip)
                # A read-only view with its index, not a copy: copying every fact per add was O(N).
                change = body(IndexedFacts(facts, self._indexed))
            if change is None or change.is_empty:
                return change
            commit_id = self._write_commit(tip, change)
            if self._compare_and_swap(tip, commit_id, change.message):
                return change
            self._check_stale_lock()
            stalled = 0 if self.tip() != tip else stalled + 1
            if stalled >= MAX_ATTEMPTS or time.monotonic() > give_up:
                break
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 1.6, 0.1)
        self._check_stale_lock(older_than=0.0)
        raise NeoError(f"could not update {self.ref}: it kept moving ({attempts} attempts)",
                       "many writers at once; try again")

    def lock_path(self) -> Path:
        """The lock file git (and libgit2) create while they update the ref."""
        return self.common_dir / f"{self.ref}.lock"

    def _check_stale_lock(self, older_than: float = STALE_LOCK_SECONDS) -> None:
        """A git or git-neo process killed mid-update leaves the ref's lock behind, and every
        later write would wait for it in vain: once it is older than a live update ever
        takes, fail with git's own words (and point at the doctor, which can clear it)."""
        lock = self.lock_path()
        try:
            age = time.time() - lock.stat().st_mtime
        except OSError:
            return
        if age >= older_than:
            raise NeoError(f"Unable to create '{lock}': File exists.",
                           "Another git process seems to be running in this repository. Please make sure all "
                           "processes are terminated then try again. If it still fails, a git process may have "
                           "crashed in this repository earlier: remove the file manually to continue "
                           "(`git neo doctor --fix` removes it when no process holds it).")

    def initialize(self) -> bool:
        """Create the ref with a first commit holding only meta.json; False if it exists."""
        ensure_reflog(self.common_dir, self.ref, self.repo)
        if self.tip() is not None:
            return False
        builder = self.repo.TreeBuilder()
        builder.insert("meta.json", self._meta_blob(), _BLOB)
        commit = self._create_commit("init git-neo facts\n", builder.write(), [])
        return self._compare_and_swap(None, commit, "init git-neo facts")

    def _write_commit(self, tip: pygit2.Oid | None, change: Change) -> pygit2.Oid:
        repo = self.repo
        root = self._commit(tip).tree if tip is not None else None
        facts_tree = repo[root["facts"].id] if root is not None and "facts" in root else None
        facts_builder = repo.TreeBuilder(facts_tree) if isinstance(facts_tree, pygit2.Tree) else repo.TreeBuilder()
        by_prefix: dict[str, list[Fact]] = {}
        for fact in change.facts:
            by_prefix.setdefault(fact.id[:2], []).append(fact)
        removed_by_prefix: dict[str, list[str]] = {}
        for fact_id in change.removed:
            removed_by_prefix.setdefault(fact_id[:2], []).append(fact_id)
        for prefix in by_prefix.keys() | removed_by_prefix.keys():
            entry = facts_tree[prefix] if isinstance(facts_tree, pygit2.Tree) and prefix in facts_tree else None
            # A link or submodule at the folder's name (readers skip it) is replaced by the folder:
            # a gitlink's commit is not in this repository, so looking it up would fail.
            existing = repo[entry.id] if entry is not None and entry.filemode == _TREE else None
            builder = repo.TreeBuilder(existing) if isinstance(existing, pygit2.Tree) else repo.TreeBuilder()
            for fact_id in removed_by_prefix.get(prefix, ()):
                if builder.get(f"{fact_id}.json") is not None:
                    builder.remove(f"{fact_id}.json")
            for fact in by_prefix.get(prefix, ()):
                builder.insert(f"{fact.id}.json", repo.create_blob(canonical_json(fact)), _BLOB)
            if len(builder):
                facts_builder.insert(prefix, builder.write(), _TREE)
            elif facts_builder.get(prefix) is not None:
                facts_builder.remove(prefix)  # git trees hold no empty folders
        root_builder = repo.TreeBuilder(root) if root is not None else repo.TreeBuilder()
        root_builder.insert("facts", facts_builder.write(), _TREE)
        if root is None or "meta.json" not in root:
            root_builder.insert("meta.json", self._meta_blob(), _BLOB)
        details = (*change.details, *((f"Agent: {self.on_behalf_of}",) if self.on_behalf_of else ()))
        message = change.message + ("\n\n" + "\n".join(details) if details else "") + "\n"
        parents = [tip] if tip is not None else []
        for extra in change.parents:
            oid = pygit2.Oid(hex=extra) if isinstance(extra, str) else extra
            if oid not in parents:
                parents.append(oid)
        return self._create_commit(message, root_builder.write(), parents)

    def _create_commit(self, message: str, tree: pygit2.Oid, parents: list[pygit2.Oid]) -> pygit2.Oid:
        """The commit object (not yet on the ref), signed as `store/signing.py` decides: the
        signing mode is read once per store (config does not change mid-command)."""
        from neo_git.store.signing import signing_mode, write_commit

        if self._sign is None:
            self._sign = (signing_mode(self.repo),)
        return write_commit(self.repo, self._sign[0], self.signature, message, tree, parents, home=self.home)

    def facts_at(self, tip: pygit2.Oid | None) -> TreeFacts:
        """The facts at commit *tip* of this ref as a mapping that reads only the blobs asked for."""
        from neo_git.store.tree_facts import TreeFacts

        return TreeFacts(self, tip)

    def _meta_blob(self) -> pygit2.Oid:
        if self._meta is not None:
            meta = {"schema_version": SCHEMA_VERSION, **self._meta}
        else:
            project_id = self._project_id() if callable(self._project_id) else self._project_id
            meta = {"schema_version": SCHEMA_VERSION, "project_id": project_id}
        return self.repo.create_blob(json.dumps(meta, sort_keys=True, indent=2) + "\n")

    def _compare_and_swap(self, expected: pygit2.Oid | None, new: pygit2.Oid, message: str) -> bool:
        return compare_and_swap(self.repo, self.ref, expected, new, f"neo: {message}"[:200])
