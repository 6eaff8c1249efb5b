"""Local cache of embedding vectors, keyed by (embedder id, sha256 of the text).

Embeddings are derived data (docs/architecture.md §2): they never go into the shared ref, and
losing this folder only costs re-embedding.

One file per embedder, ``neo_home()/cache/vectors/<sanitised id>/vectors.bin``, in the
record format of `embed/vecfile.py`.

Keys and vectors live in the same record so one file operation covers both:
a record is either wholly inside the file or it is a torn tail, and a rewrite
(`prune`, or the size cap) swaps the whole file with one ``os.replace``.

A record is believed only if it passes `vecfile.trusted_words` (its checksum, a finite unit
vector): such a record is skipped and its text embedded again.

Readers take no lock: they read whole records below the size they saw (a
torn tail is ignored) through a window they reuse, index every key (its newest
record wins), and keep (and check, then) only the records they ask for. The
file is shared by every repository under one NEO_HOME: a process pays for
reading the other repositories' keys, not for keeping and checking their
vectors. If the file's inode changes (rewritten by another process) they start
over. Writers hold an exclusive ``fcntl.flock`` on a sibling ``lock`` file, cut
a torn tail back to the last whole record, append, and fsync.

Beside the file, ``vectors.keys`` holds the records' keys in file order (32 bytes each,
after a header naming the inode of the ``vectors.bin`` they index), written by the
writers after the records. A reader that looks for a few keys (the first add of a process
wants its group's vectors) reads the keys there, then only the records it wants, instead
of every record (~2 KB each): 1.6 MB instead of 100 MB at 50,000 records. The keys are a
hint: a record is still taken only under its own key and after its check, so a stale or
torn key file costs a re-embedding, never a wrong vector; records past its end are read
as before.
"""
from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from neo_git.embed.batches import embed_in_batches
from neo_git.embed.vecfile import (
    HEADER_BYTES,
    KEY_BYTES,
    KEYS_FILE,
    KEYS_HEADER,
    KEYS_MAGIC,
    SCAN_RECORDS,
    SUM_BYTES,
    checksums,
    file_header,
    header_dim,
    record_size,
    record_vectors,
    text_key,
    trusted_words,
)
from neo_git.fileio import LockTimeout, locked
from neo_git.identity import vector_cache_dir

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from neo_git.embed.protocol import Embedder

DATA_FILE = "vectors.bin"
LOCK_FILE = "lock"
APPEND_LOCK_WAIT = 0.5    # seconds a recall waits to persist new vectors before keeping them in memory
# A cache that only grows is cut back to its newest half when it passes this many
# rows. (Queries are no longer stored; a cap at a store's own size made every add
# to a 50,000-fact store throw away half of its vectors.)
MAX_ROWS = 200_000   # 400 MB at 512 floats; well above a 50,000-fact store plus its growth
STREAM_AT = 1024     # a process that never indexed the file streams it for this many keys or more


