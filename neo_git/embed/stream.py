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
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.embed.rows import cosines
from neo_git.embed.vecfile import (
    HEADER_BYTES,
    KEY_BYTES,
    KEYS_FILE,
    KEYS_HEADER,
    KEYS_MAGIC,
    SCAN_RECORDS,
    header_dim,
    record_vectors,
    trusted_words,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class RecordReader:
    """Reads records of one vectors file back by row, while the file is the one streamed."""

    def __init__(self, path: Path, record: int, dim: int) -> None:
        self.path = path
        self.record = record
        self.dim = dim
        self.inode: int | None = None

    def read(self, rows: Sequence[int], keys: Sequence[bytes]) -> np.ndarray | None:
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

    def cosines(self, rows: np.ndarray, keys: np.ndarray, query: np.ndarray) -> np.ndarray | None:
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
        try:
            with open(self.path, "rb") as fh:
                if os.fstat(fh.fileno()).st_ino != self.inode:
                    return None
                for at, end, picked in _read_runs(fh, self.record, ordered):
                    if picked is None or not (picked[:, :KEY_BYTES // 4] == want[order[at:end]]).all() \
                            or not trusted_words(picked).all():
                        return None
                    out[order[at:end]] = cosines(record_vectors(picked), query)
        except OSError:
            return None
        return out


def stream_cosines(path: Path, record: int, dim: int, keys: np.ndarray, query: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, RecordReader]:
    """(cosine of *query* with each of *keys*' cached vector, float32, NaN where none is sound;
    the record row it came from, -1 where none; a reader for those rows). *keys*: sha256 text
    keys as a (n,) array of 32-byte values."""
    import numpy as np

    found: np.ndarray | None = None

    def start(groups: int) -> None:
        nonlocal found
        found = np.full(groups, np.nan, dtype=np.float32)

    def take(slots: np.ndarray, picked: np.ndarray) -> None:
        assert found is not None   # start() comes first
        found[slots] = cosines(record_vectors(picked), query)

    inverse, rows, reader = _scan(path, record, dim, keys, start, take)
    assert found is not None   # start() is always called
    return found[inverse], rows, reader


def stream_vectors(path: Path, record: int, dim: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """((n, dim) float32: each of *keys*' newest sound cached vector, zeros where none; which have
    one). What a process that never indexed the file needs for many keys at once (the first add
    of a process compares with every fact of its kind): no index of every key in the file."""
    import numpy as np

    found: np.ndarray | None = None

    def start(groups: int) -> None:
        nonlocal found
        found = np.zeros((groups, dim), dtype=np.float32)

    def take(slots: np.ndarray, picked: np.ndarray) -> None:
        assert found is not None   # start() comes first
        found[slots] = record_vectors(picked)

    inverse, rows, _reader = _scan(path, record, dim, keys, start, take)
    assert found is not None   # start() is always called
    return found[inverse], rows >= 0


def _scan(path: Path, record: int, dim: int, keys: np.ndarray, start, take
          ) -> tuple[np.ndarray, np.ndarray, RecordReader]:
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
            at = 0
            if len(unique) * SPARSE_SHARE <= total:   # a few keys of a large file: found by the key file
                at = _from_key_file(fh, path, stat.st_ino, total, record, unique, first, take, rows)
            block = np.empty((max(1, min(SCAN_RECORDS, total - at)), record // 4), dtype="<u4")
            while at < total:
                part = block[:min(len(block), total - at)]
                fh.seek(HEADER_BYTES + at * record)
                count = fh.readinto(memoryview(part).cast("B")) // record  # type: ignore[arg-type]  # an ndarray has the buffer protocol
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


SPARSE_SHARE = 4    # read records by the key file when the keys asked for are at most 1/4 of them
MAX_GAP = 16        # records between two wanted ones that one read takes along rather than seek


def _read_runs(fh, record: int, rows: np.ndarray):
    """(start, end, records) for the sorted record *rows*: records holds the rows rows[start:end]
    as (end - start, record words), up to `SCAN_RECORDS` of them at a time, gathered from runs of
    nearby rows (one read takes along up to `MAX_GAP` records between two wanted ones); None when
    the file ended first. Two buffers are reused: nothing grows with the rows asked for."""
    import bisect

    import numpy as np

    if not len(rows):
        return
    wanted = rows.tolist()
    width = record // 4
    out = np.empty((min(SCAN_RECORDS, len(wanted)), width), dtype="<u4")
    block = np.empty((min(SCAN_RECORDS, wanted[-1] - wanted[0] + 1), width), dtype="<u4")
    bounds = [0, *(np.flatnonzero(np.diff(rows) > MAX_GAP + 1) + 1).tolist(), len(wanted)]
    done = filled = 0
    for run_start, run_end in zip(bounds, bounds[1:]):
        i = run_start
        while i < run_end:
            first = wanted[i]
            j = min(run_end, i + len(out) - filled, bisect.bisect_left(wanted, first + len(block), i, run_end))
            span = wanted[j - 1] - first + 1
            fh.seek(HEADER_BYTES + first * record)
            if span == j - i:   # adjacent rows: straight into place
                ok = fh.readinto(memoryview(out[filled:filled + span]).cast("B")) == span * record  # type: ignore[arg-type]  # an ndarray has the buffer protocol
            else:
                ok = fh.readinto(memoryview(block[:span]).cast("B")) == span * record  # type: ignore[arg-type]  # an ndarray has the buffer protocol
                if ok:
                    out[filled:filled + j - i] = block[rows[i:j] - first]
            if not ok:
                if filled:
                    yield done, done + filled, out[:filled]
                yield done + filled, len(wanted), None
                return
            filled += j - i
            i = j
            if filled == len(out):
                yield done, done + filled, out
                done, filled = done + filled, 0
    if filled:
        yield done, done + filled, out[:filled]


def _from_key_file(fh, path: Path, inode: int, total: int, record: int, unique: np.ndarray, first: np.ndarray,
                   take, rows: np.ndarray) -> int:
    """`_scan` for the records the key file beside *path* indexes (when it indexes this file):
    the newest record of each key asked for is read alone (with runs of neighbours), checked and
    handed to *take*. Returns how many records the key file covers (0: none; scan them all).
    The key file is a hint: a record whose own key differs is not taken (its text is embedded
    again), never misread."""
    import numpy as np

    try:
        with open(path.with_name(KEYS_FILE), "rb") as keys_file:
            header = keys_file.read(KEYS_HEADER)
            if header[:8] != KEYS_MAGIC or int.from_bytes(header[8:16], "little") != inode:
                return 0
            data = keys_file.read(total * KEY_BYTES)
    except OSError:
        return 0
    count = len(data) // KEY_BYTES
    if not count:
        return 0
    hits, slots = _matches(np.frombuffer(data, dtype="<u4", count=count * KEY_BYTES // 4).reshape(count, -1),
                           unique, first)
    if len(hits):
        last = len(slots) - 1 - np.unique(slots[::-1], return_index=True)[1]   # each key's newest record
        order = np.argsort(hits[last])
        hits, slots = hits[last][order], slots[last][order]
        for at, end, picked in _read_runs(fh, record, hits):
            if picked is None:
                break   # cut meanwhile: what was not read counts as not cached
            sound = trusted_words(picked) & (picked[:, :KEY_BYTES // 4].view("<u8") == unique[slots[at:end]]).all(axis=1)
            if not sound.all():
                at_sound = np.flatnonzero(sound)
                take(slots[at:end][at_sound], picked[at_sound])
                rows[slots[at:end][at_sound]] = hits[at:end][at_sound]
            else:
                take(slots[at:end], picked)
                rows[slots[at:end]] = hits[at:end]
    return count


def _matches(records: np.ndarray, unique: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions of *records* whose key is one of *unique*'s rows, which row), in record order."""
    import numpy as np

    heads = records[:, :KEY_BYTES // 4].view("<u8")        # (count, 4): each record's key
    lead = np.ascontiguousarray(heads[:, 0])                # searched faster than a strided column
    slot = np.minimum(np.searchsorted(first, lead), len(first) - 1)
    prefix = first[slot] == lead
    whole = prefix.copy()
    whole[prefix] = (unique[slot[prefix]] == heads[prefix]).all(axis=1)   # the whole key, where the prefix is
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
