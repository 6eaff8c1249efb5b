"""Checking a citation against a commit: verified, moved, changed, gone or unknown.

    verifier = Verifier(repo, commit, reader)                  # every citation against one commit
    verifier = Verifier(repo, commit, reader, changes=diff)    # the worker: what this commit changed
    result = verifier.check(citation)                          # -> Check(state, citation, detail)

A file that is where the citation left it, with the blob id it was checked against, is
verified without being read. Otherwise the blob's fingerprint and symbols come from the
blob-keyed cache (`code.py`). A path that is no longer in the tree is followed through
git's rename detection (pygit2's `find_similar`, the rules of `git diff -M`): in the worker
over the commit's own diff, otherwise over the diff from the commit the citation was last
checked at. A symbol that left its file is looked for, by fingerprint, among the other
symbols of the file and then in the files the diff added or changed.

Nothing here is ever "gone" for want of an object: a blob or commit this repository does
not have (a partial clone, a shallow one) makes the state "unknown".
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from neo_git.citation_states import CHANGED, GONE, MOVED, UNKNOWN, VERIFIED
from neo_git.citations.code import CodeReader, Unavailable
from neo_git.citations.fingerprint import find_span, span_digest
from neo_git.citations.languages import language_of
from neo_git.citations.symbols import line_tokens
from neo_git.fact_schema import Citation, CitationState

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

MAX_CANDIDATES = 200   # files searched for a symbol that left its file


class Change(NamedTuple):
    """One file a commit changed (as `outcomes.processing.FileChange`: renames followed)."""

    path: str
    old_path: str | None
    old_id: str | None
    new_id: str | None


class Check(NamedTuple):
    """The state of one citation at a commit, and the citation as it should now read (moved:
    its new place; otherwise as it was)."""

    state: CitationState
    citation: Citation
    detail: str


class _Missing(Exception):
    """An object needed to decide is not in this repository."""


def diff_changes(repo: pygit2.Repository, old_tree, new_tree) -> list[Change]:
    """The files that differ between two trees, with git's rename detection."""
    diff = repo.diff(old_tree, new_tree) if old_tree is not None else new_tree.diff_to_tree(swap=True)
    diff.find_similar()
    zero = "0" * 40
    out = []
    for delta in diff.deltas:
        old_id = str(delta.old_file.id) if str(delta.old_file.id) != zero else None
        new_id = str(delta.new_file.id) if str(delta.new_file.id) != zero else None
        if new_id is None:
            out.append(Change(delta.old_file.path, delta.old_file.path, old_id, None))
        else:
            out.append(Change(delta.new_file.path, delta.old_file.path if old_id else None, old_id, new_id))
    return out