def embedder_dirname(embedder_id: str) -> str:
    """A file-name-safe folder for an embedder id, unique even when sanitising merges ids."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", embedder_id).strip("._")[:80] or "embedder"
    suffix = hashlib.blake2b(embedder_id.encode("utf-8"), digest_size=4).hexdigest()
    return f"{safe}-{suffix}"


class _Shelf:
    """One embedder's file as this process knows it: where each key's newest record is (from
    the keys alone), and the vectors it has fetched and checked so far.

    The file is shared by every repository under this NEO_HOME (up to MAX_ROWS records, ~100
    MB at 512 floats): a process reads the keys of all of them, through a window it reuses,
    but keeps and checks only the records it asks for."""

    def __init__(self, folder: Path, embedder_id: str, dim: int) -> None:
        self.folder = folder
        self.path = folder / DATA_FILE
        self.embedder_id = embedder_id
        self.dim = dim
        self.record = record_size(dim)
        self.reset()

    def reset(self) -> None:
        self.index: dict[bytes, int] = {}      # key -> row of its newest record (not yet checked)
        # Rows indexed from the key file: (its keys sorted, their rows), searched per wanted key
        # (`_row_of`) instead of a dict of every key; `index` holds the rows read after them.
        self.key_rows: tuple[np.ndarray, np.ndarray, bytes] | None = None
        self.rows = 0                           # whole records indexed, in file order
        self.inode: int | None = None
        # Vectors fetched and checked, in blocks (each a view of a private copy of its records).
        self.checked: dict[bytes, tuple[int, int]] = {}  # key -> (block, row in block)
        self._blocks: list[np.ndarray] = []
        self._bad: set[int] = set()             # rows that failed their check: never fetched again

    def _dtype(self):
        import numpy as np

        return np.dtype([("key", f"V{KEY_BYTES}"), ("vec", "<f4", (self.dim,)), ("sum", f"V{SUM_BYTES}")])

    def fetch(self, keys: Iterable[bytes]) -> None:
        """Make every key of *keys* that has a sound record `checked`: records appended since
        the last look are indexed (keeping the wanted ones on the way), older ones are read
        one run of adjacent rows at a time."""
        keys = list(keys)
        wanted = {key for key in keys if key not in self.checked}
        if not wanted:
            return
        inode = self.inode
        self.refresh(wanted)
        bad, checked = self._bad, self.checked
        if self.inode != inode:  # started over (a file not indexed before, or rewritten): forgot what it kept
            wanted = {key for key in keys if key not in checked}
        found = self._rows_of([key for key in wanted if key not in checked])
        rows = sorted({row for row in found if row not in bad})
        if rows:
            self._read_rows(rows)

    def refresh(self, wanted: Collection[bytes] = ()) -> None:
        """Index the records appended since we last looked (by us or by other processes),
        keeping the *wanted* ones met on the way."""
        try:
            with open(self.path, "rb") as fh:
                stat = os.fstat(fh.fileno())
                if stat.st_ino != self.inode:
                    self.reset()  # new, or rewritten by another process
                    if header_dim(fh.read(HEADER_BYTES)) != self.dim:
                        return  # not ours (yet): the next append rewrites it
                    self.inode = stat.st_ino
                total = (stat.st_size - HEADER_BYTES) // self.record
                if total > self.rows and wanted:
                    self._index_from_keys(stat.st_ino, total)
                if total > self.rows:
                    self._scan(fh, total, wanted)
        except OSError:  # missing, or a folder / unreadable file in the way: nothing cached
            if self.rows:
                self.reset()

    def _rows_of(self, keys: list[bytes]) -> list[int]:
        """The row of the newest record of each key that has one (records read one by one win
        over the key file's, which are older)."""
        rows, rest = [], []
        for key in keys:
            row = self.index.get(key)
            if row is not None:
                rows.append(row)
            else:
                rest.append(key)
        if rest and self.key_rows is not None:
            import numpy as np

            prefixes, order, data = self.key_rows
            want = np.frombuffer(b"".join(rest), dtype=">u8", count=len(rest) * 4)[::4]
            lows = np.searchsorted(prefixes, want, side="left").tolist()
            highs = np.searchsorted(prefixes, want, side="right").tolist()
            for key, low, high in zip(rest, lows, highs):
                # Equal first 8 bytes name candidates; the whole key decides; the newest row wins.
                found = [row for row in order[low:high].tolist()
                         if data[row * KEY_BYTES:(row + 1) * KEY_BYTES] == key]
                if found:
                    rows.append(max(found))
        return rows

    def _index_from_keys(self, inode: int, total: int) -> None:
        """Index rows from `vectors.keys` (when it indexes this file) up to *total*; `fetch`
        then reads just the wanted records. Rows the key file lacks are left to `_scan`."""
        try:
            with open(self.folder / KEYS_FILE, "rb") as fh:
                header = fh.read(KEYS_HEADER)
                if header[:8] != KEYS_MAGIC or int.from_bytes(header[8:16], "little") != inode:
                    return
                fh.seek(KEYS_HEADER + self.rows * KEY_BYTES)
                data = fh.read((total - self.rows) * KEY_BYTES)
        except OSError:
            return
        import numpy as np

        count = len(data) // KEY_BYTES
        if self.rows or not count:
            return   # only from the start of a file (a process reads the key file once)
        # Sorted by each key's first 8 bytes (sha256: evenly spread), a number numpy sorts fast.
        prefixes = np.frombuffer(data, dtype=">u8", count=count * 4)[::4]
        order = np.argsort(prefixes, kind="stable")
        self.key_rows = (prefixes[order], order, data[:count * KEY_BYTES])
        self.rows = count

    def _write_keys(self, first: int, keys: bytes) -> None:
        """Record *keys* (joined) as those of rows *first*... of `vectors.bin` (caller holds the
        lock). The key file is rebuilt from the records when it does not end at row *first*."""
        path = self.folder / KEYS_FILE
        try:
            inode = os.stat(self.path).st_ino
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                header = os.pread(fd, KEYS_HEADER, 0)
                size = os.fstat(fd).st_size
                if header[:8] != KEYS_MAGIC or int.from_bytes(header[8:16], "little") != inode \
                        or size != KEYS_HEADER + first * KEY_BYTES:
                    keys = self._keys_of_records(first) + keys
                    os.ftruncate(fd, 0)
                    _write_all(fd, 0, KEYS_MAGIC + inode.to_bytes(8, "little"))
                    first = 0
                os.ftruncate(fd, KEYS_HEADER + first * KEY_BYTES)
                _write_all(fd, KEYS_HEADER + first * KEY_BYTES, keys)
            finally:
                os.close(fd)
        except OSError:
            pass   # only a hint: readers then read the records

    def _keys_of_records(self, rows: int) -> bytes:
        """The keys of the first *rows* records of `vectors.bin`, read from the records."""
        import numpy as np

        out = []
        with open(self.path, "rb") as fh:
            for start in range(0, rows, SCAN_RECORDS):
                fh.seek(HEADER_BYTES + start * self.record)
                data = fh.read(min(SCAN_RECORDS, rows - start) * self.record)
                count = len(data) // self.record
                words = np.frombuffer(data, dtype="<u4", count=count * self.record // 4).reshape(count, -1)
                out.append(words[:, :KEY_BYTES // 4].tobytes())
        return b"".join(out)

    def _scan(self, fh, total: int, wanted: Collection[bytes]) -> None:
        """Read records up to *total* into a window at the end of one array; the wanted ones
        move to its front (they are usually all of a window: then nothing moves), the rest
        are overwritten by the next read."""
        import numpy as np

        width = self.record // 4
        window = min(SCAN_RECORDS, total - self.rows)
        records = np.empty((min(len(wanted), total - self.rows) + window, width), dtype="<u4")
        kept, kept_keys, kept_rows, index = 0, [], [], self.index
        while self.rows < total:
            if len(records) - kept < window:  # more wanted records than keys asked (duplicates)
                records = np.concatenate([records, np.empty((window, width), dtype="<u4")])
            part = records[kept:kept + min(window, total - self.rows)]
            fh.seek(HEADER_BYTES + self.rows * self.record)  # whole records only, even after a short read
            count = fh.readinto(memoryview(part).cast("B")) // self.record  # type: ignore[arg-type]  # an ndarray has the buffer protocol; short only if cut meanwhile
            if not count:
                break
            base, part = self.rows, part[:count]
            packed = part[:, :KEY_BYTES // 4].tobytes()
            keys = [packed[i:i + KEY_BYTES] for i in range(0, len(packed), KEY_BYTES)]
            index.update(zip(keys, range(base, base + count)))  # a key's newest record wins
            picked = [i for i, key in enumerate(keys) if key in wanted] if wanted else []
            if len(picked) < count:
                part[:len(picked)] = part[picked]
            kept_keys += [keys[i] for i in picked]
            kept_rows += [base + i for i in picked]
            kept += len(picked)
            self.rows = base + count
        if kept:
            self._keep(records[:kept] if kept * 2 > len(records) else records[:kept].copy(), kept_keys, kept_rows)

    def _read_rows(self, rows: list[int]) -> None:
        """Fetch and check the records at *rows* (sorted), one read per run of adjacent rows."""
        import numpy as np

        size, start = self.record, 0
        try:
            with open(self.path, "rb") as fh:
                if os.fstat(fh.fileno()).st_ino != self.inode:
                    return  # rewritten meanwhile: the next refresh starts over
                while start < len(rows):
                    end = start + 1
                    while end < len(rows) and rows[end] == rows[end - 1] + 1:
                        end += 1
                    data = os.pread(fh.fileno(), (end - start) * size, HEADER_BYTES + rows[start] * size)
                    count = len(data) // size
                    words = np.frombuffer(data, dtype="<u4", count=count * size // 4).reshape(count, size // 4)
                    keys = [data[i * size:i * size + KEY_BYTES] for i in range(count)]
                    self._keep(words.copy(), keys, rows[start:start + count])
                    start = end
        except OSError:
            return  # unreadable now: those texts are embedded again

    def _keep(self, words: np.ndarray, keys: list[bytes], rows: list[int]) -> None:
        """Check records (a private copy, as (n, record words)) and keep the sound ones."""
        sound = trusted_words(words).tolist()
        block = len(self._blocks)
        self._blocks.append(record_vectors(words))
        checked = self.checked
        for i, (key, ok) in enumerate(zip(keys, sound)):
            if ok:
                checked[key] = (block, i)
        self._bad.update(row for row, ok in zip(rows, sound) if not ok)

    def remember(self, keys: list[bytes], vectors: np.ndarray) -> None:
        """Keep vectors this process embedded itself (just appended: no need to read them back)."""
        block = len(self._blocks)
        self._blocks.append(vectors)
        for i, key in enumerate(keys):
            self.checked[key] = (block, i)

    def gather(self, keys: Sequence[bytes]) -> tuple[np.ndarray, list[int]]:
        """(len(keys), dim) float32 holding the checked vector of each key (a new array the
        caller may change), and the positions of the keys that have none (zero rows)."""
        import numpy as np

        found = [self.checked.get(key) for key in keys]
        every = cast("list[tuple[int, int]]", found) if found and None not in found else None
        if every is not None and len({block for block, _ in every}) == 1:
            # The usual cold call: every key met in one pass. One gather, no zero-filled array.
            return self._blocks[every[0][0]][[row for _, row in every]], []
        out = np.zeros((len(keys), self.dim), dtype=np.float32)
        by_block: dict[int, tuple[list[int], list[int]]] = {}
        missing: list[int] = []
        for i, where in enumerate(found):
            if where is None:
                missing.append(i)
            else:
                positions, rows = by_block.setdefault(where[0], ([], []))
                positions.append(i)
                rows.append(where[1])
        for block, (positions, rows) in by_block.items():
            out[positions] = self._blocks[block][rows]
        return out, missing

    def block_rows(self, keys: Sequence[bytes]) -> tuple[np.ndarray, list[int]] | None:
        """(a kept block, the row of each key in it) when every key has a checked vector in one
        block, else None. The block is shared: read it, never write to it."""
        found = [self.checked.get(key) for key in keys]
        if not found or None in found:
            return None
        every = cast("list[tuple[int, int]]", found)   # no None in it
        if len({block for block, _ in every}) != 1:
            return None
        return self._blocks[every[0][0]], [row for _, row in every]

    def append(self, keys: list[bytes], vectors: np.ndarray, remember: bool = True) -> None:
        """Append records under the lock, repairing a torn tail (or a foreign file) first. With
        *remember* this process also keeps the vectors (else it reads them back when asked: a
        store's first embedding must not hold every vector it wrote)."""
        import numpy as np

        records = np.empty(len(keys), dtype=self._dtype())
        records["key"] = np.frombuffer(b"".join(keys), dtype=f"V{KEY_BYTES}")
        records["vec"] = vectors
        words = np.frombuffer(records.tobytes(), dtype="<u4").reshape(len(keys), -1).copy()
        words[:, -1] = checksums(words[:, :-1])
        payload = words.tobytes()
        self.folder.mkdir(parents=True, exist_ok=True)
        pending = getattr(self, "_unwritten", [])
        keys_all = [k for ks, _ in pending for k in ks] + list(keys)
        payload_all = b"".join(p for _, p in pending) + payload
        try:
            with locked(self.folder / LOCK_FILE, timeout=APPEND_LOCK_WAIT):
                self._append_locked(keys_all, payload_all, np.frombuffer(payload_all, dtype=self._dtype())["vec"],
                                    remember)
            self._unwritten = []
        except LockTimeout:
            # The cache is shared by every repository under this home: whoever holds its lock
            # must never make a recall wait long. The vectors are kept in memory for this process
            # and written with its next append.
            self._unwritten = [*pending, (list(keys), payload)]
            self.remember(keys, np.array(vectors, dtype=np.float32))

    def _append_locked(self, keys: list[bytes], payload: bytes, vectors: np.ndarray, remember: bool) -> None:
        """`append`'s work under the lock."""
        import numpy as np

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size < HEADER_BYTES or header_dim(os.pread(fd, HEADER_BYTES, 0)) != self.dim:
                # Empty, torn header, or another vector space under the same id
                # (e.g. a model that changed dimension): replace the file whole.
                self._rewrite(payload)
                return
            complete = (size - HEADER_BYTES) // self.record
            end = HEADER_BYTES + complete * self.record
            if size != end:
                os.ftruncate(fd, end)  # a writer died mid-append
            if complete + len(keys) > MAX_ROWS:
                kept = min(complete, MAX_ROWS // 2)
                tail = os.pread(fd, kept * self.record, end - kept * self.record)
                self._rewrite(tail + payload)
            else:
                _write_all(fd, end, payload)
                os.fsync(fd)
                self._write_keys(complete, b"".join(keys))
        finally:
            os.close(fd)
            if self.inode is not None:  # indexed before: index what was appended too
                self.refresh()
            if remember:
                self.remember(keys, np.array(vectors, dtype=np.float32))

    def _rewrite(self, body: bytes) -> None:
        """Replace the whole file (caller holds the lock); readers notice the new inode."""
        tmp = self.path.with_name(f"{DATA_FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            _write_all(fd, 0, file_header(self.embedder_id, self.dim) + body)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        count = len(body) // self.record
        self._write_keys(0, b"".join(body[i * self.record:i * self.record + KEY_BYTES] for i in range(count)))

    def prune(self, keep: set[bytes]) -> int:
        """Rewrite the file with only the records whose key is in *keep*; return rows dropped."""
        with locked(self.folder / LOCK_FILE):   # gc: a clear error after LOCK_WAIT_SECONDS
            self.refresh()
            if not self.rows:
                return 0
            try:
                with open(self.path, "rb") as fh:
                    fh.seek(HEADER_BYTES)
                    data = fh.read(self.rows * self.record)
            except FileNotFoundError:
                return 0
            size, seen, kept = self.record, set(), []
            for i in range(len(data) // size):
                key = data[i * size:i * size + KEY_BYTES]
                if key in keep and key not in seen:
                    seen.add(key)
                    kept.append(data[i * size:(i + 1) * size])
            dropped = len(data) // size - len(kept)
            if dropped:
                self._rewrite(b"".join(kept))
        self.refresh()
        return dropped


def _write_all(fd: int, offset: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


class VectorCache:
    """Vectors of texts per embedder, on disk under `neo_home()/cache/vectors/`."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else vector_cache_dir()
        self._shelves: dict[tuple[str, int], _Shelf] = {}

    def folder(self, embedder_id: str) -> Path:
        """The folder holding one embedder's vectors."""
        return self.root / embedder_dirname(embedder_id)

    def _shelf(self, embedder_id: str, dim: int) -> _Shelf:
        shelf = self._shelves.get((embedder_id, dim))
        if shelf is None:
            shelf = self._shelves[(embedder_id, dim)] = _Shelf(self.folder(embedder_id), embedder_id, dim)
        return shelf

    def vectors(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        """Vectors of *texts* (n, dim): cached rows where present, the rest embedded in one batch and stored."""
        if isinstance(texts, str):
            raise TypeError("vectors() takes a sequence of texts, not one string")
        return self.vectors_by_keys(embedder, [text_key(t) for t in texts], texts.__getitem__)

    def vectors_by_keys(self, embedder: Embedder, keys: Sequence[bytes], text_of: Callable[[int], str]
                        ) -> np.ndarray:
        """`vectors` for texts given by their keys (`text_key`); *text_of(i)* gives the i-th text,
        asked only for those that have to be embedded."""
        shelf = self._shelf(embedder.id, embedder.dim)
        if shelf.inode is None and len(keys) >= STREAM_AT:
            # Never indexed in this process, and many wanted: one pass that keeps only those
            # (`embed/stream.py`), rather than an index of every key in the file.
            import numpy as np

            from neo_git.embed.stream import stream_vectors

            out, have = stream_vectors(shelf.path, shelf.record, shelf.dim,
                                       np.frombuffer(b"".join(keys), dtype=f"V{KEY_BYTES}"))
            missing = np.flatnonzero(~have).tolist()
        else:
            shelf.fetch(keys)  # what other processes appended meanwhile included
            out, missing = shelf.gather(keys)
        if missing:
            unique: dict[bytes, int] = {}
            for i in missing:
                unique.setdefault(keys[i], i)
            firsts = list(unique.values())

            def take(start: int, vectors: np.ndarray) -> None:
                out[firsts[start:start + len(vectors)]] = vectors

            # Batch by batch (`embed/batches.py`): the texts of one batch in memory at a time.
            embed_in_batches(self, embedder, list(unique), lambda j: text_of(firsts[j]), take)
            for i in missing:
                out[i] = out[unique[keys[i]]]
        return out

    def store(self, embedder: Embedder, keys: list[bytes], embedded: np.ndarray, remember: bool = True
              ) -> np.ndarray:
        """Append vectors *embedder* made for the texts whose keys are *keys* (no two alike); with
        *remember*, this process keeps them too (see `_Shelf.append`)."""
        if embedded.shape != (len(keys), embedder.dim):
            raise ValueError(
                f"embedder {embedder.id} returned shape {embedded.shape}, expected {(len(keys), embedder.dim)}")
        try:
            self._shelf(embedder.id, embedder.dim).append(keys, embedded, remember)
        except OSError:
            pass  # a read-only or full disk costs speed, not correctness
        return embedded

    def vector_rows_by_keys(self, embedder: Embedder, keys: Sequence[bytes], text_of: Callable[[int], str]
                            ) -> tuple[np.ndarray, list[int] | None]:
        """Like `vectors_by_keys`, but when every text is cached in one block (a cold process asking
        for a whole store) that block and the row of each text in it, not a copy in key order:
        100 MB less at 50,000 facts of 512 floats. The block is shared: read it only."""
        shelf = self._shelf(embedder.id, embedder.dim)
        shelf.fetch(keys)
        found = shelf.block_rows(keys)
        if found is not None:
            return found
        return self.vectors_by_keys(embedder, keys, text_of), None

    def shelf_file(self, embedder: Embedder) -> tuple[Path, int]:
        """(the vectors file of *embedder*, its record size): what a streaming reader reads."""
        shelf = self._shelf(embedder.id, embedder.dim)
        return shelf.path, shelf.record

    def put(self, embedder_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store known vectors (e.g. a Neo import's inline embeddings) for *texts*; rows already cached are kept."""
        import numpy as np

        vectors = np.asarray(vectors, dtype=np.float32)
        if isinstance(texts, str) or vectors.ndim != 2 or len(texts) != len(vectors) or not vectors.shape[1]:
            raise ValueError("put() wants n texts and an (n, dim) array")
        if not len(texts):
            return
        if not np.all(np.isfinite(vectors)):
            raise ValueError("put() got non-finite vector values")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        shelf = self._shelf(embedder_id, vectors.shape[1])
        all_keys = [text_key(text) for text in texts]
        shelf.fetch(all_keys)
        keys: list[bytes] = []
        rows: list[int] = []
        seen: set[bytes] = set()
        for i, key in enumerate(all_keys):
            if key not in shelf.checked and key not in seen:
                seen.add(key)
                keys.append(key)
                rows.append(i)
        if keys:
            shelf.append(keys, vectors[rows])

    def summary(self) -> dict[str, dict]:
        """Per cached embedder id: its dimension, rows and bytes on disk (reads only headers)."""
        out: dict[str, dict] = {}
        if not self.root.is_dir():
            return out
        for folder in sorted(self.root.iterdir()):
            path = folder / DATA_FILE
            try:
                with open(path, "rb") as fh:
                    header = fh.read(HEADER_BYTES)
                    size = os.fstat(fh.fileno()).st_size
            except OSError:
                continue
            dim = header_dim(header)
            if not dim:
                continue
            name = header[16:HEADER_BYTES].rstrip(b"\0").decode("utf-8", "replace")
            out[name] = {"dim": dim, "rows": (size - HEADER_BYTES) // record_size(dim), "bytes": size}
        return out

    def prune(self, embedder: Embedder, keep_texts: Iterable[str]) -> int:
        """Drop every cached vector of *embedder* except those of *keep_texts* (e.g. the current facts); return how many."""
        shelf = self._shelf(embedder.id, embedder.dim)
        return shelf.prune({text_key(t) for t in keep_texts})
