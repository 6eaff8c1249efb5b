"""Difficulty and reasoning effort: memory decides how hard the model must think.

Difficulty (input size and keywords, matched on word boundaries so "dp" never
matches "endpoint"). Points:
    +2 per distinct HARD word, +1 per distinct MEDIUM word (at most 2 from these),
    −1 per distinct EASY word (only when no HARD word matched),
    +1 when question + included files exceed 1,500 tokens, +2 when they exceed 6,000
    (tokens ≈ characters / 4).
    easy: ≤ 1 point · medium: 2–3 · hard: ≥ 4. Time budget: 30 / 60 / 120 s.

Effort from memory. A fact is *relevant* ("memory knows this") when recall returned it in its
ranked layer: recall's relevance decision (`neo_git.relevance`, the same for MCP and the agent
hooks; `git config neo.relevanceFloor` replaces it by a fixed cosine). Constraints are always sent and do not count;
confidence plays no part in relevance (a relevant fact of low confidence is still known).
    no relevant fact                                   → high (xhigh when hard)
    ≥ 3 relevant facts, mean confidence ≥ 0.8          → low (the question is *familiar*)
    anything else                                      → medium
Then capped by `--effort` or `git config neo.maxEffort` (the lower of the two wins).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from neo_git.ask.model import EFFORTS, EffortDecision, effort_rank

RELEVANT_SCORE = 0.28   # only when no floor is given: the built-in embedder's (embed/hashing.py)
FAMILIAR_FACTS = 3
FAMILIAR_CONFIDENCE = 0.8
TIME_BUDGET = {"easy": 30, "medium": 60, "hard": 120}
LARGE_INPUT_TOKENS = 1500
HUGE_INPUT_TOKENS = 6000

HARD_WORDS = (
    "race", "race condition", "deadlock", "concurrency", "concurrent", "thread-safe", "lock-free",
    "distributed", "consensus", "consistency", "transaction", "transactions", "migration", "migrate",
    "redesign", "architecture", "security", "vulnerability", "exploit", "cryptography", "encryption",
    "performance", "optimize", "optimise", "algorithm", "dp", "dynamic programming", "complexity",
    "scalability", "memory leak", "invariant", "proof", "parallel", "async", "asynchronous",
)
MEDIUM_WORDS = (
    "bug", "fix", "error", "exception", "fail", "fails", "failing", "crash", "retry", "retries",
    "timeout", "refactor", "why", "slow", "test", "tests", "cache", "design", "implement",
)
EASY_WORDS = (
    "typo", "rename", "docstring", "comment", "spelling", "format", "formatting", "lint",
    "what is", "where is", "which file", "how do i run",
)


def _pattern(words: Iterable[str]) -> re.Pattern[str]:
    # Word boundaries on both sides (letters, digits, underscore): "dp" ≠ "endpoint", "fix" ≠ "prefix".
    alternatives = "|".join(sorted((re.escape(w).replace(r"\ ", r"\s+") for w in words), key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)


_HARD, _MEDIUM, _EASY = _pattern(HARD_WORDS), _pattern(MEDIUM_WORDS), _pattern(EASY_WORDS)


def matched_words(pattern: re.Pattern[str], text: str) -> set[str]:
    """The distinct words of *pattern* found in *text* (lower case, spaces normalised)."""
    return {" ".join(m.group(0).lower().split()) for m in pattern.finditer(text)}


def difficulty(question: str, context_chars: int = 0) -> tuple[str, int, dict]:
    """(easy|medium|hard, points, the words and size that counted)."""
    hard = matched_words(_HARD, question)
    medium = matched_words(_MEDIUM, question)
    easy = matched_words(_EASY, question) if not hard else set()
    tokens = (len(question) + context_chars) // 4
    points = 2 * len(hard) + min(2, len(medium)) - len(easy)
    points += 2 if tokens > HUGE_INPUT_TOKENS else 1 if tokens > LARGE_INPUT_TOKENS else 0
    level = "hard" if points >= 4 else "medium" if points >= 2 else "easy"
    return level, points, {"hard": sorted(hard), "medium": sorted(medium), "easy": sorted(easy),
                           "input_tokens": tokens}


def relevant_confidences(scored: Sequence[tuple[float, float]], threshold: float = RELEVANT_SCORE) -> list[float]:
    """Confidences of the relevant facts among (cosine to the question, confidence) pairs."""
    return [conf for score, conf in scored if score >= threshold]


def lower_effort(a: str | None, b: str | None) -> str | None:
    """The lower of two efforts (None means no cap)."""
    known = [e for e in (a, b) if e]
    return min(known, key=effort_rank) if known else None


def check_effort(value: str | None, what: str) -> str | None:
    """*value* if it is an effort name (or None); NeoError listing the valid names otherwise."""
    if value is None or value == "":
        return None
    text = str(value).strip().lower()
    if text not in EFFORTS:
        from neo_git.errors import NeoError

        raise NeoError(f"unknown effort '{value}' in {what}", "use one of: " + ", ".join(EFFORTS))
    return text


def decide(question: str, scored: Sequence[tuple[float, float]], *, context_chars: int = 0,
           cap: str | None = None, relevant_score: float = RELEVANT_SCORE) -> EffortDecision:
    """Difficulty, time budget and effort for *question*, given the (cosine to the question,
    confidence) of each ranked fact recall returned; *relevant_score* is the relevance floor."""
    level, points, words = difficulty(question, context_chars)
    confidences = relevant_confidences(scored, relevant_score)
    mean = sum(confidences) / len(confidences) if confidences else 0.0
    # round: (1.0 + 0.9 + 0.5) / 3 is 0.7999… in floating point, and 0.8 is meant to count
    familiar = len(confidences) >= FAMILIAR_FACTS and round(mean, 9) >= FAMILIAR_CONFIDENCE
    if not confidences:
        memory = "xhigh" if level == "hard" else "high"
        why = "no relevant fact in memory"
    elif familiar:
        memory = "low"
        why = f"{len(confidences)} relevant facts, mean confidence {mean:.2f}"
    else:
        memory = "medium"
        why = f"{len(confidences)} relevant fact(s), mean confidence {mean:.2f}"
    effort = memory if cap is None or effort_rank(memory) <= effort_rank(cap) else cap
    if effort != memory:
        why += f"; capped at {cap}"
    found = ", ".join(words["hard"] + words["medium"]) or "no keywords"
    return EffortDecision(difficulty=level, time_budget=TIME_BUDGET[level], effort=effort, memory_effort=memory,
                          relevant=len(confidences), mean_confidence=round(mean, 4), familiar=familiar, cap=cap,
                          reason=f"{why}; {level} ({points} points: {found}, ~{words['input_tokens']} tokens)")
