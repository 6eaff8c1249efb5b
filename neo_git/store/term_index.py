"""The words of recall's facts, indexed for Okapi BM25: derived data beside the vector cache.

Recall asks which facts share words with a question, and how rare those words are among the
facts (`neo_git.relevance`). SQLite's FTS5 (part of Python's `sqlite3`) keeps one document per
fact text, holding its `lexical.terms`; a question's texts are found with FTS5's MATCH and scored
with Okapi BM25 (k1 1.2, b 0.75, Lucene's idf).
The index follows the facts recall ranks (valid, no outcome records): each call brings it to
the texts asked about, inserting the new ones and deleting the gone ones, so its statistics
are those of the current facts, and a retired fact costs it nothing. A digest of the keys
asked about, stored with the index, lets a cold process skip that comparison when nothing
changed. A repository keeps it in `.git/neo/terms.sqlite`; an in-memory store in memory. It
is never on the shared ref, and losing it costs one rebuild: any SQLite error (a locked or
damaged file) falls back to an index built in memory for the call.
"""
from __future__ import annotations

import hashlib
import math
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.lexical import K1, B, Words, terms

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from neo_git.fact_table import FactTable


FORMAT = "terms-v2"
BUSY_MS = 500          # wait this long for another process's write, then build in memory
MAX_QUERY_TERMS = 256   # a long question (a decision's context) is matched by its rarest words
_UNSAFE = re.compile(r"[^0-9a-z_]")


def _token(term: str) -> str:
    """A term as one FTS5 token (unicode61 with '_' a token character)."""
    return _UNSAFE.sub("_", term.encode("ascii", "backslashreplace").decode("ascii").lower()).strip("_") or "_"


