"""The built-in embedder: signed feature hashing of identifier-aware tokens.

No model, no network, numpy only, and the same vector for the same text on
every machine: bucket and sign come from ``blake2b`` of the feature (Python's
``hash()`` is salted per process, so it would not do).

Features of a text, each hashed into one of ``dim`` buckets with a sign:

* word features: identifiers split at ``camelCase``/``snake_case``/``kebab-case``/
  dotted-path boundaries, lower-cased, stopwords dropped, lightly stemmed;
  numbers stay tokens so "10 s" and "30 s" differ a little;
* the whole identifier (``parse_config``) as one more feature, so an exact
  identifier match counts for more than two loose words;
* character 3-grams of every word at a lower weight, for word-form changes the
  stemmer misses;
* the words of the first line again, under their own namespace, when the text
  has more than one line: the store embeds ``subject + "\\n" + body``, and two
  facts about the same subject are the ones that may supersede each other.

Term frequency is sublinear (``1 + log tf``) and rows are L2-normalised, so the
dot product of two rows is their cosine.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from hashlib import blake2b
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

# Bumping VERSION changes `id`, which keys the vector cache: change it whenever a
# change here would give any text a different vector.
VERSION = 1
DEFAULT_DIM = 512

# Calibrated, not guessed: `python benchmarks/statebench_eval.py` replays StateBench train
# through the write policy (rule 2, same subject, on) and takes, for rule 3 (cosine alone),
# the lowest cosine from which the false-supersession rate stays ≤ 0.005 in both the
# "key" view (subjects reused) and the "value" view (no subject to go by): 0.46. The
# possible band starts at the lowest swept cosine (0.30), where 3.5% of the facts added
# ask for review and 71% of the missed true supersessions are among them.
DEFAULT_SUPERSEDE_THRESHOLD = 0.46
DEFAULT_POSSIBLE_THRESHOLD = 0.30
# Recall's families (`ranking.newest_in_family`: the newest of related statements takes the best
# place they hold) start lower than the review band: on StateBench *train* (detect arm, without
# brutal_realistic, echoes demoted) key-view Current@1 is 0.864 / 0.873 / 0.873 / 0.871 at 0.30 /
# 0.27 / 0.24 / 0.22 and the value view 0.756 / 0.757 / 0.757 / 0.757, so the highest of the best,
# 0.27 (`python benchmarks/statebench_eval.py` prints the sweep). Two instructions on one matter
# written in other words ("Ship the feature by Friday" after "The feature will take 3 weeks") score
# 0.24-0.30.
FAMILY_THRESHOLD = 0.27
# The relevance floor: a fact is relevant to a question only when their cosine reaches it
# (recall's ranked layer, every agent path, `ask`'s effort gate). Calibrated, not guessed:
# `python benchmarks/relevance_calibration.py` puts each of the 84 stores made of three of the
# ADR dev set's nine projects in front of StateBench *train*'s off-topic questions (sales,
# procurement, hr, support) and of the records' own problem statements; 0.28 is the lowest
# cosine (0.01 steps) at which no store hands a fact to more than 5% of the off-topic
# questions (mean 2.9%), while 99.2% of problem statements still find their own record in
# the top 5. Checked on StateBench dev's questions: worst store 7.4%, mean 4.0%.
RELEVANCE_FLOOR = 0.28
# (mean, sd) of the cosine between a question and facts it is not about, and the spread past
# their expected maximum a best fact must reach (neo_git.relevance): StateBench train's business
# questions against the decision records of ADR dev, `python benchmarks/relevance_eval.py
# --calibrate` (the lowest spread keeping every store group within 4% off-topic).
NOISE_COSINE = (0.050, 0.054, 1.35)

WORD_WEIGHT = 1.0
IDENT_WEIGHT = 0.8      # the whole multi-part identifier, on top of its parts
NGRAM_WEIGHT = 0.25     # each character 3-gram
SUBJECT_WEIGHT = 0.75   # each first-line word, repeated in its own namespace

# Memoised words/features per embedder before starting afresh (~25 MB of Python objects at
# 50,000). Most features of a large store are identifiers met once, so a larger memo buys no
# speed: at 300,000 a store's first embedding of 50,000 facts held 90 MB of them, and embedded
# them no faster (issue 35's bounded memory). The vectors are the same either way.
MAX_MEMO_FEATURES = 50_000

STOPWORDS = frozenset("""
a an and are as at be been being but by can could did do does doing for from
had has have having he her here hers him his how i if in into is it its itself
just me more most my of on once only or our ours out over own same she should
so some such than that the their theirs them then there these they this those
through to too under until up very was we were what when where which while who
whom why will with would you your yours all any both each few other also
via per
""".split())  # negations (no, not, never, without) are kept: they flip a rule's meaning

# A word: letters/digits/underscore runs joined by . - / : (dotted paths, kebab-case, urls).
_WORD = re.compile(r"\w+(?:[.\-/:]\w+)*", re.UNICODE)
# camelCase / PascalCase / acronym / digit boundaries inside one part.
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+(?:\.\d+)?|[^\W\d_]+", re.UNICODE)
_SEPARATORS = re.compile(r"[._\-/:]+")


def split_identifier(token: str) -> list[str]:
    """`parseHTTPConfig_v2` -> ["parse", "http", "config", "v", "2"] (lower-cased parts)."""
    parts: list[str] = []
    for chunk in _SEPARATORS.split(token):
        if not chunk:
            continue
        pieces = _CAMEL.findall(chunk) if chunk.isascii() else [chunk]
        parts.extend(p.lower() for p in pieces if p)
    return parts


def stem(word: str) -> str:
    """Light suffix stripping (plural -s, -ing, -ed, final -e) so "cache"/"caches"/"caching"/"cached" meet."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    else:
        for suffix in ("ing", "ed"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                    word = word[:-1]  # stopped -> stop, running -> run
                break
    if len(word) >= 4 and word.endswith("e") and word != "note":
        word = word[:-1]  # cache/caches -> cach, like caching/cached
    return word


def tokens(text: str) -> list[str]:
    """The word features of *text*: split, lower-cased, stemmed, stopwords dropped."""
    out: list[str] = []
    for raw in _WORD.findall(text):
        for part in split_identifier(raw):
            if part not in STOPWORDS:
                out.append(stem(part))
    return out


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    digest = int.from_bytes(blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")
    return digest % dim, (1.0 if (digest >> 63) & 1 else -1.0)


def _word_features(raw: str) -> tuple[str, ...]:
    """The feature names one raw word contributes to the body block."""
    parts = [stem(p) for p in split_identifier(raw) if p not in STOPWORDS]
    names = ["w:" + part for part in parts]
    if len(parts) > 1:
        names.append("i:" + "_".join(parts))
    return tuple(names)


class HashEmbedder:
    """Deterministic, dependency-free text embedder (feature hashing)."""

    def __init__(
        self,
        dim: int = DEFAULT_DIM,
        supersede_threshold: float = DEFAULT_SUPERSEDE_THRESHOLD,
        *,
        possible_threshold: float = DEFAULT_POSSIBLE_THRESHOLD,
        relevance_floor: float = RELEVANCE_FLOOR,
        ngram_weight: float = NGRAM_WEIGHT,
        ident_weight: float = IDENT_WEIGHT,
        subject_weight: float = SUBJECT_WEIGHT,
    ) -> None:
        if dim < 16:
            raise ValueError("dim must be at least 16")
        self.dim = dim
        self.supersede_threshold = supersede_threshold
        self.possible_threshold = min(possible_threshold, supersede_threshold)  # the review band below it
        self.relevance_floor = relevance_floor
        self.noise_cosine = NOISE_COSINE   # recall's relevance decision (neo_git.relevance)
        self.family_threshold = min(FAMILY_THRESHOLD, self.possible_threshold)
        self.relevance_source = ("calibrated: benchmarks/relevance_calibration.py (ADR dev stores, "
                                 "StateBench train questions)") if relevance_floor == RELEVANCE_FLOOR else "given"
        self.weights = {"w": WORD_WEIGHT, "i": ident_weight, "g": ngram_weight, "s": subject_weight}
        self.id = f"hash-v{VERSION}-{dim}"
        if (ngram_weight, ident_weight, subject_weight) != (NGRAM_WEIGHT, IDENT_WEIGHT, SUBJECT_WEIGHT):
            # Other weights, other vector space: never share cached vectors with the default.
            tag = blake2b(repr(sorted(self.weights.items())).encode(), digest_size=4).hexdigest()
            self.id += f"-{tag}"
        # Words and features repeat a lot across facts, so each raw word's feature
        # names and each feature's hashed entries are computed once per embedder.
        # Features are numbered; their (bucket, signed weight) entries sit in a
        # CSR-like table that `embed` expands with numpy instead of Python loops.
        self._raw_cache: dict[str, tuple[str, ...]] = {}
        self._feature_ids: dict[str, int] = {}
        self._entry_starts: list[int] = [0]
        self._entry_buckets: list[int] = []
        self._entry_values: list[float] = []
        # numpy copies of the three lists; new features extend them in place (doubling
        # capacity), so a long-lived process pays for each new word once, not per call.
        self._arrays: list[np.ndarray] | None = None
        self._synced = (0, 0)  # (starts, entries) already copied into the arrays

    def _forget(self) -> None:
        """Drop the memoised features (they are recomputed identically on demand)."""
        self._raw_cache.clear()
        self._feature_ids.clear()
        self._entry_starts[:] = [0]
        self._entry_buckets.clear()
        self._entry_values.clear()
        self._arrays = None
        self._synced = (0, 0)

    def __repr__(self) -> str:
        return f"HashEmbedder(id={self.id!r}, supersede_threshold={self.supersede_threshold})"

    # -- features -------------------------------------------------------------

    def _raw_features(self, raw: str) -> tuple[str, ...]:
        names = self._raw_cache.get(raw)
        if names is None:
            names = _word_features(raw)
            if len(self._raw_cache) < MAX_MEMO_FEATURES:
                self._raw_cache[raw] = names
        return names

    def _feature_id(self, name: str) -> int:
        """Number of a feature name, hashing it (and its 3-grams, for words) the first time."""
        fid = self._feature_ids.get(name)
        if fid is not None:
            return fid
        weight = self.weights[name[0]]
        index, sign = _bucket(name, self.dim)
        self._entry_buckets.append(index)
        self._entry_values.append(sign * weight)
        if name.startswith("w:") and self.weights["g"]:
            padded = f"<{name[2:]}>"
            if len(padded) > 4:
                g = self.weights["g"]
                for i in range(len(padded) - 2):
                    index, sign = _bucket("g:" + padded[i:i + 3], self.dim)
                    self._entry_buckets.append(index)
                    self._entry_values.append(sign * g)
        self._entry_starts.append(len(self._entry_buckets))
        fid = self._feature_ids[name] = len(self._feature_ids)
        return fid

    def _features(self, text: str) -> dict[str, int]:
        """Feature name -> count for one text."""
        counts: dict[str, int] = {}
        for raw in _WORD.findall(text):
            for name in self._raw_features(raw):
                counts[name] = counts.get(name, 0) + 1
        first, newline, _rest = text.partition("\n")
        if newline and self.weights["s"]:
            for raw in _WORD.findall(first):
                for name in self._raw_features(raw):
                    if name[0] == "w":
                        counts["s:" + name[2:]] = 1
        return counts

    def _table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The entry table as numpy arrays, extended with the features added since last call."""
        import numpy as np

        done_starts, done_entries = self._synced
        lists: tuple[Sequence[float], ...] = (self._entry_starts, self._entry_buckets, self._entry_values)
        if self._arrays is None:
            self._arrays = [np.empty(64, np.int64), np.empty(64, np.int64), np.empty(64, np.float64)]
        for k, (values, done) in enumerate(zip(lists, (done_starts, done_entries, done_entries))):
            array = self._arrays[k]
            if len(values) > len(array):
                grown = np.empty(max(len(values), 2 * len(array)), array.dtype)
                grown[:done] = array[:done]
                array = self._arrays[k] = grown
            if len(values) > done:
                array[done:len(values)] = values[done:]
        self._synced = (len(self._entry_starts), len(self._entry_buckets))
        starts, buckets, weights = self._arrays
        return starts[:self._synced[0]], buckets[:self._synced[1]], weights[:self._synced[1]]

    # -- public ---------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for *texts*: shape (n, dim), float32, rows L2-normalised (zero for empty text)."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if len(self._feature_ids) > MAX_MEMO_FEATURES:
            self._forget()  # a long-lived process must not grow without bound
        n = len(texts)
        text_of: list[int] = []
        feature_of: list[int] = []
        tf_of: list[float] = []
        log = math.log
        for r, text in enumerate(texts):
            for name, count in self._features(text).items():
                text_of.append(r)
                feature_of.append(self._feature_id(name))
                tf_of.append(1.0 + log(count))  # sublinear tf
        out: np.ndarray = np.zeros(n * self.dim, dtype=np.float64)
        if feature_of:
            starts, buckets, values = self._table()
            fids = np.asarray(feature_of, dtype=np.int64)
            lengths = starts[fids + 1] - starts[fids]
            total = int(lengths.sum())
            # Positions of every entry of every (text, feature) pair in the entry table.
            offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            positions = np.repeat(starts[fids], lengths) + offsets
            rows = np.repeat(np.asarray(text_of, dtype=np.int64), lengths)
            weights = values[positions] * np.repeat(np.asarray(tf_of, dtype=np.float64), lengths)
            out = np.bincount(rows * self.dim + buckets[positions], weights=weights, minlength=n * self.dim)
        out = out.reshape(n, self.dim)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out.astype(np.float32)
