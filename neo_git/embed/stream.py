"""Cosines of a query with many cached texts, computed while the vector file is read.

A cold recall needs one number per fact (its cosine to the question), not the fact's vector:
holding every vector of a 50,000-fact store costs 100 MB at 512 floats. `stream_cosines` reads
the vector file in blocks of `SCAN_RECORDS` records through one buffer, finds the records of
the keys asked for (in numpy, on the keys' first 8 bytes, then all 32), checks each one found
(checksum and norm, as the cache does: a failing record is never used) and keeps only its
cosine and where it is. A text's newest sound record wins, as in `VectorCache`. The few vectors
recall needs afterwards (its family ordering looks at the best few facts) are read back by
record (`RecordReader`), checked again.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from neo_git.embed.cache import SCAN_RECORDS
from neo_git.embed.vecfile import HEADER_BYTES, KEY_BYTES, header_dim, record_vectors, trusted_words
from neo_git.embed.rows import cosines

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class RecordReader:
    """Reads records of one vectors file back by row, while the file is the one streamed."""

    def __init__(self, path: Path, record: int, dim: int) -> None:
        self.path = path
        self.record = record
        self.dim = dim
        self.inode: int | None = None

    def read(self, rows: Sequence[int], keys: Sequence[bytes]) -> "np.ndarray | None":
        """(len(rows), dim) float32: the vectors of the records at *rows*, which must hold *keys*
        and pass their checks; None when the file was replaced or a record does not."""
        import numpy as np

        if self.inode is None:
            return None
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        try:
            with open(self.path, "rb") as fh:
                if os.fstat(fh.fileno()).st_ino != self.inode:
                    return None
                for j, (row, key) in enumerate(zip(rows, keys)):
                    data = os.pread(fh.fileno(), self.record, HEADER_BYTES + int(row) * self.record)
                    if len(data) != self.record or data[:KEY_BYTES] != key:
                        return None
                    words = np.frombuffer(data, dtype="<u4").reshape(1, -1)
                    if not trusted_words(words)[0]:
                        return None
                    out[j] = record_vectors(words)[0]
        except OSError:
            return None
        return out

    def cosines(self, rows: "np.ndarray", keys: "np.ndarray", query: "np.ndarray") -> "np.ndarray | None":
        """The cosine of *query* with the vector of the record at each of *rows* (float32), which
        must hold *keys* ((n,) 32-byte values) and pass their checks; None when the file was
        replaced or a record does not. The records are read in order through one buffer of
        `SCAN_RECORDS`, never all at once (recall asks for every fact's cosine with its best one)."""
        import numpy as np

        if self.inode is None:
            return None
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty(len(rows), dtype=np.float32)
        order = np.argsort(rows, kind="stable")
        ordered = rows[order]
        want = np.frombuffer(np.ascontiguousarray(keys).tobytes(), dtype="<u4").reshape(len(rows), KEY_BYTES // 4)
        block = np.empty((min(SCAN_RECORDS, max(1, len(rows))), self.record // 4), dtype="<u4")
        try:
            with open(self.path, "rb") as fh:
                if os.fstat(fh.fileno()).st_ino != self.inode:
                    return None
                at = 0
                while at < len(ordered):
                    first = int(ordered[at])
                    end = int(np.searchsorted(ordered, first + len(block), side="left"))  # rows this read covers
                    span = int(ordered[end - 1]) - first + 1
                    part = block[:span]
                    fh.seek(HEADER_BYTES + first * self.record)
                    if fh.readinto(memoryview(part).cast("B")) != span * self.record:
                        return None
                    picked = part[ordered[at:end] - first]
                    if not (picked[:, :KEY_BYTES // 4] == want[order[at:end]]).all() or not trusted_words(picked).all():
                        return None
                    out[order[at:end]] = cosines(record_vectors(picked), query)
                    at = end
        except OSError:
            return None
        return out


def stream_cosines(path: Path, record: int, dim: int, keys: "np.ndarray", query: "np.ndarray"
                   ) -> "tuple[np.ndarray, np.ndarray, RecordReader]":
    """(cosine of *query* with each of *keys*' cached vector, float32, NaN where none is sound;
    the record row it came from, -1 where none; a reader for those rows). *keys*: sha256 text
    keys as a (n,) array of 32-byte values."""
    import numpy as np

    found: "np.ndarray | None" = None

    def start(groups: int) -> None:
        nonlocal found
        found = np.full(groups, np.nan, dtype=np.float32)

    def take(slots: "np.ndarray", picked: "np.ndarray") -> None:
        found[slots] = cosines(record_vectors(picked), query)

    inverse, rows, reader = _scan(path, record, dim, keys, start, take)
    return found[inverse], rows, reader


def stream_vectors(path: Path, record: int, dim: int, keys: "np.ndarray") -> "tuple[np.ndarray, np.ndarray]":
    """((n, dim) float32: each of *keys*' newest sound cached vector, zeros where none; which have
    one). What a process that never indexed the file needs for many keys at once (the first add
    of a process compares with every fact of its kind): no index of every key in the file."""
    import numpy as np

    found: "np.ndarray | None" = None

    def start(groups: int) -> None:
        nonlocal found
        found = np.zeros((groups, dim), dtype=np.float32)

    def take(slots: "np.ndarray", picked: "np.ndarray") -> None:
        found[slots] = record_vectors(picked)

    inverse, rows, _reader = _scan(path, record, dim, keys, start, take)
    return found[inverse], rows >= 0


def _scan(path: Path, record: int, dim: int, keys: "np.ndarray", start, take
          ) -> "tuple[np.ndarray, np.ndarray, RecordReader]":
    """Read the vectors file in blocks; for each block, `take(slots, records)` with the sound
    records of the keys asked for (newest last within a block, so later ones win) and each one's
    slot among the distinct keys (`start(number of distinct keys)` comes first). Returns (the
    slot of each key, the record row of each key's newest sound record or -1, a reader)."""
    import numpy as np

    n = len(keys)
    reader = RecordReader(path, record, dim)
    words = np.frombuffer(np.ascontiguousarray(keys).tobytes(), dtype="<u8").reshape(n, 4)
    # The keys asked for, sorted by their first 8 bytes; equal keys (two facts, one text) form a
    # group, which gets one answer. (np.unique over rows sorts structured values: 10x slower.)
    order = np.argsort(words[:, 0], kind="stable")
    ordered = words[order]
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    group = np.cumsum(new_group) - 1
    unique = ordered[new_group]
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group
    first = np.ascontiguousarray(unique[:, 0])
    start(len(unique))
    rows = np.full(len(unique), -1, dtype=np.int64)
    if not n:
        return inverse, rows[inverse], reader
    try:
        with open(path, "rb") as fh:
            stat = os.fstat(fh.fileno())
            if header_dim(fh.read(HEADER_BYTES)) != dim:
                return inverse, rows[inverse], reader
            reader.inode = stat.st_ino
            total = (stat.st_size - HEADER_BYTES) // record   # whole records below the size seen now
            block = np.empty((max(1, min(SCAN_RECORDS, total)), record // 4), dtype="<u4")
            at = 0
            while at < total:
                part = block[:min(len(block), total - at)]
                fh.seek(HEADER_BYTES + at * record)
                count = fh.readinto(memoryview(part).cast("B")) // record
                if not count:
                    break
                hits, slots = _matches(part[:count], unique, first)
                if len(hits):
                    # Every record of the block asked for (the usual case): read it in place.
                    picked = part[:count] if len(hits) == count else part[hits]
                    sound = trusted_words(picked)
                    if not sound.all():
                        hits, slots, picked = hits[sound], slots[sound], picked[sound]
                    if len(hits):
                        last = len(slots) - 1 - np.unique(slots[::-1], return_index=True)[1]  # the newest of a key
                        take(slots[last], picked[last])
                        rows[slots[last]] = at + hits[last]
                at += count
    except OSError:
        pass  # unreadable: every text counts as not cached (embedded again)
    return inverse, rows[inverse], reader


def _matches(records: "np.ndarray", unique: "np.ndarray", first: "np.ndarray") -> "tuple[np.ndarray, np.ndarray]":
    """(positions of *records* whose key is one of *unique*'s rows, which row), in record order."""
    import numpy as np

    heads = records[:, :KEY_BYTES // 4].view("<u8")        # (count, 4): each record's key
    slot = np.minimum(np.searchsorted(first, heads[:, 0]), len(first) - 1)
    prefix = first[slot] == heads[:, 0]
    whole = prefix & (unique[slot] == heads).all(axis=1)
    hits, slots = np.flatnonzero(whole), slot[whole]
    odd = np.flatnonzero(prefix & ~whole)
    if len(odd):  # two keys asked for share their first 8 bytes: look at the others of that prefix
        extra = []
        for r in odd.tolist():
            s = int(slot[r]) + 1
            while s < len(first) and first[s] == heads[r, 0]:
                if (unique[s] == heads[r]).all():
                    extra.append((r, s))
                    break
                s += 1
        if extra:
            pairs = sorted([*zip(hits.tolist(), slots.tolist()), *extra])
            hits = np.array([r for r, _ in pairs], dtype=np.int64)
            slots = np.array([s for _, s in pairs], dtype=np.int64)
    return hits, slots
