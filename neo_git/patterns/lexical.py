"""Okapi BM25 over the pattern texts, with the hash embedder's tokenizer (split identifiers,
stem, drop stopwords), so "import cycles" meets "Import Cycle" and `circular_import`.

Scores are divided by the most a document could score for the query (every query word
matched, term frequency saturated: ``idf * (k1 + 1)`` per word, a word no pattern uses
counting at the highest idf). The result is in [0, 1] and comparable across queries: a
question sharing one common word with a pattern scores low, not 1.0.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

K1 = 1.2
B = 0.75


@lru_cache(maxsize=20_000)
def _chunk_tokens(chunk: str) -> tuple[str, ...]:
    from neo_git.embed.hashing import tokens

    return tuple(tokens(chunk))


def words(text: str) -> list[str]:
    """The tokens of *text*, memoised per whitespace-separated chunk (a token never spans whitespace)."""
    out: list[str] = []
    for chunk in text.split():
        out.extend(_chunk_tokens(chunk))
    return out


class BM25:
    """A tiny in-memory BM25 index over a fixed list of documents."""

    def __init__(self, documents: Sequence[str]) -> None:
        self.counts = [Counter(words(doc)) for doc in documents]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        n = len(self.counts)
        # The "+1" form of IDF stays positive for words in most documents.
        self.idf = {word: math.log(1 + (n - df + 0.5) / (df + 0.5)) for word, df in frequency.items()}

    def scores(self, query: str) -> list[float]:
        """Scores of every document for *query* in [0, 1] (the share of the query's weight it matches)."""
        asked = set(words(query))
        query_words = asked & self.idf.keys()
        unseen = math.log(1 + (len(self.counts) + 0.5) / 0.5)  # idf of a word no document has
        ceiling = sum(self.idf.get(w, unseen) for w in asked) * (K1 + 1)
        raw = []
        for counts, length in zip(self.counts, self.lengths):
            norm = K1 * (1 - B + B * length / (self.average or 1))
            raw.append(sum(self.idf[w] * counts[w] * (K1 + 1) / (counts[w] + norm) for w in query_words if w in counts))
        return [r / ceiling for r in raw] if ceiling > 0 else [0.0] * len(raw)
