"""One parsed `facts/<xx>/` folder of a fact ref, in memory: read from git (its facts parsed),
or read from the parse cache (its facts' rows, each fact decoded only when asked for).

The parse cache keeps each fact as `marshal` data of a tuple of its fields in declaration
order (metadata likewise), with the fact's row (`fact_table.row_dtype`) saying where that data
is. Decoding builds the objects without the dataclasses' `__init__` (a frozen one sets each field
through `object.__setattr__`): handing the decoded fields over as the instances' `__dict__` is
several times faster. The forms come only from sealed cache files written from validated facts.
"""
from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import re
import struct
from collections.abc import Callable
from dataclasses import fields
from typing import TYPE_CHECKING

import pygit2

from neo_git import fact_schema
from neo_git.fact_schema import Invalidation
from neo_git.fact_table import ROW_INDEX, ROW_STRUCT, hex_id
from neo_git.facts import Fact, FactKind, FactMetadata, FactScope

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

_KINDS = {k.value: k for k in FactKind}
_SCOPES = {s.value: s for s in FactScope}
_new = object.__new__
_set = object.__setattr__
FACT_FIELDS = tuple(f.name for f in fields(Fact))
META_FIELDS = tuple(f.name for f in fields(FactMetadata))
_META_AT = FACT_FIELDS.index("metadata")
# Metadata fields holding fact_schema objects: kept as plain tuples (`fact_schema.cache_form`).
_TYPED = ("invalidation", "possibly_supersedes", "citations")
# _restore fills __dict__ directly: only valid while neither class derives anything at init.
assert not hasattr(Fact, "__post_init__") and not hasattr(FactMetadata, "__post_init__")

_ROW = struct.Struct(ROW_STRUCT)
_FACT_ID = re.compile(r"[0-9a-f]{16}")
DICT_AFTER = 8   # `Subtree.fact` lookups by a search of the id column before a dict of every id
_ID, _BLOB, _OFFSET, _LENGTH = (ROW_INDEX[name] for name in ("id", "blob", "offset", "length"))

# blob file name -> (blob id, the parsed fact or None, the warning if it was skipped)
BlobEntries = dict[str, tuple[pygit2.Oid, "Fact | None", "str | None"]]
# (fact id, raw blob id) -> the fact read from that blob: how a cached subtree whose encoded facts
# cannot be had (see `CachedBytes`) reads them instead
BlobFact = Callable[[str, bytes], Fact]


class CachedBytes:
    """A subtree's encoded facts in the parse cache, believed only if they hash to the sha256 the
    cache's sealed header gives them: read from the file when first needed (*path*, unchanged
    since its header was checked: same inode, size and mtime), or given in memory. A cold recall
    decodes a few facts of a few subtrees: it reads, and checks, only theirs. `view()` is None
    when they are not those bytes (edited, or the file replaced meanwhile)."""

    __slots__ = ("_digest", "_path", "_stamp", "_start", "_length", "_view", "_done")

    def __init__(self, digest: bytes, *, view: memoryview | None = None, path: os.PathLike | None = None,
                 stamp: tuple = (), start: int = 0, length: int = 0) -> None:
        self._digest, self._view, self._done = digest, view, False
        self._path, self._stamp, self._start, self._length = path, stamp, start, length

    def view(self) -> memoryview | None:
        """The bytes, read and checked on the first call; None if they fail their check."""
        if not self._done:
            self._done = True
            data = self._view if self._path is None else self._read()
            self._view = data if data is not None and hmac.compare_digest(
                hashlib.sha256(data).digest(), self._digest) else None
        return self._view

    def _read(self) -> memoryview | None:
        assert self._path is not None   # read only for a file's bytes
        try:
            with open(self._path, "rb") as fh:
                stat = os.fstat(fh.fileno())
                if (stat.st_ino, stat.st_size, stat.st_mtime_ns) != self._stamp:
                    return None   # replaced since its header was read: another file's bytes
                data = os.pread(fh.fileno(), self._length, self._start)
        except OSError:
            return None
        return memoryview(data) if len(data) == self._length else None