class Verifier:
    """Checks citations against one commit."""

    def __init__(self, repo: pygit2.Repository, commit: pygit2.Commit, reader: CodeReader,
                 changes: Sequence[Change] | None = None) -> None:
        self.repo = repo
        self.commit = commit
        self.commit_id = str(commit.id)
        self.tree = commit.tree
        self.reader = reader
        self._changes = None if changes is None else list(changes)
        self._by_anchor: dict[str, list[Change] | None] = {}

    # --- the tree ----------------------------------------------------------------

    def blob_at(self, path: str) -> str | None:
        """The blob id at *path* in the commit's tree (None: no such file)."""
        try:
            entry = self.tree[path]
        except KeyError:
            return None
        except Exception as exc:  # a tree object this repository lacks
            raise _Missing(path) from exc
        if entry.type_str != "blob":
            return None
        return str(entry.id)

    def changes_since(self, anchor: str | None) -> list[Change] | None:
        """What changed between the commit a citation was checked at and this one (the worker's
        own diff when it gave one); None when that commit is not in this repository."""
        if self._changes is not None:
            return self._changes
        if not anchor:
            return None
        if anchor not in self._by_anchor:
            import pygit2

            try:
                old = self.repo[anchor].peel(pygit2.Commit).tree
                self._by_anchor[anchor] = diff_changes(self.repo, old, self.tree)
            except Exception:  # noqa: BLE001 - a shallow clone's boundary, a partial clone's blobs
                self._by_anchor[anchor] = None
        return self._by_anchor[anchor]

    # --- checking ----------------------------------------------------------------

    def check(self, citation: Citation) -> Check:
        """The state of *citation* at this commit."""
        try:
            return self._check(citation)
        except (_Missing, Unavailable) as exc:
            return Check(UNKNOWN, citation, f"not available in this repository ({exc})")

    def _check(self, c: Citation) -> Check:
        path = c.path
        blob = self.blob_at(path)
        if blob is not None:
            found = self._at(c, path, blob)
            if found is not None:
                return found
            return self._search(c, f"{c.symbol} is no longer in {path}")
        changes = self.changes_since(c.commit)
        if changes is None:
            return Check(UNKNOWN, c, f"{path} is not in {self.commit_id[:12]} and the commit it was "
                                     "checked at is not in this repository: renamed or deleted cannot be told")
        renamed = next((ch for ch in changes if ch.old_path == path and ch.path != path and ch.new_id), None)
        if renamed is None:
            return self._search(c, f"{path} was deleted")
        assert renamed.new_id is not None   # picked for having one
        found = self._at(c, renamed.path, renamed.new_id)
        if found is None:
            return self._search(c, f"{c.symbol} is not in {renamed.path} (renamed from {path})")
        if found.state == VERIFIED:
            return Check(MOVED, found.citation, f"{path} was renamed to {renamed.path}")
        return found

    def _at(self, c: Citation, path: str, blob: str) -> Check | None:
        """The citation checked in the file *path* (blob *blob*); None when its symbol is absent."""
        moved_file = path != c.path
        here = replace(c, path=path, blob=blob, commit=self.commit_id)
        if blob == c.blob and not moved_file:
            return Check(VERIFIED, c, "unchanged file")
        if c.span:
            return self._span_at(c, c.span, here, path, blob)
        code = self.reader.code(path, blob)
        symbol = c.symbol
        if not symbol:
            if code.fingerprint == c.fingerprint:
                return Check(VERIFIED, c if not moved_file else here, "same code")
            return Check(CHANGED, replace(c, path=path), f"{path} changed")
        found = code.symbols.get(symbol)
        if found is not None:
            if found.fingerprint == c.fingerprint:
                return Check(VERIFIED, c if not moved_file else here, "same code")
            return Check(CHANGED, replace(c, path=path), f"{symbol} in {path} changed")
        renamed = sorted(s.name for s in code.symbols.values() if s.fingerprint == c.fingerprint)
        if renamed:
            return Check(MOVED, replace(here, symbol=renamed[0]), f"{symbol} is now {renamed[0]} in {path}")
        return None

    def _span_at(self, c: Citation, span: tuple[int, int], here: Citation, path: str, blob: str) -> Check:
        tokens = line_tokens(language_of(path), self.reader.data(blob))
        start, end = span
        fingerprint, _size = span_digest(tokens, start, end)
        if fingerprint == c.fingerprint:
            return Check(VERIFIED, c if path == c.path else here, "same code")
        found = find_span(tokens, c.fingerprint or "", int(c.size or 0), near=start)
        if found is not None:
            return Check(MOVED, replace(here, span=(found[0], found[1])),
                         f"lines {start}-{end} are now {found[0]}-{found[1]}")
        return Check(CHANGED, replace(c, path=path), f"lines {start}-{end} of {path} changed")

    def _search(self, c: Citation, why: str) -> Check:
        """A symbol or span that left its file: the same code anywhere the diff touched, else gone."""
        if not c.symbol and not c.span:
            return Check(GONE, c, why)
        changes = self.changes_since(c.commit)
        if changes is None:
            return Check(UNKNOWN, c, why + "; where it went cannot be told here")
        for path, blob in self._candidates(changes, c.path):
            try:
                found = self._moved_into(c, path, blob)
            except Unavailable:
                continue
            if found is not None:
                return Check(MOVED, found, f"{c.label} moved to {found.label}")
        return Check(GONE, c, why)

    def _candidates(self, changes: Iterable[Change], path: str) -> list[tuple[str, str]]:
        language = language_of(path)
        out = [(ch.path, ch.new_id) for ch in changes
               if ch.new_id and ch.path != path and language_of(ch.path) == language]
        return out[:MAX_CANDIDATES]

    def _moved_into(self, c: Citation, path: str, blob: str) -> Citation | None:
        here = replace(c, path=path, blob=blob, commit=self.commit_id)
        if c.span:
            tokens = line_tokens(language_of(path), self.reader.data(blob))
            found = find_span(tokens, c.fingerprint or "", int(c.size or 0), near=c.span[0])
            return None if found is None else replace(here, span=(found[0], found[1]))
        symbols = self.reader.code(path, blob).symbols
        same = symbols.get(c.symbol or "")
        if same is not None and same.fingerprint == c.fingerprint:
            return here
        names = sorted(s.name for s in symbols.values() if s.fingerprint == c.fingerprint)
        return replace(here, symbol=names[0]) if names else None


def find_since(repo: pygit2.Repository, reader: CodeReader, citation: Citation, state: str,
               commit: pygit2.Commit, limit: int = 64) -> pygit2.Commit | None:
    """The commit from which *citation* has been in *state* at *commit*: walking first parents
    back (no rename detection, at most *limit* steps) to the last commit where it was not, or
    to the commit it was checked at. None when the walk ends first (a shallow boundary, the limit)."""
    current = commit
    for _ in range(limit):
        try:
            parents = current.parents
        except Exception:  # noqa: BLE001 - a shallow clone's boundary: the parent is not here
            return None
        if not parents:
            return None
        parent = parents[0]
        if str(parent.id) == citation.commit:
            return current
        if Verifier(repo, parent, reader, changes=[]).check(citation).state != state:
            return current
        current = parent
    return None
