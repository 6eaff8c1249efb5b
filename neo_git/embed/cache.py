"""Local cache of embedding vectors, keyed by (embedder id, sha256 of the text).

Embeddings are derived data (DESIGN §2): they never go into the shared ref, and
losing this folder only costs re-embedding.

Layout, one folder per embedder under ``neo_home()/cache/vectors/``::

    <sanitised embedder id>/
        meta.json     {"id": ..., "dim": ...}
        keys.bin      32-byte sha256 digests, one per row
        vectors.f32   float32 rows of `dim` values, same order as keys.bin
        lock          flock target for appends

Both data files are append-only. A cold process reads them with two
``np.fromfile`` calls and builds one dict (5,000 rows of 768 floats load in a
few milliseconds). Appends take an exclusive ``fcntl`` lock, first cut both
files back to the last complete row (a writer killed mid-append leaves a torn
tail), then write the vectors and only after them the keys: a reader that
sees a key always finds its whole vector. Readers take no lock and use
``min(rows in keys.bin, rows in vectors.f32)``.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

from neo_git.identity import neo_home

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from neo_git.embed import Embedder

KEY_BYTES = 32
KEYS_FILE = "keys.bin"
VECTORS_FILE = "vectors.f32"
META_FILE = "meta.json"
LOCK_FILE = "lock"


def text_key(text: str) -> bytes:
    """The cache key of a text: sha256 of its UTF-8 bytes (lone surrogates kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def embedder_dirname(embedder_id: str) -> str:
    """A file-name-safe folder for an embedder id, unique even when sanitising merges ids."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", embedder_id).strip("._")[:80] or "embedder"
    suffix = hashlib.blake2b(embedder_id.encode("utf-8"), digest_size=4).hexdigest()
    return f"{safe}-{suffix}"


class _Shelf:
    """The rows of one embedder that this process has read, plus where its files are."""

    def __init__(self, folder: Path, embedder_id: str, dim: int) -> None:
        self.folder = folder
        self.embedder_id = embedder_id
        self.dim = dim
        self.index: dict[bytes, int] = {}
        self.blocks: list["np.ndarray"] = []  # vectors read or written, in row order
        self.rows = 0
        self.inode: int | None = None  # of keys.bin when we read it; another inode means start over
        self._matrix: "np.ndarray | None" = None

    def reset(self) -> None:
        self.index = {}
        self.blocks = []
        self.rows = 0
        self.inode = None
        self._matrix = None

    @property
    def row_bytes(self) -> int:
        return self.dim * 4

    def matrix(self) -> "np.ndarray":
        import numpy as np

        if self._matrix is None or len(self._matrix) != self.rows:
            self._matrix = np.concatenate(self.blocks) if self.blocks else np.zeros((0, self.dim), np.float32)
            self.blocks = [self._matrix]
        return self._matrix

    def _add(self, keys: bytes, vectors: "np.ndarray") -> None:
        for i in range(len(keys) // KEY_BYTES):
            self.index.setdefault(keys[i * KEY_BYTES:(i + 1) * KEY_BYTES], self.rows + i)
        self.blocks.append(vectors)
        self.rows += len(vectors)

    def refresh(self) -> None:
        """Read rows that other processes appended since we last looked."""
        import numpy as np

        keys_path = self.folder / KEYS_FILE
        vectors_path = self.folder / VECTORS_FILE
        try:
            with open(keys_path, "rb") as kf, open(vectors_path, "rb") as vf:
                stat = os.fstat(kf.fileno())
                total = min(stat.st_size // KEY_BYTES, os.fstat(vf.fileno()).st_size // self.row_bytes)
                if stat.st_ino != self.inode or total < self.rows:
                    self.reset()  # the files were removed or rewritten under us
                    self.inode = stat.st_ino
                if total <= self.rows:
                    return
                new = total - self.rows
                kf.seek(self.rows * KEY_BYTES)
                keys = kf.read(new * KEY_BYTES)
                vf.seek(self.rows * self.row_bytes)
                vectors = np.fromfile(vf, dtype=np.float32, count=new * self.dim)
        except FileNotFoundError:
            if self.rows:
                self.reset()
            return
        new = min(len(keys) // KEY_BYTES, len(vectors) // self.dim)
        if new:
            self._add(keys[: new * KEY_BYTES], vectors[: new * self.dim].reshape(new, self.dim))

    def append(self, keys: list[bytes], vectors: "np.ndarray") -> None:
        """Append rows under the lock, repairing a torn tail first."""
        import numpy as np

        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._write_meta()
        with _locked(self.folder / LOCK_FILE):
            keys_path = self.folder / KEYS_FILE
            vectors_path = self.folder / VECTORS_FILE
            kfd = os.open(keys_path, os.O_RDWR | os.O_CREAT, 0o644)
            vfd = os.open(vectors_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                complete = min(os.fstat(kfd).st_size // KEY_BYTES, os.fstat(vfd).st_size // self.row_bytes)
                # Cut a torn tail (or a vector written without its key) before appending.
                if os.fstat(vfd).st_size != complete * self.row_bytes:
                    os.ftruncate(vfd, complete * self.row_bytes)
                if os.fstat(kfd).st_size != complete * KEY_BYTES:
                    os.ftruncate(kfd, complete * KEY_BYTES)
                _write_all(vfd, complete * self.row_bytes, vectors.tobytes())
                os.fsync(vfd)
                _write_all(kfd, complete * KEY_BYTES, b"".join(keys))
            finally:
                os.close(kfd)
                os.close(vfd)
        # Pick up our rows and anyone else's from the files, in file order.
        self.refresh()

    def _write_meta(self) -> None:
        path = self.folder / META_FILE
        if path.exists():
            return
        tmp = path.with_name(f"{META_FILE}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"id": self.embedder_id, "dim": self.dim}, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)


def _write_all(fd: int, offset: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


class VectorCache:
    """Vectors of texts per embedder, on disk under `neo_home()/cache/vectors/`."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else neo_home() / "cache" / "vectors"
        self._shelves: dict[str, _Shelf] = {}

    def folder(self, embedder_id: str) -> Path:
        """The folder holding one embedder's vectors."""
        return self.root / embedder_dirname(embedder_id)

    def _shelf(self, embedder_id: str, dim: int) -> _Shelf:
        shelf = self._shelves.get(embedder_id)
        if shelf is None or shelf.dim != dim:
            folder = self.folder(embedder_id)
            stored_dim = _stored_dim(folder)
            if stored_dim is not None and stored_dim != dim:
                # Same id, other dimension: the files belong to another vector space.
                # Start over rather than serve wrong-shaped rows.
                _discard(folder)
            shelf = _Shelf(folder, embedder_id, dim)
            shelf.refresh()
            self._shelves[embedder_id] = shelf
        return shelf

    def vectors(self, embedder: "Embedder", texts: Sequence[str]) -> "np.ndarray":
        """Vectors of *texts* (n, dim): cached rows where present, the rest embedded in one batch and stored."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("vectors() takes a sequence of texts, not one string")
        shelf = self._shelf(embedder.id, embedder.dim)
        keys = [text_key(t) for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in shelf.index]
        if missing:
            shelf.refresh()  # another process may have embedded them meanwhile
            missing = [i for i, k in enumerate(keys) if k not in shelf.index]
        fresh: dict[bytes, "np.ndarray"] = {}
        if missing:
            unique: dict[bytes, str] = {}
            for i in missing:
                unique.setdefault(keys[i], texts[i])
            embedded = np.asarray(embedder.embed(list(unique.values())), dtype=np.float32)
            if embedded.shape != (len(unique), embedder.dim):
                raise ValueError(
                    f"embedder {embedder.id} returned shape {embedded.shape}, expected {(len(unique), embedder.dim)}")
            fresh = dict(zip(unique, embedded))
            try:
                shelf.append(list(unique), embedded)
            except OSError:
                pass  # a read-only or full disk costs speed, not correctness
        rows = [shelf.index.get(key, -1) for key in keys]
        if shelf.rows and rows:
            out = shelf.matrix()[rows]  # fancy indexing copies: callers may modify the result
        else:
            out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
        for i, row in enumerate(rows):
            if row < 0:  # not stored (the append failed): use the fresh vector
                out[i] = fresh[keys[i]]
        return out

    def put(self, embedder_id: str, texts: Sequence[str], vectors: "np.ndarray") -> None:
        """Store known vectors (e.g. a Neo import's inline embeddings) for *texts*; rows already cached are kept."""
        import numpy as np

        vectors = np.asarray(vectors, dtype=np.float32)
        if isinstance(texts, str) or vectors.ndim != 2 or len(texts) != len(vectors):
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

    def __len__(self) -> int:  # pragma: no cover - debugging aid
        return sum(s.rows for s in self._shelves.values())


def _stored_dim(folder: Path) -> int | None:
    try:
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
        return int(meta["dim"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _discard(folder: Path) -> None:
    with contextlib.suppress(OSError):
        with _locked(folder / LOCK_FILE):
            for name in (KEYS_FILE, VECTORS_FILE, META_FILE):
                with contextlib.suppress(FileNotFoundError):
                    (folder / name).unlink()