def cache_form(fact: Fact) -> tuple:
    """A fact as the cache keeps it: its fields as they are in memory (tuples stay tuples;
    marshal keeps them), kind and scope as their values, metadata as a tuple too (its
    fact_schema objects as tuples of their fields)."""
    values = [fact.__dict__[name] for name in FACT_FIELDS]
    values[FACT_FIELDS.index("kind")] = fact.kind.value
    values[FACT_FIELDS.index("scope")] = fact.scope.value
    meta = fact.metadata.__dict__
    values[_META_AT] = tuple(fact_schema.cache_form(meta[name]) if name in _TYPED else meta[name]
                             for name in META_FIELDS)
    return tuple(values)


def encode_fact(fact: Fact) -> bytes:
    """The bytes the cache keeps for *fact*."""
    return marshal.dumps(cache_form(fact))


def restore(form) -> Fact:
    """A fact from its cache form, trusted: it was validated before it was written.
    KeyError if the form does not have the fields of a Fact (another layout)."""
    if not isinstance(form, tuple) or len(form) != len(FACT_FIELDS) or not isinstance(form[_META_AT], tuple) \
            or len(form[_META_AT]) != len(META_FIELDS):
        raise KeyError("a parse-cache entry does not have the fields of a Fact")
    raw = dict(zip(FACT_FIELDS, form))
    meta = dict(zip(META_FIELDS, form[_META_AT]))
    if meta["invalidation"] is not None:
        meta["invalidation"] = fact_schema.from_cache(Invalidation, meta["invalidation"])
    if meta["possibly_supersedes"]:
        meta["possibly_supersedes"] = fact_schema.links_from_cache(meta["possibly_supersedes"])
    if meta["citations"]:
        meta["citations"] = fact_schema.citations_from_cache(meta["citations"])
    metadata = _new(FactMetadata)
    _set(metadata, "__dict__", meta)
    raw.update(kind=_KINDS[raw["kind"]], scope=_SCOPES[raw["scope"]], metadata=metadata)
    fact = _new(Fact)
    _set(fact, "__dict__", raw)
    return fact


def decode_fact(data: bytes | memoryview) -> Fact:
    """A fact from the bytes `encode_fact` wrote (ValueError/KeyError if they are not such)."""
    return restore(marshal.loads(data))


def _arranged(rows: np.ndarray, chunks: list[bytes]) -> tuple[bytes, bytes, bytes]:
    """(*rows* (a private copy) with offsets and lengths into the chunks laid out valid facts
    first, the valid facts' chunks joined, the retired ones' joined): *chunks* are the encoded
    facts of *rows*, in row order."""
    import numpy as np

    from neo_git.fact_table import VALID

    lengths = np.array([len(chunk) for chunk in chunks], dtype=np.int64)
    valid = (rows["flags"] & VALID) != 0
    order = np.concatenate([np.flatnonzero(valid), np.flatnonzero(~valid)])
    offsets = np.empty(len(rows), dtype=np.int64)
    offsets[order] = np.cumsum(lengths[order]) - lengths[order]
    rows["length"] = lengths
    rows["offset"] = offsets
    live = b"".join(chunks[i] for i in np.flatnonzero(valid).tolist())
    retired = b"".join(chunks[i] for i in np.flatnonzero(~valid).tolist())
    return rows.tobytes(), live, retired


