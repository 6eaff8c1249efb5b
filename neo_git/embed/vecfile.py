"""The vectors file format: one header, then fixed-size records (`embed/cache.py` keeps one
file per embedder; `embed/stream.py` reads them back by row)::

    header   64 bytes: magic b"NEOVEC\\0\\2", uint32 dim, uint32 0, the embedder id (≤ 48 bytes)
    records  32-byte sha256 of the text, `dim` little-endian float32, then a
             little-endian uint32 checksum: the record's 32-bit words weighted by
             odd position factors, summed mod 2**32 (any changed word changes it;
             numpy checks 20,000 records in ~10 ms, a CRC per record took 40 times that)

A record is believed only if its checksum matches, every value is finite and
its norm is 1 (or 0, an empty text): embedders return unit rows, so a flipped
bit (a cosine of 6e36) or a torn write can never decide a supersession.
"""
from __future__ import annotations

import hashlib
import struct
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

KEY_BYTES = 32
SUM_BYTES = 4
HEADER_BYTES = 64
MAGIC = b"NEOVEC\x00\x02"   # version 2: records carry a checksum (version 1 files are rewritten)
NORM_TOLERANCE = 1e-3
# The keys file beside it (`embed/cache.py` writes it, `embed/stream.py` reads it): the magic,
# then the keys of the vectors file's records in order.
KEYS_FILE = "vectors.keys"
KEYS_MAGIC = b"NEOKEYS1"
KEYS_HEADER = 16     # magic + the inode of the vectors.bin it indexes (8 bytes, little-endian)
SCAN_RECORDS = 2048  # records per read while indexing the file (~4 MB at 512 floats)


def text_key(text: str) -> bytes:
    """The cache key of a text: sha256 of its UTF-8 bytes (lone surrogates kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def checksums(words: np.ndarray) -> np.ndarray:
    """Checksums of records given as (n, m) little-endian uint32 words (key and vector):
    sum of word × (2·position + 1) mod 2**32. Odd factors are invertible mod 2**32, so a
    change to any single word always changes the sum; positions catch swapped words."""
    import numpy as np

    weights = np.arange(1, 2 * words.shape[1], 2, dtype=np.uint32)
    # uint32 arithmetic wraps: the sum is mod 2**32 (matmul's integer loop is twice as fast as dot's)
    return (words @ weights).astype("<u4")


def record_checksum(key: bytes, vector: bytes) -> bytes:
    """The 4 bytes that close a record with this key and vector."""
    import numpy as np

    return checksums(np.frombuffer(key + vector, dtype="<u4").reshape(1, -1)).tobytes()


def record_size(dim: int) -> int:
    """Bytes per record for vectors of *dim* floats."""
    return KEY_BYTES + 4 * dim + SUM_BYTES


def sane_rows(vectors: np.ndarray) -> np.ndarray:
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
    dim = header_dim(data[:HEADER_BYTES])
    if not dim:
        return None
    size = record_size(dim)
    body = data[HEADER_BYTES:]
    count, torn = divmod(len(body), size)
    bad = int(count - trusted_rows(body[:count * size], dim).sum())
    return (count + (1 if torn else 0), bad + (1 if torn else 0))


def trusted_rows(data: bytes, dim: int) -> np.ndarray:
    """For whole records in *data*: which ones carry a matching checksum and a sane vector."""
    import numpy as np

    return trusted_words(np.frombuffer(data, dtype="<u4").reshape(-1, record_size(dim) // 4))


def trusted_words(words: np.ndarray) -> np.ndarray:
    """trusted_rows for records already seen as (n, record words) little-endian uint32."""
    return (checksums(words[:, :-1]) == words[:, -1]) & sane_rows(record_vectors(words))


def record_vectors(words: np.ndarray) -> np.ndarray:
    """The vectors of records seen as (n, record words) uint32: a float32 view, no copy."""
    return words[:, KEY_BYTES // 4:-1].view("<f4")


def file_header(embedder_id: str, dim: int) -> bytes:
    """The 64-byte header of a file of *dim*-float vectors made by *embedder_id*."""
    name = embedder_id.encode("utf-8")[:48]
    return MAGIC + struct.pack("<II", dim, 0) + name.ljust(48, b"\0")


def header_dim(header: bytes) -> int | None:
    """The dimension a header declares, or None if it is not one of ours."""
    if len(header) < HEADER_BYTES or header[:8] != MAGIC:
        return None
    return struct.unpack("<I", header[8:12])[0]
