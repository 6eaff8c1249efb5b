"""Where a snapshot's files come from: a commit's tree or the index, as (path, blob, mode) entries.

A scan (`scan.py`) reads its source only through the `Source` protocol, so the same scan runs on
what pygit2 opens (`pygit2_sources.py`: every command and the outcome worker) and on what git's
plumbing commands print (`plumbing.py`: the pre-commit hook, which never imports pygit2). Blob
ids are hex strings on both sides.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple, Protocol

MODE_TREE = 0o040000
MODE_GITLINK = 0o160000
MODE_SYMLINK = 0o120000

Reader = Callable[[str], "bytes | None"]
Change = tuple["str | None", "Entry | None"]   # (old path, new entry): None for an added / a deleted file


class Entry(NamedTuple):
    """One file of a tree or index: repository path, blob id (hex), git file mode."""

    path: str
    id: str
    mode: int


class Source(Protocol):
    """What a scan measures: the files of one tree or index, and the trees whose stored states
    it may start from."""

    rev: str   # commit id, tree id, or "index"

    @property
    def tree_id(self) -> bytes | None:
        """The raw id of the tree whose state this is (stored under it); None for an index."""

    @property
    def base_ids(self) -> list[bytes]:
        """Raw ids of trees whose stored state is a good starting point, best first."""

    def changes_since(self, base: bytes, limit: int) -> list[Change] | None:
        """What differs from the tree *base* to this source, without rename detection (a rename
        is a deletion and an addition); None when the diff cannot be taken, holds more than
        *limit* changes, or holds anything but additions, deletions, modifications and type
        changes (a conflict): the caller then measures everything."""

    def entries(self) -> Iterable[Entry]:
        """Every file (no folders) of the source; for a conflicted path of an index, "ours"."""

    def lookup(self, path: str) -> tuple[str, int] | None:
        """(blob id, mode) of *path*, None when absent."""

    def blob(self, oid: str) -> bytes | None:
        """The bytes of blob *oid*; None when it is missing or not a blob."""


def file_reader(source: Source) -> Reader:
    """A function reading one regular file of *source* (None: absent, a link, a folder, a submodule)."""
    def read(path: str) -> bytes | None:
        found = source.lookup(path)
        if found is None or found[1] in (MODE_GITLINK, MODE_SYMLINK, MODE_TREE):
            return None
        return source.blob(found[0])
    return read
