"""Local cache of embedding vectors, keyed by (embedder id, sha256 of the text).

Embeddings are derived data (DESIGN §2): they never go into the shared ref, and
losing this folder only costs re-embedding.

One file per embedder, ``neo_home()/cache/vectors/<sanitised id>/vectors.bin``::

    header   64 bytes: magic b"NEOVEC\\0\\2", uint32 dim, uint32 0, the embedder id (≤ 48 bytes)
    records  32-byte sha256 of the text, `dim` little-endian float32, then a
             little-endian uint32 checksum: the record's 32-bit words weighted by
             odd position factors, summed mod 2**32 (any changed word changes it;
             numpy checks 20,000 records in ~10 ms, a CRC per record took 40 times that)

Keys and vectors live in the same record so one file operation covers both:
a record is either wholly inside the file or it is a torn tail, and a rewrite
(`prune`, or the size cap) swaps the whole file with one ``os.replace``.

A record is believed only if its checksum matches, every value is finite and
its norm is 1 (or 0, an empty text): embedders return unit rows, so a flipped
bit (a cosine of 6e36) or a torn write can never decide a supersession; such a
record is skipped and its text embedded again.

Readers take no lock: they read whole records below the size they saw (a
torn tail is ignored) with one ``np.frombuffer`` and build one dict — 5,000
rows load in about 10 ms. If the file's inode changes (rewritten by another
process) they start over. Writers hold an exclusive ``fcntl.flock`` on a
sibling ``lock`` file, cut a torn tail back to the last whole record, append,
and fsync.
"""
from __future__ import annotations

import hashlib
import os
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from neo_git.fileio import locked
from neo_git.identity import vector_cache_dir

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from neo_git.embed import Embedder

KEY_BYTES = 32
SUM_BYTES = 4
HEADER_BYTES = 64
MAGIC = b"NEOVEC\x00\x02"   # version 2: records carry a checksum (version 1 files are rewritten)
NORM_TOLERANCE = 1e-3
DATA_FILE = "vectors.bin"
LOCK_FILE = "lock"
# A cache that only grows (every distinct query is a row) is cut back to its
# newest half when it passes this many rows.
MAX_ROWS = 50_000


def text_key(text: str) -> bytes:
    """The cache key of a text: sha256 of its UTF-8 bytes (lone surrogates kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def checksums(words: "np.ndarray") -> "np.ndarray":
    """Checksums of records given as (n, m) little-endian uint32 words (key and vector):
    sum of word × (2·position + 1) mod 2**32. Odd factors are invertible mod 2**32, so a
    change to any single word always changes the sum; positions catch swapped words."""
    import numpy as np

    weights = np.arange(1, 2 * words.shape[1], 2, dtype=np.uint32)
    return words.dot(weights).astype("<u4")  # uint32 arithmetic wraps: the sum is mod 2**32


def record_checksum(key: bytes, vector: bytes) -> bytes:
    """The 4 bytes that close a record with this key and vector."""
    import numpy as np

    return checksums(np.frombuffer(key + vector, dtype="<u4").reshape(1, -1)).tobytes()


def record_size(dim: int) -> int:
    """Bytes per record for vectors of *dim* floats."""
    return KEY_BYTES + 4 * dim + SUM_BYTES


def sane_rows(vectors: "np.ndarray") -> "np.ndarray":
    """Which rows are believable embeddings: finite, with norm 1 (or 0 for an empty text)."""
    import numpy as np

    with np.errstate(all="ignore"):  # inf/nan (or a square overflowing) make the sum non-finite
        squares = np.einsum("ij,ij->i", vectors, vectors)
    return np.isfinite(squares) & ((np.abs(squares - 1.0) <= 2 * NORM_TOLERANCE) | (squares == 0.0))


def untrusted_records(path: Path) -> tuple[int, int] | None:
    """(records, records that fail their checksum or sanity check, plus a torn tail) in one
    vectors file; None if it is not a vector file of this version (it is rewritten on use)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    dim = _header_dim(data[:HEADER_BYTES])
    if not dim:
        return None
    size = record_size(dim)
    body = data[HEADER_BYTES:]
    count, torn = divmod(len(body), size)
    bad = int(count - trusted_rows(body[:count * size], dim).sum())
    return (count + (1 if torn else 0), bad + (1 if torn else 0))


