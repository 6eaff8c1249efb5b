"""The values of the pattern library: a parsed `Pattern`, a validation `PatternProblem`,
and a search `PatternHit`. Standard library only."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

# The sections every pattern must have, in the order a reader expects them.
REQUIRED_SECTIONS = ("Intent", "Forces", "Solution", "Consequences", "References")
MAX_LINES = 300
# A 300-line file is a few kilobytes; the byte cap stops a huge one-line file
# from being read whole before the line count could reject it.
MAX_BYTES = 64 * 1024
AUTHOR_LINE = "Author:"
TITLE_PREFIX = "# Pattern:"

SHIPPED = "shipped"
PROJECT = "project"


class PatternProblem(NamedTuple):
    """One thing wrong with one pattern file: where (path, 1-based line or None) and what."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Pattern:
    """One valid pattern: `id` is `<domain>/<name>`, `sections` maps heading -> text in file order.

    Patterns are memoised per file, so treat `sections` as read-only (it is a plain dict
    so that it serialises with `json.dumps` as it is)."""

    id: str
    name: str
    domain: str
    author: str
    sections: dict[str, str] = field(hash=False)
    path: Path
    source: str = SHIPPED          # "shipped" (in the wheel) or "project" (.neo/construct/)
    tags: tuple[str, ...] = ()
    text: str = field(default="", repr=False, compare=False)  # the whole file, for `show`

    @property
    def intent(self) -> str:
        """The Intent section (every valid pattern has one)."""
        return self.sections.get("Intent", "")

    @property
    def summary(self) -> str:
        """The first sentence of the Intent, on one line."""
        flat = " ".join(self.intent.split())
        end = flat.find(". ")
        return flat if end < 0 else flat[:end + 1]

    def to_dict(self, *, full: bool = True) -> dict[str, Any]:
        """JSON-ready fields; *full* adds the sections."""
        out: dict[str, Any] = {"id": self.id, "name": self.name, "domain": self.domain,
                               "author": self.author, "tags": list(self.tags), "source": self.source,
                               "path": str(self.path), "summary": self.summary}
        if full:
            out["sections"] = dict(self.sections)
        return out


@dataclass(frozen=True)
class PatternHit:
    """A search result: the pattern and its blended score (higher is better)."""

    pattern: Pattern
    score: float
    semantic: float = 0.0   # cosine of query and pattern under the active embedder
    lexical: float = 0.0    # BM25 of the query words, scaled to [0, 1]

    @property
    def id(self) -> str:
        """The pattern's id."""
        return self.pattern.id

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: scores plus the pattern's fields (without the sections)."""
        return {"score": round(self.score, 4), "semantic": round(self.semantic, 4),
                "lexical": round(self.lexical, 4), **self.pattern.to_dict(full=False)}
