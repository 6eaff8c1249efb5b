"""Sources read through pygit2 (see sources.py): a commit's tree, or the index as pygit2 loads it."""
from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import pygit2

from neo_git.health.sources import MODE_TREE, Change, Entry
from neo_git.identity import open_index  # noqa: F401 - one definition, re-exported for the scanners


class _RepositorySource:
    """What both sources share: the repository their blobs come from, and the base trees."""

    repo: pygit2.Repository
    bases: list[pygit2.Tree]

    @property
    def base_ids(self) -> list[bytes]:
        """The given base trees' raw ids."""
        return [base.id.raw for base in self.bases]

    def blob(self, oid: str) -> bytes | None:
        """The blob's bytes."""
        return _blob(self.repo, oid)


class TreeSource(_RepositorySource):
    """The files of one tree (a commit's, or a tree id)."""

    def __init__(self, repo: pygit2.Repository, rev: str, tree: pygit2.Tree, bases: list[pygit2.Tree]) -> None:
        self.repo, self.rev, self.tree, self.bases = repo, rev, tree, bases

    @property
    def tree_id(self) -> bytes | None:
        """The tree's raw id."""
        return self.tree.id.raw

    def changes_since(self, base: bytes, limit: int) -> list[Change] | None:
        """The base tree's diff to this tree (see `sources.Source`)."""
        try:
            diff = cast(pygit2.Tree, self.repo[pygit2.Oid(raw=base)]).diff_to_tree(self.tree)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return _changes(diff, limit)

    def entries(self) -> Iterator[Entry]:
        """Every non-tree entry, with its full path."""
        return tree_entries(self.tree)

    def lookup(self, path: str) -> tuple[str, int] | None:
        """(blob id, mode) of *path* in the tree."""
        try:
            entry = self.tree[path]
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return str(entry.id), entry.filemode


class IndexSource(_RepositorySource):
    """The files of an index (a pygit2.Index: `$GIT_INDEX_FILE` or the repository's)."""

    rev = "index"
    tree_id = None

    def __init__(self, repo: pygit2.Repository, index: pygit2.Index, bases: list[pygit2.Tree]) -> None:
        self.repo, self.index, self.bases = repo, index, bases

    def changes_since(self, base: bytes, limit: int) -> list[Change] | None:
        """The base tree's diff to the index (see `sources.Source`)."""
        try:
            # Tree.diff_to_index, not Index.diff_to_tree: the index a hook gets ($GIT_INDEX_FILE)
            # is a standalone pygit2.Index, and only the tree side brings the repository.
            diff = cast(pygit2.Tree, self.repo[pygit2.Oid(raw=base)]).diff_to_index(self.index)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return _changes(diff, limit)

    def entries(self) -> Iterator[Entry]:
        """Stage-0 entries; for a conflicted path, "ours" (what HEAD had)."""
        return index_entries(self.index)

    def lookup(self, path: str) -> tuple[str, int] | None:
        """(blob id, mode) of *path*'s stage-0 entry."""
        try:
            entry = self.index[path]
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return str(entry.id), int(entry.mode)


def _changes(diff: pygit2.Diff, limit: int) -> list[Change] | None:
    if len(diff) > limit:
        return None
    changes: list[Change] = []
    for delta in diff.deltas:
        status = delta.status_char()
        if status not in "ADMT":   # conflicts and the unexpected: measure everything
            return None
        old = delta.old_file.path if status != "A" else None
        new = None
        if status != "D":
            new = Entry(delta.new_file.path, str(delta.new_file.id), delta.new_file.mode)
        changes.append((old, new))
    return changes


def _blob(repo: pygit2.Repository, oid: str) -> bytes | None:
    """One read per blob: asking for the size first (`odb.read_header`) cost as much again for a
    loose object (libgit2 opens and inflates it twice)."""
    try:
        kind, data = repo.odb.read(oid)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return data if kind == pygit2.enums.ObjectType.BLOB else None


def tree_entries(tree: pygit2.Tree) -> Iterator[Entry]:
    """Every non-tree entry under *tree*, with its full path (depth first)."""
    stack: list[tuple[str, pygit2.Tree]] = [("", tree)]
    while stack:
        prefix, current = stack.pop()
        for obj in current:
            mode = obj.filemode
            if mode == MODE_TREE:
                stack.append((f"{prefix}{obj.name}/", cast(pygit2.Tree, obj)))
            else:
                yield Entry(f"{prefix}{obj.name}", str(obj.id), mode)


def index_entries(index: pygit2.Index) -> Iterator[Entry]:
    """Stage-0 entries of an index; for a conflicted path, "ours" (what HEAD had)."""
    conflicted: dict[str, Entry | None] = {}
    if index.conflicts is not None:
        for ancestor, ours, theirs in index.conflicts:
            path = (ours or theirs or ancestor).path
            conflicted[path] = Entry(ours.path, str(ours.id), int(ours.mode)) if ours is not None else None
    for entry in index:
        path = entry.path
        if path in conflicted:
            replacement = conflicted.pop(path)
            if replacement is not None:
                yield replacement
            continue
        if int(entry.mode) == MODE_TREE:  # sparse-index directory entry: not expanded here
            continue
        yield Entry(path, str(entry.id), int(entry.mode))


def head_tree(repo: pygit2.Repository) -> list[pygit2.Tree]:
    """[HEAD's tree], or [] when HEAD is unborn or unreadable."""
    try:
        return [] if repo.head_is_unborn else [repo.head.peel(pygit2.Commit).tree]
    except (KeyError, ValueError, pygit2.GitError):
        return []