def trusted_rows(data: bytes, dim: int) -> "np.ndarray":
    """For whole records in *data*: which ones carry a matching checksum and a sane vector."""
    import numpy as np

    return trusted_words(np.frombuffer(data, dtype="<u4").reshape(-1, record_size(dim) // 4))


def trusted_words(words: "np.ndarray") -> "np.ndarray":
    """trusted_rows for records already seen as (n, record words) little-endian uint32."""
    return (checksums(words[:, :-1]) == words[:, -1]) & sane_rows(record_vectors(words))


def record_vectors(words: "np.ndarray") -> "np.ndarray":
    """The vectors of records seen as (n, record words) uint32: a float32 view, no copy."""
    return words[:, KEY_BYTES // 4:-1].view("<f4")


def embedder_dirname(embedder_id: str) -> str:
    """A file-name-safe folder for an embedder id, unique even when sanitising merges ids."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", embedder_id).strip("._")[:80] or "embedder"
    suffix = hashlib.blake2b(embedder_id.encode("utf-8"), digest_size=4).hexdigest()
    return f"{safe}-{suffix}"


def _header(embedder_id: str, dim: int) -> bytes:
    name = embedder_id.encode("utf-8")[:48]
    return MAGIC + struct.pack("<II", dim, 0) + name.ljust(48, b"\0")


def _header_dim(header: bytes) -> int | None:
    """The dimension a header declares, or None if it is not one of ours."""
    if len(header) < HEADER_BYTES or header[:8] != MAGIC:
        return None
    return struct.unpack("<I", header[8:12])[0]


class _Shelf:
    """The rows of one embedder that this process has read, plus where its file is."""

    def __init__(self, folder: Path, embedder_id: str, dim: int) -> None:
        self.folder = folder
        self.path = folder / DATA_FILE
        self.embedder_id = embedder_id
        self.dim = dim
        self.record = record_size(dim)
        self.reset()

    def reset(self) -> None:
        self.index: dict[bytes, int] = {}
        # Vectors read, in file order, in a buffer that doubles when full: appending a
        # few rows costs O(rows added), not a copy of everything read so far.
        self._buffer: "np.ndarray | None" = None
        self.rows = 0
        self.inode: int | None = None

    def matrix(self) -> "np.ndarray":
        """All rows read so far as one (rows, dim) array."""
        import numpy as np

        if self._buffer is None:
            return np.zeros((0, self.dim), np.float32)
        return self._buffer[:self.rows]

    def _dtype(self):
        import numpy as np

        return np.dtype([("key", f"V{KEY_BYTES}"), ("vec", "<f4", (self.dim,)), ("sum", f"V{SUM_BYTES}")])

    def refresh(self) -> None:
        """Read the records appended since we last looked (by us or by other processes)."""
        import numpy as np

        try:
            with open(self.path, "rb") as fh:
                stat = os.fstat(fh.fileno())
                if stat.st_ino != self.inode:
                    self.reset()  # new, or rewritten by another process
                    if _header_dim(fh.read(HEADER_BYTES)) != self.dim:
                        return  # not ours (yet): the next append rewrites it
                    self.inode = stat.st_ino
                total = (stat.st_size - HEADER_BYTES) // self.record
                if total <= self.rows:
                    return
                fh.seek(HEADER_BYTES + self.rows * self.record)
                data = fh.read((total - self.rows) * self.record)
        except OSError:  # missing, or a folder / unreadable file in the way: nothing cached
            if self.rows:
                self.reset()
            return
        new = len(data) // self.record
        if not new:
            return
        base, size, index = self.rows, self.record, self.index
        words = np.frombuffer(data, dtype="<u4", count=new * size // 4).reshape(new, size // 4)
        vectors = record_vectors(words)  # rows of the bytes just read, in place (read-only)
        # A record that fails its checksum or its sanity check keeps its row (positions
        # follow the file) but is never found: its text is embedded and appended again.
        for i in np.flatnonzero(trusted_words(words)).tolist():
            index.setdefault(data[i * size:i * size + KEY_BYTES], base + i)
        needed = self.rows + new
        if self._buffer is None:
            # The first read keeps the strided view over the file's bytes: a cold recall at
            # 5,000 facts then copies 10 MB once (picking its rows), not twice.
            self._buffer = vectors
        elif needed > len(self._buffer):
            grown = np.empty((max(needed, 2 * self.rows, 64), self.dim), dtype=np.float32)
            grown[:self.rows] = self.matrix()
            self._buffer = grown
        if self._buffer is not vectors:
            self._buffer[self.rows:needed] = vectors
        self.rows = needed

    def append(self, keys: list[bytes], vectors: "np.ndarray") -> None:
        """Append records under the lock, repairing a torn tail (or a foreign file) first."""
        import numpy as np

        records = np.empty(len(keys), dtype=self._dtype())
        records["key"] = np.frombuffer(b"".join(keys), dtype=f"V{KEY_BYTES}")
        records["vec"] = vectors
        words = np.frombuffer(records.tobytes(), dtype="<u4").reshape(len(keys), -1).copy()
        words[:, -1] = checksums(words[:, :-1])
        payload = words.tobytes()
        self.folder.mkdir(parents=True, exist_ok=True)
        with locked(self.folder / LOCK_FILE, timeout=None):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                if size < HEADER_BYTES or _header_dim(os.pread(fd, HEADER_BYTES, 0)) != self.dim:
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
            finally:
                os.close(fd)
                self.refresh()

    def _rewrite(self, body: bytes) -> None:
        """Replace the whole file (caller holds the lock); readers notice the new inode."""
        tmp = self.path.with_name(f"{DATA_FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            _write_all(fd, 0, _header(self.embedder_id, self.dim) + body)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)

    def prune(self, keep: set[bytes]) -> int:
        """Rewrite the file with only the records whose key is in *keep*; return rows dropped."""
        with locked(self.folder / LOCK_FILE, timeout=None):
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
            shelf = _Shelf(self.folder(embedder_id), embedder_id, dim)
            shelf.refresh()
            self._shelves[(embedder_id, dim)] = shelf  # only once read whole
        return shelf

    def vectors(self, embedder: "Embedder", texts: Sequence[str]) -> "np.ndarray":
        """Vectors of *texts* (n, dim): cached rows where present, the rest embedded in one batch and stored."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("vectors() takes a sequence of texts, not one string")
        shelf = self._shelf(embedder.id, embedder.dim)
        keys = [text_key(t) for t in texts]
        if any(k not in shelf.index for k in keys):
            shelf.refresh()  # another process may have embedded them meanwhile
        # Read the cached rows before appending: an append may cut the file back (MAX_ROWS).
        rows = [shelf.index.get(key, -1) for key in keys]
        if shelf.rows and rows:
            out = shelf.matrix()[rows]  # fancy indexing copies: callers may modify the result
        else:
            out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
        unique: dict[bytes, str] = {}
        for key, text, row in zip(keys, texts, rows):
            if row < 0:
                unique.setdefault(key, text)
        if unique:
            embedded = np.asarray(embedder.embed(list(unique.values())), dtype=np.float32)
            if embedded.shape != (len(unique), embedder.dim):
                raise ValueError(
                    f"embedder {embedder.id} returned shape {embedded.shape}, expected {(len(unique), embedder.dim)}")
            position = {key: i for i, key in enumerate(unique)}
            for i, row in enumerate(rows):
                if row < 0:
                    out[i] = embedded[position[keys[i]]]
            try:
                shelf.append(list(unique), embedded)
            except OSError:
                pass  # a read-only or full disk costs speed, not correctness
        return out

    def put(self, embedder_id: str, texts: Sequence[str], vectors: "np.ndarray") -> None:
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
        shelf.refresh()
        keys: list[bytes] = []
        rows: list[int] = []
        seen: set[bytes] = set()
        for i, text in enumerate(texts):
            key = text_key(text)
            if key not in shelf.index and key not in seen:
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
            dim = _header_dim(header)
            if not dim:
                continue
            name = header[16:HEADER_BYTES].rstrip(b"\0").decode("utf-8", "replace")
            out[name] = {"dim": dim, "rows": (size - HEADER_BYTES) // record_size(dim), "bytes": size}
        return out

    def prune(self, embedder: "Embedder", keep_texts: Iterable[str]) -> int:
        """Drop every cached vector of *embedder* except those of *keep_texts* (e.g. the current facts); return how many."""
        shelf = self._shelf(embedder.id, embedder.dim)
        return shelf.prune({text_key(t) for t in keep_texts})
