"""Is a fact relevant to a question? One decision for recall, `ask`, MCP and every agent hook.

Two questions, answered in order:

1. **Does memory know anything about this question?** (`known`) A store of N facts always has a
   best match, so its cosine means something only when it beats what chance gives the best of N
   unrelated facts. Between a question and facts it is not about, an embedder's cosines scatter
   around a mean `mu` with spread `sd` (its `Noise`, calibrated on questions of another domain
   against real decision records); the largest of N such values sits near
   mu + sd·√(2 ln N) (the extreme-value bound of N draws). The question is known when its best
   fact reaches mu + SPREAD·sd·√(2 ln N): a lone fact has to beat noise, a fact among 50,000 has
   to beat the luckiest of 50,000. One absolute floor could not do both: it dropped half the
   right answers of small stores (their questions are worded unlike their facts) to keep large
   stores silent off-topic. Words count too: a fact holding two of the question's words that no
   other fact has (RARE_SHARED in `store/term_index.py`) makes it known whatever the cosine
   (off-topic questions share such a pair with 0.5% of the ADR stores' records, problem statements
   with their own record 76% of the time, built-in embedder).
2. **Which facts, in which order?** When the question is known, a fact bears on it when its
   cosine is ALONE noise spreads above the noise mean, or it shares a word with the question (BM25 > 0), or it is
   the best fact's thread (`ranking.newest_in_family` reorders those); facts are ranked by a
   fused relevance: the cosine, with the BM25 score (IDF-weighted shared words,
   `neo_git.lexical`) mixed in at LEXICAL_SHARE of its weight, both scaled to the best of the
   question (`fuse`). Words find what a small embedder's vectors miss (a decision record's rare
   names and terms) and the cosine finds what shares no word.

`git neo recall --explain` prints the evidence (`Evidence`) for each returned fact, and for a
silent answer the best candidate held back and why.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

# How far past the noise's expected maximum the best fact must be (1: the bound itself), for an
# embedder that has not been calibrated; a calibrated one carries its own (`Noise.spread`).
SPREAD = 1.2
# The share of a fact's fused relevance that comes from its words (the rest from its cosine).
LEXICAL_SHARE = 0.4
# Once a question is known, a fact sharing none of its words bears on it when its cosine alone is
# this many noise spreads above the noise mean (about one unrelated fact in forty gets there).
ALONE = 2.0


@dataclass(frozen=True)
class Noise:
    """Cosines between a question and facts it is not about, under one embedder."""

    mean: float
    sd: float
    spread: float = SPREAD   # how far past the expected maximum of noise (calibrated per embedder)

    def known_threshold(self, facts: int) -> float:
        """The cosine the best of *facts* facts must reach for the question to be known."""
        return self.mean + self.spread * self.sd * math.sqrt(2.0 * math.log(max(facts, 2)))


@dataclass(frozen=True)
class Evidence:
    """Why one fact is (or is not) relevant: what `--explain` shows."""

    cosine: float
    bm25: float = 0.0
    terms: tuple[str, ...] = ()     # the question's words the fact holds
    fused: float = 0.0              # the relevance it is ranked by
    rank_cosine: int | None = None  # 1-based places by each signal alone
    rank_words: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The `--explain --json` object of one fact."""
        return {"cosine": round(self.cosine, 4), "bm25": round(self.bm25, 4), "terms": list(self.terms),
                "fused": round(self.fused, 4), "rank_cosine": self.rank_cosine, "rank_words": self.rank_words}


@dataclass(frozen=True)
class Decision:
    """The relevance decision for one question over recall's ranked pool."""

    known: bool
    threshold: float            # the cosine the best fact had to reach (`Noise.known_threshold`)
    best: int | None            # pool position of the best fact by cosine (None: empty pool)
    best_cosine: float
    relevance: np.ndarray     # fused relevance per pool fact (what ranking multiplies)
    keep: np.ndarray          # pool positions that bear on the question, when known
    bm25: Mapping[int, float] = field(default_factory=dict)   # pool position -> BM25 (sharing a word)
    override: float | None = None   # an absolute floor set by `neo.relevanceFloor` (then that decides)
    rare: Mapping[int, Sequence[str]] = field(default_factory=dict)   # position -> words only it holds

    def why_silent(self) -> str:
        """One line on why nothing was returned (for `--explain`)."""
        if self.best is None:
            return "no fact to rank"
        if self.override is not None:
            return f"the best fact's cosine {self.best_cosine:.3f} is below neo.relevanceFloor {self.override:.3f}"
        return (f"the best fact's cosine {self.best_cosine:.3f} is below {self.threshold:.3f}, what chance gives "
                f"the best of this many unrelated facts")


def fuse(cosines: np.ndarray, bm25: Mapping[int, float]) -> np.ndarray:
    """Cosine and BM25 as one relevance on the cosine's scale: (1−s)·cos + s·best_cos·bm25/best_bm25
    with s = LEXICAL_SHARE (cosines as they are where no fact shares a word)."""
    import numpy as np

    fused = np.array(cosines, dtype=np.float64, copy=True)
    if not bm25 or not len(fused):
        return fused
    top = max(bm25.values())
    if top <= 0:
        return fused
    scale = max(float(np.nanmax(fused)), 0.0)
    lexical = np.zeros(len(fused))
    for i, value in bm25.items():
        lexical[i] = value / top
    return (1.0 - LEXICAL_SHARE) * fused + LEXICAL_SHARE * scale * lexical