class TermIndex:
    """BM25 over the texts recall ranks, kept at *path* (None: in memory, for this process)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._digest: bytes | None = None

    # -- storage ---------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            target = ":memory:" if self.path is None else str(self.path)
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(target, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL" if self.path is not None else "PRAGMA journal_mode=MEMORY")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(
                "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value BLOB);"
                "CREATE TABLE IF NOT EXISTS docs(id INTEGER PRIMARY KEY, key BLOB UNIQUE NOT NULL, len INTEGER NOT NULL);"
                "CREATE VIRTUAL TABLE IF NOT EXISTS words USING fts5(terms, tokenize=\"unicode61 tokenchars '_'\");")
            row = db.execute("SELECT value FROM meta WHERE name='format'").fetchone()
            if row is None or row[0] != FORMAT:
                db.executescript("BEGIN; DELETE FROM docs; DELETE FROM words; DELETE FROM meta; COMMIT;")
                db.execute("INSERT INTO meta VALUES('format', ?)", (FORMAT,))
            self._db = db
        return self._db

    def close(self) -> None:
        """Close the database (the next call opens it again)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def _follow(self, db: sqlite3.Connection, keys: Sequence[bytes], text_of: Callable[[int], str]) -> None:
        """Bring the index to exactly *keys* (text keys, one per position; *text_of* gives the
        text at a position, read only for keys not yet indexed)."""
        digest = hashlib.sha256(b"".join(sorted(set(keys)))).digest()
        if digest == self._digest:
            return
        row = db.execute("SELECT value FROM meta WHERE name='digest'").fetchone()
        if row is not None and row[0] == digest:
            self._digest = digest
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            indexed = {bytes(k): i for i, k in db.execute("SELECT id, key FROM docs")}
            wanted: dict[bytes, int] = {}
            for position, key in enumerate(keys):
                wanted.setdefault(key, position)
            gone = [indexed[k] for k in indexed.keys() - wanted.keys()]
            for doc in gone:
                db.execute("DELETE FROM words WHERE rowid=?", (doc,))
            db.executemany("DELETE FROM docs WHERE id=?", [(doc,) for doc in gone])
            for key in wanted.keys() - indexed.keys():
                tokens = [_token(t) for t in terms(text_of(wanted[key]))]
                cursor = db.execute("INSERT INTO docs(key, len) VALUES(?, ?)", (key, len(tokens)))
                db.execute("INSERT INTO words(rowid, terms) VALUES(?, ?)", (cursor.lastrowid, " ".join(tokens)))
            db.execute("INSERT OR REPLACE INTO meta VALUES('digest', ?)", (digest,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._digest = digest

    # -- queries ---------------------------------------------------------------------------

    def match(self, query: str, keys: Sequence[bytes], text_of: Callable[[int], str]) -> Words:
        """The words *query* shares with the texts at the positions of *keys* (positions with one
        key share its entries)."""
        wanted = list(dict.fromkeys(_token(t) for t in terms(query)))
        if not wanted or not keys:
            return Words({}, {})
        try:
            db = self._connect()
            self._follow(db, keys, text_of)
            return self._match(db, wanted, keys)
        except sqlite3.Error:
            # Derived data only: a locked or damaged index is rebuilt in memory for this call.
            self.close()
            fallback = TermIndex(None)
            db = fallback._connect()
            fallback._follow(db, keys, text_of)
            found = fallback._match(db, wanted, keys)
            fallback.close()
            return found

    def _match(self, db: sqlite3.Connection, wanted: list[str], keys: Sequence[bytes]) -> Words:
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, words, 'row')")
        counts = {t: c for t, c in db.execute(
            f"SELECT term, doc FROM temp.vocab WHERE term IN ({','.join('?' * len(wanted))})", wanted)}
        wanted = [t for t in wanted if counts.get(t, 0) > 0]
        if not wanted:
            return Words({}, {})
        if len(wanted) > MAX_QUERY_TERMS:
            wanted = sorted(wanted, key=lambda t: (counts[t], t))[:MAX_QUERY_TERMS]
        # Okapi BM25 as Lucene computes it (idf = ln(1 + (N − df + ½)/(df + ½)), never ≤ 0): FTS5's
        # own bm25() floors the idf of a word half the texts hold at zero, which silences every word
        # of a store of two facts.
        total, average = db.execute("SELECT count(*), avg(len) FROM docs").fetchone()
        average = float(average or 1.0) or 1.0
        idf = {t: math.log(1.0 + (total - counts[t] + 0.5) / (counts[t] + 0.5)) for t in wanted}
        asked = set(wanted)
        found: dict[bytes, float] = {}
        held: dict[bytes, list[str]] = {}
        for key, length, text in db.execute(
                "SELECT docs.key, docs.len, words.terms FROM words JOIN docs ON docs.id = words.rowid "
                "WHERE words MATCH ?", (" OR ".join(f'"{t}"' for t in wanted),)):
            tf = Counter(t for t in text.split() if t in asked)
            norm = K1 * (1 - B + B * length / average)
            key = bytes(key)
            found[key] = sum(idf[t] * n * (K1 + 1) / (n + norm) for t, n in tf.items())
            # Words only one text holds: two of them shared with the question single that text out.
            own = [t for t in tf if counts[t] == 1]
            if len(own) >= RARE_SHARED:
                held[key] = sorted(own)
        rare = {key: tuple(found_terms) for key, found_terms in held.items()}
        return Words({position: found[key] for position, key in enumerate(keys) if key in found},
                     {position: rare[key] for position, key in enumerate(keys) if key in rare})


RARE_SHARED = 2   # words of the question that one fact alone holds: that many make it known


def pool_words(index: TermIndex, query: str, table: FactTable, positions: Sequence[int] | np.ndarray) -> Words:
    """`TermIndex.match` for the facts of *table* at *positions* (recall's ranked pool), by table position."""
    rows = table.rows
    picked = list(positions)
    keys = [bytes(k) for k in rows["key"][picked]] if picked else []
    found = index.match(query, keys, lambda i: table.peek(picked[i]).text)
    return Words({picked[i]: value for i, value in found.bm25.items()},
                 {picked[i]: value for i, value in found.rare.items()})
