"""Facts as columns, decoded on demand: what recall needs of 50,000 facts without 50,000 objects.

Recall's layout (which layer a fact belongs to, its ranking weights) and the write policy's
first look (which facts share a kind, a duplicate key, a subject) depend on a few fields of
every fact, while only the few facts a question returns are read whole. A `FactTable` is a
sequence of facts in a fixed order with one row of `row_dtype()` per fact: the parse cache keeps
these rows per 2-hex subtree (`store/parse_cache.py`), so a cold process reads them as one numpy
array and decodes a fact only when `table[i]` asks for it. File-backed scopes and plain lists
build their rows from the facts (`columns_of`); both kinds of table give recall the same rows.

`SIGNATURE` names everything a row depends on (the row layout, the retraction pattern, the
citation states that make a fact stale, the text keys): the parse cache's format includes it, so
rows written under other rules are never read.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, cast

from neo_git.facts import SCOPE_ORDER, Fact, FactKind

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

COLUMNS_VERSION = 2
_HEX_ID = re.compile(r"^[0-9a-f]{16}$")
KINDS = tuple(FactKind)
KIND_INDEX = {kind: i for i, kind in enumerate(KINDS)}
SCOPE_INDEX = {scope: i for i, scope in enumerate(SCOPE_ORDER)}

# Bits of the `flags` column.
VALID = 1 << 0
NEEDS_REVIEW = 1 << 1
OPEN_PROPOSAL = 1 << 2      # an agent's proposal no person accepted (knowledge.is_open_proposal)
HAS_PATHS = 1 << 3          # metadata.paths is set
HAS_CITATIONS = 1 << 4      # metadata.citations is set
STALE = 1 << 5              # citation_states.is_stale
RETRACTION = 1 << 6         # knowledge.is_retraction
SUPERSEDED_BY = 1 << 7      # the superseded_by column holds an id
SUPERSEDES = 1 << 8         # the supersedes column holds an id
DEPENDS_ON = 1 << 9         # depends_on is not empty
STATEMENT = 1 << 10         # scoring.statement_sized: may join a family in recall


# One fact's row: ids as integers (16 hex digits), the fields recall's layout reads, the sha256
# of its text (the vector cache's key), the write policy's key hashes (`textkeys`), and where the
# parse cache keeps its git blob id and encoded form. (name, numpy type, struct code): the parse
# cache reads rows with `struct` when it only decodes facts, so that path needs no numpy.
ROW_FIELDS = (
    ("id", "<u8", "Q"), ("superseded_by", "<u8", "Q"), ("supersedes", "<u8", "Q"),
    ("confidence", "<f8", "d"), ("success", "<i8", "q"), ("tokens", "<i8", "q"),
    ("retired_at", "<i8", "q"),                              # metadata.invalidation.at, epoch seconds (0: none)
    ("duplicate", "<u8", "Q"), ("subject", "<u8", "Q"),      # textkeys.duplicate_hash / subject_hash
    ("key", "V32", "32s"), ("blob", "V20", "20s"),            # sha256 of fact.text; git blob id (ref facts)
    ("offset", "<u8", "Q"), ("length", "<u4", "I"),          # the encoded fact in the parse cache
    ("flags", "<u2", "H"), ("kind", "u1", "B"), ("scope", "u1", "B"),
)
ROW_STRUCT = "<" + "".join(code for _, _, code in ROW_FIELDS)
ROW_INDEX = {name: i for i, (name, _, _) in enumerate(ROW_FIELDS)}


@lru_cache(maxsize=1)
def row_dtype() -> np.dtype:
    """The numpy dtype of a row (packed, little-endian: the same bytes as ROW_STRUCT)."""
    import numpy as np

    return np.dtype([(name, kind) for name, kind, _ in ROW_FIELDS])


def _signature() -> str:
    from neo_git import scoring
    from neo_git.citation_states import BROKEN
    from neo_git.knowledge import _RETRACTION
    from neo_git.textkeys import KEYS_SIGNATURE

    parts = (COLUMNS_VERSION, str(row_dtype().descr), _RETRACTION.pattern, _RETRACTION.flags, sorted(BROKEN),
             [k.value for k in KINDS], [s.value for s in SCOPE_ORDER], KEYS_SIGNATURE,
             scoring.CALIBRATED_WORDS, scoring._WORDS.pattern)
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:12]


@lru_cache(maxsize=1)
def signature() -> str:
    """What the rows depend on, as a short hex string (part of the parse cache's FORMAT)."""
    return _signature()


def text_key(text: str) -> bytes:
    """The vector cache's key of a text (sha256 of its UTF-8 bytes, lone surrogates kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def columns_of(facts: Sequence[Fact], keys: bool = True) -> np.ndarray:
    """The rows of *facts* (in order). *keys*: also the write policy's key hashes (a store
    writing its parse cache); recall never reads them."""
    import numpy as np

    from neo_git.citation_states import is_stale
    from neo_git.knowledge import is_open_proposal, is_retraction
    from neo_git.scoring import CALIBRATED_WORDS, word_count
    from neo_git.textkeys import duplicate_hash, subject_hash

    words = word_count.__wrapped__   # uncached: a cache write of 50,000 texts would fill its cache

    rows = np.zeros(len(facts), dtype=row_dtype())
    if not len(facts):
        return rows
    ids, by, sup, conf, success, tokens, flags, kind, scope, text_keys = ([] for _ in range(10))
    retired_at = []
    dup, subj = [], []
    for fact in facts:
        meta = fact.metadata
        bits = VALID if fact.is_valid else 0
        if fact.needs_review:
            bits |= NEEDS_REVIEW
        if is_open_proposal(fact):
            bits |= OPEN_PROPOSAL
        if meta.paths:
            bits |= HAS_PATHS
        if meta.citations:
            bits |= HAS_CITATIONS
            if is_stale(fact):
                bits |= STALE
        if is_retraction(fact):
            bits |= RETRACTION
        if fact.superseded_by is not None:
            bits |= SUPERSEDED_BY
        if fact.supersedes is not None:
            bits |= SUPERSEDES
        if fact.depends_on:
            bits |= DEPENDS_ON
        text = fact.text
        if words(text) <= CALIBRATED_WORDS:   # scoring.statement_sized
            bits |= STATEMENT
        ids.append(int(fact.id, 16))
        by.append(int(fact.superseded_by, 16) if fact.superseded_by is not None else 0)
        sup.append(int(fact.supersedes, 16) if fact.supersedes is not None else 0)
        conf.append(meta.confidence)
        success.append(meta.success_count)
        tokens.append(fact.tokens)
        retired_at.append(0 if fact.is_valid else _seconds(meta.invalidation))
        flags.append(bits)
        kind.append(KIND_INDEX[fact.kind])
        scope.append(SCOPE_INDEX[fact.scope])
        text_keys.append(text_key(text))
        if keys:
            dup.append(duplicate_hash(fact.subject, fact.body))
            subj.append(subject_hash(fact.subject))
    for name, values in (("id", ids), ("superseded_by", by), ("supersedes", sup), ("confidence", conf),
                         ("success", success), ("tokens", tokens), ("retired_at", retired_at), ("flags", flags),
                         ("kind", kind), ("scope", scope), ("duplicate", dup), ("subject", subj)):
        if values:
            rows[name] = values
    rows["key"] = np.frombuffer(b"".join(text_keys), dtype="V32")
    return rows


def _seconds(invalidation) -> int:
    """When a fact was retired (its invalidation's `at`), in seconds since the epoch; 0 if unknown."""
    from datetime import datetime

    at = invalidation.at if invalidation is not None else None
    try:
        return int(datetime.fromisoformat(at).timestamp()) if isinstance(at, str) else 0
    except (ValueError, OverflowError, OSError):
        return 0


def member(values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """`np.isin(values, wanted)` for integer ids, without importing numpy.ma (`isin` does: 15 ms
    of a cold recall)."""
    import numpy as np

    if not len(wanted) or not len(values):
        return np.zeros(len(values), dtype=bool)
    ordered = np.sort(wanted)
    at = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
    return ordered[at] == values


def hex_id(value: int) -> str:
    """A fact id from its row value."""
    return f"{value:016x}"


class FactTable(Sequence[Fact]):
    """Facts in a fixed order with their rows (`row_dtype`); `table[i]` decodes fact i on first
    use (a table built from facts already has them). Read it only: it is shared by every call
    that sees the same state."""

    __slots__ = ("rows", "_facts", "_decode", "_sorted", "_conflicts", "__weakref__")

    def __init__(self, rows: np.ndarray, facts: list[Fact | None] | None = None,
                 decode: Callable[..., Fact] | None = None) -> None:
        # decode(i, keep=True): fact i (a lazy source keeps what it decoded only when *keep*).
        self.rows = rows
        self._facts: list[Fact | None] = facts if facts is not None else [None] * len(rows)
        self._decode = decode
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None   # (ids sorted, positions), on demand
        self._conflicts: dict[str, str] | None = None

    @classmethod
    def of(cls, facts: Sequence[Fact]) -> FactTable:
        """A table of facts already in memory (the rows are computed now)."""
        if isinstance(facts, FactTable):
            return facts
        facts = list(facts)
        return cls(columns_of(facts, keys=False), cast("list[Fact | None]", facts))

    @classmethod
    def concat(cls, tables: Sequence[FactTable]) -> FactTable:
        """One table of several, in order (a lazy part stays lazy)."""
        import numpy as np

        tables = [t for t in tables if len(t)]
        if len(tables) == 1:
            return tables[0]
        if not tables:
            return cls(np.zeros(0, dtype=row_dtype()), [])
        starts = np.cumsum([0] + [len(t) for t in tables[:-1]])

        def decode(i: int, keep: bool = True) -> Fact:
            part = int(np.searchsorted(starts, i, side="right")) - 1
            table = tables[part]
            return table[i - int(starts[part])] if keep else table.peek(i - int(starts[part]))

        facts: list[Fact | None] = []
        for table in tables:
            facts.extend(table._facts)
        return cls(np.concatenate([t.rows for t in tables]), facts, decode)

    def __len__(self) -> int:
        return len(self._facts)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        fact = self._facts[i]
        if fact is None:
            fact = self._facts[i] = self._decode(i if i >= 0 else i + len(self))
        return fact

    def __iter__(self) -> Iterator[Fact]:
        for i in range(len(self._facts)):
            yield self[i]

    def peek(self, i: int) -> Fact:
        """Fact *i*, without keeping it in memory if it was not decoded yet (a pass that reads
        each fact once, such as a store's first embedding, must not hold all of them)."""
        fact = self._facts[i]
        if fact is not None:
            return fact
        assert self._decode is not None   # a table built from facts has every one
        return self._decode(i if i >= 0 else i + len(self), False)

    @property
    def decoded(self) -> int:
        """How many facts are in memory (for tests and benchmarks)."""
        return sum(f is not None for f in self._facts)

    def id(self, i: int) -> str:
        """The id of fact *i*, without decoding it."""
        return hex_id(int(self.rows["id"][i]))

    def position(self, fact_id: str) -> int | None:
        """Where the fact with this id is (the last one, as a dict built in order keeps), or None."""
        import numpy as np

        if not isinstance(fact_id, str) or not _HEX_ID.match(fact_id):
            return None
        if self._sorted is None:
            ids = self.rows["id"]
            order = np.argsort(ids, kind="stable")
            self._sorted = (ids[order], order)
        ids, order = self._sorted
        wanted = np.uint64(int(fact_id, 16))
        at = int(np.searchsorted(ids, wanted, side="right")) - 1
        return int(order[at]) if at >= 0 and ids[at] == wanted else None

    def ids_with_prefix(self, prefix: str) -> list[str]:
        """Ids starting with *prefix* (lower-case hex, 1-16 digits), found on the sorted id
        column: resolving a short id decodes no fact."""
        import numpy as np

        if not prefix or len(prefix) > 16 or any(c not in "0123456789abcdef" for c in prefix):
            return []
        if self._sorted is None:
            self.position("0" * 16)
        assert self._sorted is not None   # position() sorts
        ids = self._sorted[0]
        low, high = (np.uint64(int(prefix.ljust(16, fill), 16)) for fill in "0f")
        first, end = np.searchsorted(ids, low, side="left"), np.searchsorted(ids, high, side="right")
        return sorted({hex_id(int(v)) for v in ids[first:end].tolist()})

    def get(self, fact_id: str | None) -> Fact | None:
        """The fact with this id (decoded), or None."""
        if fact_id is None:
            return None
        i = self.position(fact_id)
        return None if i is None else self[i]

    def unique_ids(self) -> bool:
        """True when no id appears twice (always, unless two scopes hold a copy of one fact)."""
        import numpy as np

        if self._sorted is None:
            self.position("0" * 16)
        assert self._sorted is not None   # position() sorts
        ids = self._sorted[0]
        return not len(ids) or not bool(np.any(ids[1:] == ids[:-1]))

    def by_id(self) -> Mapping[str, Fact]:
        """The table as {id: fact} for lookups (facts decoded as they are looked up)."""
        return CandidateFacts(self, ())

    def flagged(self, mask: int, value: int | None = None) -> np.ndarray:
        """Positions whose flags have all bits of *mask* set (or equal *value* under it), in order."""
        import numpy as np

        bits = self.rows["flags"] & mask
        return np.flatnonzero(bits == (mask if value is None else value))

    def view(self, positions: Sequence[int]) -> TableView:
        """The facts at *positions*, as a sequence (decoded when read)."""
        return TableView(self, positions)


class TableView(Sequence[Fact]):
    """Some facts of a table, in a given order: what recall's ranked pool is."""

    __slots__ = ("table", "positions")

    def __init__(self, table: FactTable, positions: Sequence[int]) -> None:
        self.table = table
        self.positions = positions

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[k] for k in range(*j.indices(len(self)))]
        return self.table[self.positions[j]]

    def take(self, picked: Sequence[int]) -> TableView:
        """The view cut to *picked* (indices into this view)."""
        return TableView(self.table, [self.positions[k] for k in picked])


class CandidateFacts(Mapping[str, Fact]):
    """A table seen as {id: fact} for the functions of `knowledge` and `ref_facts` that look every
    fact up by id but act only on some: `values()` yields the facts at *candidates* (in table
    order), lookups reach every fact. Equal to the full dict for a function that skips every fact
    outside *candidates* (valid only for a table whose ids are unique)."""

    def __init__(self, table: FactTable, candidates: Sequence[int]) -> None:
        self._table = table
        self._candidates = candidates

    def __getitem__(self, fact_id: str) -> Fact:
        fact = self._table.get(fact_id)
        if fact is None:
            raise KeyError(fact_id)
        return fact

    def get(self, fact_id, default=None):
        fact = self._table.get(fact_id) if isinstance(fact_id, str) else None
        return default if fact is None else fact

    def __contains__(self, fact_id: object) -> bool:
        return isinstance(fact_id, str) and self._table.position(fact_id) is not None

    def __iter__(self) -> Iterator[str]:
        return (self._table.id(i) for i in self._candidates)

    def __len__(self) -> int:
        return len(self._candidates)

    def values(self):
        return [self._table[i] for i in self._candidates]


def table_conflicts(table: FactTable) -> dict[str, str]:
    """`knowledge.conflict_partners` of a table, kept with it: only the facts that can be one side
    of a conflict (valid, flagged for review, superseding another) are decoded."""
    from neo_git.knowledge import conflict_partners

    if table._conflicts is None:
        if table.unique_ids():
            candidates = table.flagged(VALID | NEEDS_REVIEW | SUPERSEDES).tolist()
            table._conflicts = conflict_partners(CandidateFacts(table, candidates))
        else:  # two scopes hold one id: the plain dict semantics (the last copy wins), over everything
            table._conflicts = conflict_partners(list(table))
    return table._conflicts