def decide(cosines: np.ndarray, bm25: Mapping[int, float], noise: Noise, facts: int,
           override: float | None = None, rare: Mapping[int, Sequence[str]] | None = None) -> Decision:
    """The decision for one question: *cosines* and *bm25* (pool position -> score, only facts
    sharing a word) over recall's ranked pool; *facts* how many facts the question was matched
    against; *override* an absolute cosine floor the user set (None: the decision above); *rare*
    the facts holding two or more of the question's words that no other fact has (pool position
    -> those words): such a fact makes the question known whatever its cosine."""
    import numpy as np

    cos = np.nan_to_num(np.asarray(cosines, dtype=np.float64), nan=-1.0)
    threshold = noise.known_threshold(facts) if override is None else override
    if not len(cos):
        return Decision(False, threshold, None, 0.0, cos, np.zeros(0, dtype=np.int64), {}, override)
    best = int(np.argmax(cos))
    best_cosine = float(cos[best])
    relevance = fuse(cos, bm25)
    if override is not None:
        keep = np.flatnonzero(cos >= override)
        return Decision(bool(len(keep)), threshold, best, best_cosine, relevance, keep, bm25, override)
    rare = dict(rare or {})
    known = best_cosine >= threshold or bool(rare)
    if not known:
        return Decision(False, threshold, best, best_cosine, relevance, np.zeros(0, dtype=np.int64), bm25,
                        rare=rare)
    bears = cos >= noise.mean + ALONE * noise.sd
    if bm25:
        bears[np.fromiter(bm25.keys(), dtype=np.int64, count=len(bm25))] = True
    return Decision(True, threshold, best, best_cosine, relevance, np.flatnonzero(bears), bm25, rare=rare)


def evidence(decision: Decision, cosines: np.ndarray, position: int, matched: Sequence[str],
             ranks: tuple[Mapping[int, int], Mapping[int, int]]) -> Evidence:
    """The evidence of the pool fact at *position* (*matched*: the question's words it holds)."""
    by_cosine, by_words = ranks
    return Evidence(cosine=float(cosines[position]), bm25=float(decision.bm25.get(position, 0.0)),
                    terms=tuple(matched), fused=float(decision.relevance[position]),
                    rank_cosine=by_cosine.get(position), rank_words=by_words.get(position))


@dataclass(frozen=True)
class Explanation:
    """Why recall returned what it did (`git neo recall --explain`)."""

    known: bool
    reason: str                                   # one line: the decision and what it rested on
    facts: Mapping[str, Evidence] = field(default_factory=dict)   # returned ranked fact id -> evidence
    held_back: Mapping[str, object] | None = None  # the best candidate not returned, and why

    def to_dict(self) -> dict[str, Any]:
        """The `recall --explain --json` object."""
        return {"known": self.known, "reason": self.reason,
                "facts": {fid: ev.to_dict() for fid, ev in self.facts.items()},
                "held_back": dict(self.held_back) if self.held_back is not None else None}


def explain(decision: Decision | None, cosines: np.ndarray, ids: Sequence[str], texts: Mapping[int, str],
            query: str, returned: Sequence[str], subject_of: Mapping[int, str]) -> Explanation:
    """The evidence for each *returned* fact of recall's ranked pool (*ids* by pool position,
    *texts* and *subject_of* the texts and subjects of the positions that may be shown), and for a
    silent answer the best candidate held back."""
    import numpy as np

    from neo_git.lexical import terms

    if decision is None:
        return Explanation(True, "no relevance decision: every fact counts as relevant")
    asked = set(terms(query))
    cos = np.nan_to_num(np.asarray(cosines, dtype=np.float64), nan=-1.0)
    by_cosine = {int(j): place + 1 for place, j in enumerate(np.argsort(-cos, kind="stable")[:100])}
    by_words = {j: place + 1 for place, (j, _) in enumerate(sorted(decision.bm25.items(), key=lambda p: -p[1])[:100])}
    at = {fid: j for j, fid in enumerate(ids)}
    facts = {}
    for fid in returned:
        j = at.get(fid)
        if j is not None:
            shared = sorted(asked & set(terms(texts.get(j, ""))))
            facts[fid] = evidence(decision, cos, j, shared, (by_cosine, by_words))
    if decision.override is not None:
        reason = f"neo.relevanceFloor {decision.override:.3f}: facts whose cosine reaches it"
    elif decision.known:
        why = [f"best cosine {decision.best_cosine:.3f} ≥ {decision.threshold:.3f} (chance's best of {len(ids)} facts)"] \
            if decision.best_cosine >= decision.threshold else []
        if decision.rare:
            words = sorted({w for found in decision.rare.values() for w in found})
            why.append(f"words only one fact holds: {', '.join(words[:6])}")
        reason = "memory knows this question: " + "; ".join(why)
    else:
        reason = "memory knows nothing about this question: " + decision.why_silent()
    held = None
    if not returned and decision.best is not None:
        j = decision.best
        held = {"id": ids[j], "subject": subject_of.get(j, ""), "cosine": round(decision.best_cosine, 4),
                "why": decision.why_silent() if not decision.known else "no room in the budget"}
    return Explanation(decision.known, reason, facts, held)
