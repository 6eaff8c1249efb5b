"""How much a fact is worth: the scores the write policy, recall and upkeep share.

A leaf module (facts only), so the store and recall both import it and neither
imports the other for a formula.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

from neo_git.facts import Fact

# Statement-sized texts: the lengths the embedders' cosine thresholds were calibrated on (StateBench
# facts are at most 25 words). Between longer texts (decision records, design docs) cosine mostly
# measures shared project vocabulary, so neither the write policy (rule 3 retires nothing, asks only
# with evidence) nor recall (related facts are not reordered newest first) trusts it there.
CALIBRATED_WORDS = 40
_WORDS = re.compile(r"\w+", re.UNICODE)


@lru_cache(maxsize=1 << 14)
def word_count(text: str) -> int:
    """Number of words (runs of letters, digits, underscores) in *text*."""
    return len(_WORDS.findall(text))


def statement_sized(text: str) -> bool:
    """Is *text* within the calibrated lengths (at most CALIBRATED_WORDS words)?"""
    return word_count(text) <= CALIBRATED_WORDS


def success_bonus(success_count: int) -> float:
    """min(0.2, 0.1·log2(n+1)): proven advice ranks higher, with a ceiling."""
    return min(0.2, 0.1 * math.log2(max(0, success_count) + 1))


def retention_score(fact: Fact) -> float:
    """How much a fact is worth keeping when a scope is over its cap."""
    return fact.metadata.confidence * (1 + success_bonus(fact.metadata.success_count))