class Subtree:
    """One parsed `facts/<xx>/` folder: its tree id, its facts (id -> Fact, in tree order), its
    blob entries (name -> (blob id, fact or None, warning)) and the warnings of skipped blobs.

    A subtree read from the parse cache is *lazy*: it holds its facts' rows and their encoded
    forms, and decodes a fact only when asked (`fact_at`), or all of them when `facts` or
    `blobs` is read."""

    __slots__ = ("oid", "_facts", "_blobs", "_warnings", "_raw", "_rows", "_data", "_skipped", "_list", "_decoded",
                 "_row_of", "_blob_fact", "_rest", "_split", "_lookups")

    def __init__(self, oid: pygit2.Oid | None, facts: dict[str, Fact], blobs: BlobEntries,
                 warnings: tuple[str, ...]) -> None:
        self.oid = oid
        self._facts: dict[str, Fact] | None = facts
        self._blobs: BlobEntries | None = blobs
        self._warnings = warnings
        self._raw: bytes | None = None          # the rows as the cache holds them (lazy subtrees)
        self._rows: np.ndarray | None = None
        self._data: memoryview | CachedBytes | None = None   # their encoded forms (lazy subtrees)
        # Valid facts' forms come first: the retired ones', from offset `_split` on, may be kept
        # apart (`_rest`), read only when a retired fact is decoded. `_split` None: in any order.
        self._rest: CachedBytes | None = None
        self._split: int | None = None
        self._blob_fact: BlobFact | None = None
        self._skipped: list | None = None
        self._list: list[Fact] | None = None
        self._decoded: dict[int, Fact] = {}         # row -> fact, for a lazy subtree (one object per fact)
        self._row_of: dict[int, int] | None = None  # fact id (as a number) -> row, for a lazy subtree
        self._lookups = 0                           # `fact` calls before `_row_of` was built

    @classmethod
    def of(cls, oid: pygit2.Oid, blobs: BlobEntries) -> Subtree:
        """A subtree from its blob entries (in tree order)."""
        facts = {fact.id: fact for _, fact, _ in blobs.values() if fact is not None}
        return cls(oid, facts, blobs, tuple(w for _, _, w in blobs.values() if w))

    @classmethod
    def lazy(cls, oid: pygit2.Oid, rows: bytes, data: memoryview | CachedBytes, skipped: list,
             blob_fact: BlobFact | None = None, split: int | None = None,
             rest: CachedBytes | None = None) -> Subtree:
        """A subtree from the parse cache: *rows* of its facts (in tree order), *data* holding their
        encoded forms (rows' offsets count from its start), *skipped* the [name, blob hex,
        warning] of blobs that are not facts. With *split*, the valid facts' forms are those
        before that offset, and *rest* (if given) holds the others, from that offset on.
        *blob_fact* reads a fact from its blob, should its bytes fail their check (without it,
        that is a ValueError)."""
        sub = cls(oid, None, None, tuple(str(w) for _, _, w in skipped))  # type: ignore[arg-type]
        sub._raw, sub._data, sub._skipped, sub._blob_fact = rows, data, skipped, blob_fact
        sub._split, sub._rest = split, rest
        return sub

    def _part(self, offset: int) -> tuple[memoryview | None, int]:
        """(the checked bytes holding the encoded fact at *offset*, or None; where they start)."""
        rest, split = self._rest, self._split
        if rest is not None and split is not None and offset >= split:   # a rest comes with its split
            return rest.view(), split
        data = self._data
        return (data.view() if isinstance(data, CachedBytes) else data), 0

    def sound(self) -> bool:
        """False when the encoded facts of a lazy subtree are not those its cache sealed."""
        if self._raw is None:
            return True
        return self._part(0)[0] is not None and (self._rest is None or self._rest.view() is not None)

    def _decode_row(self, row: tuple) -> Fact:
        """The fact of one of its rows (as `_ROW` unpacks it): decoded, or else read from its blob."""
        data, base = self._part(row[_OFFSET])
        if data is not None:
            start = row[_OFFSET] - base
            fact = decode_fact(data[start:start + row[_LENGTH]])
        elif self._blob_fact is not None:
            fact = self._blob_fact(hex_id(row[_ID]), bytes(row[_BLOB]))
        else:
            raise ValueError("a parse-cache subtree whose facts are not those its header sealed")
        if hex_id(row[_ID]) != fact.id:
            raise ValueError("a parse-cache entry under another fact's id")
        return fact

    def _row_bytes(self, row: tuple) -> bytes:
        """The encoded form of the fact of one of its rows."""
        data, base = self._part(row[_OFFSET])
        if data is None:
            return encode_fact(self._decode_row(row))
        start = row[_OFFSET] - base
        return bytes(data[start:start + row[_LENGTH]])

    @classmethod
    def spliced(cls, oid: pygit2.Oid, previous: Subtree, items: list[tuple]) -> Subtree:
        """A lazy subtree for a folder that changed since the lazy *previous*: *items*, in tree
        order, are ("row", j) for a fact whose blob did not change (its row and encoded bytes are
        taken as they are, never decoded), ("fact", name, blob oid, Fact) for a blob parsed now,
        ("skip", name, blob oid, warning) for one that is not a fact. A sync that brings one fact
        into a folder of 200 costs one parse, not 200 decodes and encodes."""
        import numpy as np

        from neo_git.fact_table import columns_of, row_dtype

        dtype = row_dtype()
        previous_raw = previous._raw
        assert previous_raw is not None   # previous is lazy
        old_rows = np.frombuffer(previous_raw, dtype=dtype)
        parsed = [item for item in items if item[0] == "fact"]
        fresh = columns_of([fact for _, _, _, fact in parsed])
        if len(parsed):
            fresh["blob"] = np.frombuffer(b"".join(oid_.raw for _, _, oid_, _ in parsed), dtype="V20")
        kept = [item for item in items if item[0] != "skip"]
        rows = np.empty(len(kept), dtype=dtype)
        chunks: list[bytes] = []
        n = 0
        for i, item in enumerate(kept):
            if item[0] == "row":
                rows[i] = old_rows[item[1]]
                chunks.append(previous._row_bytes(_ROW.unpack_from(previous_raw, item[1] * _ROW.size)))
            else:
                rows[i] = fresh[n]
                chunks.append(encode_fact(item[3]))
                n += 1
        raw, live, retired = _arranged(rows, chunks)
        skipped = [[item[1], str(item[2]), item[3]] for item in items if item[0] == "skip"]
        return cls.lazy(oid, raw, memoryview(live + retired), skipped, previous._blob_fact, split=len(live))

    def entries(self) -> dict[str, tuple[bytes, int | None, str | None]]:
        """name -> (raw blob id, row of its fact or None, warning) of a lazy subtree, without
        decoding a fact: what `spliced` needs to know which blobs did not change."""
        found: dict[str, tuple[bytes, int | None, str | None]] = {}
        assert self._raw is not None and self._skipped is not None   # a lazy subtree
        for j, row in enumerate(_ROW.iter_unpack(self._raw)):
            found[f"{hex_id(row[_ID])}.json"] = (bytes(row[_BLOB]), j, None)
        for name, blob_hex, warning in self._skipped:
            found[str(name)] = (bytes.fromhex(str(blob_hex)), None, None if warning is None else str(warning))
        return found

    def blob_ids(self) -> dict[str, bytes]:
        """name -> raw blob id of every entry (facts and skipped blobs), without decoding a fact."""
        if self._blobs is not None:
            return {name: oid.raw for name, (oid, _, _) in self._blobs.items()}
        return {name: raw for name, (raw, _, _) in self.entries().items()}

    @property
    def is_lazy(self) -> bool:
        """True while its facts are not all decoded."""
        return self._facts is None

    def __bool__(self) -> bool:
        return True   # present, even with no facts in it

    def __len__(self) -> int:
        if self._facts is not None:
            return len(self._facts)
        assert self._raw is not None   # a lazy subtree
        return len(self._raw) // _ROW.size

    @property
    def warnings(self) -> tuple[str, ...]:
        return self._warnings

    @property
    def facts(self) -> dict[str, Fact]:
        """id -> Fact, in tree order (decodes every fact of a lazy subtree)."""
        if self._facts is None:
            self._materialize()
            assert self._facts is not None
        return self._facts

    @property
    def blobs(self) -> BlobEntries:
        """name -> (blob id, fact or None, warning), in tree order."""
        if self._blobs is None:
            self._materialize()
            assert self._blobs is not None
        return self._blobs

    def fact_at(self, j: int, keep: bool = True) -> Fact:
        """The *j*-th fact (in tree order), decoded now if it was not (and then kept, unless not
        *keep*: a pass that reads every fact once, such as a store's first embedding)."""
        if self._list is None:
            if self._facts is None:
                fact = self._decoded.get(j)
                if fact is None:
                    assert self._raw is not None   # a lazy subtree
                    fact = self._decode_row(_ROW.unpack_from(self._raw, j * _ROW.size))
                    if keep:
                        self._decoded[j] = fact
                return fact
            self._list = list(self._facts.values())
        return self._list[j]

    def fact(self, fact_id: str) -> Fact | None:
        """The fact with this id, or None (a lazy subtree decodes only it)."""
        if self._facts is not None:
            return self._facts.get(fact_id)
        if not (isinstance(fact_id, str) and _FACT_ID.fullmatch(fact_id)):
            return None
        wanted = int(fact_id, 16)
        if self._row_of is None:
            # The first few lookups search the id column (a write looks up the few facts it
            # compares with, in every folder: a dict of each folder's ids cost more than that).
            self._lookups += 1
            if self._lookups <= DICT_AFTER:
                import numpy as np

                found = np.flatnonzero(self.rows()["id"] == np.uint64(wanted))
                return self.fact_at(int(found[-1])) if len(found) else None   # the last, as a dict keeps
            assert self._raw is not None   # a lazy subtree
            self._row_of = {row[_ID]: j for j, row in enumerate(_ROW.iter_unpack(self._raw))}
        j = self._row_of.get(wanted)
        return None if j is None else self.fact_at(j)

    def fact_ids(self) -> list[str]:
        """The ids of its facts, in tree order (without decoding them)."""
        if self._facts is not None:
            return list(self._facts)
        assert self._raw is not None   # a lazy subtree
        return [hex_id(row[_ID]) for row in _ROW.iter_unpack(self._raw)]

    def rows(self) -> np.ndarray:
        """The rows of its facts, in tree order (computed once for a subtree read from git)."""
        if self._rows is None and self._raw is not None:
            import numpy as np

            from neo_git.fact_table import row_dtype

            self._rows = np.frombuffer(self._raw, dtype=row_dtype())
        elif self._rows is None:
            from neo_git.fact_table import columns_of

            facts = list(self.facts.values())
            rows = columns_of(facts)
            if len(rows):
                import numpy as np

                blobs = self.blobs
                rows["blob"] = np.frombuffer(b"".join(blobs[f"{f.id}.json"][0].raw for f in facts), dtype="V20")
            self._rows = rows
        return self._rows

    def row_bytes(self) -> bytes:
        """`rows()` as the bytes the cache keeps (stacking bytes is faster than stacking arrays of
        a structured dtype: numpy promotes their fields one array at a time)."""
        return self._raw if self._raw is not None else self.rows().tobytes()

    def encoded(self) -> tuple[bytes, bytes | memoryview, list]:
        """(rows with their offsets, the encoded facts they point into, skipped entries): what
        a journal record keeps of this subtree (`split_encoded`, joined)."""
        rows, live, retired, skipped = self.split_encoded()
        return rows, (live if not len(retired) else bytes(live) + bytes(retired)), skipped

    def split_encoded(self) -> tuple[bytes, bytes | memoryview, bytes | memoryview, list]:
        """(rows with their offsets, the encoded valid facts, then the retired ones' (offsets go on
        from the end of the first), skipped entries): what the parse cache writes for this subtree
        (a lazy one as it was read: never decoded, at most its bytes put in that order)."""
        if self._raw is not None and self.sound():
            first = self._part(0)[0]
            assert first is not None and self._skipped is not None   # sound, and lazy
            if self._split is not None and self._rest is not None:
                rest = self._rest.view()
                assert rest is not None   # sound
                return self._raw, first, rest, self._skipped   # as the cache file held them
            if self._split is not None:
                return self._raw, first[:self._split], first[self._split:], self._skipped
            rows = self.rows().copy()
            chunks = [bytes(first[o:o + n]) for o, n in zip(rows["offset"].tolist(), rows["length"].tolist())]
            return (*_arranged(rows, chunks), self._skipped)
        rows = self.rows().copy()
        chunks = [encode_fact(fact) for fact in self.facts.values()]
        skipped = [[name, str(oid), warning] for name, (oid, fact, warning) in self.blobs.items() if fact is None]
        return (*_arranged(rows, chunks), skipped)

    def _materialize(self) -> None:
        entries: list[tuple[str, tuple]] = []
        facts: dict[str, Fact] = {}
        assert self._raw is not None and self._skipped is not None   # a lazy subtree
        for j, row in enumerate(_ROW.iter_unpack(self._raw)):
            fact = self._decoded.get(j)
            if fact is None:
                fact = self._decode_row(row)
            facts[fact.id] = fact
            entries.append((f"{fact.id}.json", (pygit2.Oid(raw=row[_BLOB]), fact, None)))
        for name, blob_hex, warning in self._skipped:
            entries.append((str(name), (pygit2.Oid(hex=str(blob_hex)), None, None if warning is None else str(warning))))
        entries.sort(key=lambda entry: entry[0].encode("utf-8"))   # tree order, as git lists it
        self._facts, self._blobs, self._list = facts, dict(entries), list(facts.values())
