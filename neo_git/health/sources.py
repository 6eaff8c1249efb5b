"""Where a snapshot's files come from: a commit's tree or the index, as (path, blob, mode) entries."""
from __future__ import annotations

from typing import Callable, Iterator, NamedTuple

import pygit2

from neo_git.identity import open_index  # noqa: F401 - one definition, re-exported for the scanners

MODE_TREE = 0o040000
MODE_GITLINK = 0o160000
MODE_SYMLINK = 0o120000

Reader = Callable[[str], "bytes | None"]


class Entry(NamedTuple):
    """One file of a tree or index: repository path, blob id, git file mode."""

    path: str
    id: pygit2.Oid
    mode: int


class Source(NamedTuple):
    """What a scan measures, and the trees whose stored states it may start from."""

    rev: str
    tree: pygit2.Tree | None       # a commit's tree, or None for the index
    index: pygit2.Index | None
    bases: list[pygit2.Tree]       # trees whose stored state is a good starting point


def tree_entries(tree: pygit2.Tree) -> Iterator[Entry]:
    """Every non-tree entry under *tree*, with its full path (depth first)."""
    stack: list[tuple[str, pygit2.Tree]] = [("", tree)]
    while stack:
        prefix, current = stack.pop()
        for obj in current:
            mode = obj.filemode
            if mode == MODE_TREE:
                stack.append((f"{prefix}{obj.name}/", obj))
            else:
                yield Entry(prefix + obj.name, obj.id, mode)


def index_entries(index: pygit2.Index) -> Iterator[Entry]:
    """Stage-0 entries of an index; for a conflicted path, "ours" (what HEAD had)."""
    conflicted: dict[str, Entry | None] = {}
    if index.conflicts is not None:
        for ancestor, ours, theirs in index.conflicts:
            path = (ours or theirs or ancestor).path
            conflicted[path] = Entry(ours.path, ours.id, int(ours.mode)) if ours is not None else None
    for entry in index:
        path = entry.path
        if path in conflicted:
            replacement = conflicted.pop(path)
            if replacement is not None:
                yield replacement
            continue
        if int(entry.mode) == MODE_TREE:  # sparse-index directory entry: not expanded here
            continue
        yield Entry(path, entry.id, int(entry.mode))


def head_tree(repo: pygit2.Repository) -> list[pygit2.Tree]:
    """[HEAD's tree], or [] when HEAD is unborn or unreadable."""
    try:
        return [] if repo.head_is_unborn else [repo.head.peel(pygit2.Commit).tree]
    except (KeyError, ValueError, pygit2.GitError):
        return []


def lookup(source: Source, path: str) -> tuple[pygit2.Oid, int] | None:
    """(blob id, mode) of *path* in the source's tree or index, None when absent."""
    try:
        if source.tree is not None:
            entry = source.tree[path]
            return entry.id, entry.filemode
        entry = source.index[path]
        return entry.id, int(entry.mode)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def source_reader(repo: pygit2.Repository, source: Source) -> Reader:
    """A function reading one regular file of the source (None: absent, a link, a folder)."""
    def read(path: str) -> bytes | None:
        found = lookup(source, path)
        if found is None or found[1] in (MODE_GITLINK, MODE_SYMLINK, MODE_TREE):
            return None
        try:
            return repo[found[0]].data
        except (KeyError, ValueError, pygit2.GitError):
            return None
    return read
