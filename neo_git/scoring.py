"""How much a fact is worth: the scores the write policy, recall and upkeep share.

A leaf module (facts only), so the store and recall both import it and neither
imports the other for a formula.
"""
from __future__ import annotations

import math

from neo_git.facts import Fact


def success_bonus(success_count: int) -> float:
    """min(0.2, 0.1·log2(n+1)): proven advice ranks higher, with a ceiling."""
    return min(0.2, 0.1 * math.log2(max(0, success_count) + 1))


def retention_score(fact: Fact) -> float:
    """How much a fact is worth keeping when a scope is over its cap."""
    return fact.metadata.confidence * (1 + success_bonus(fact.metadata.success_count))
