"""Which symbol query each language uses, and how a file name picks a language.

The queries (`<lang>.symbols.scm`) sit beside the health engine's own queries in
`neo_git/health/languages/` and use its grammars; their capture names are the contract
with `symbols.py` (documented in `python.symbols.scm`). Nothing here imports tree_sitter.
"""
from __future__ import annotations

import functools
from importlib import resources
from typing import TYPE_CHECKING

from neo_git.health.languages import EXTENSIONS

if TYPE_CHECKING:  # pragma: no cover
    import tree_sitter

# Every language the health engine parses; TSX shares TypeScript's node types.
SYMBOL_QUERIES: dict[str, str] = {
    "python": "python.symbols.scm",
    "javascript": "javascript.symbols.scm",
    "typescript": "typescript.symbols.scm",
    "tsx": "typescript.symbols.scm",
    "go": "go.symbols.scm",
    "rust": "rust.symbols.scm",
    "java": "java.symbols.scm",
}


def language_of(path: str) -> str | None:
    """The registry language of a file name (by extension), or None when symbols cannot be read."""
    import posixpath

    language = EXTENSIONS.get(posixpath.splitext(path)[1].lower())
    return language if language in SYMBOL_QUERIES else None


def supported_extensions() -> str:
    """`.py, .js, …` for messages."""
    return ", ".join(sorted(ext for ext, lang in EXTENSIONS.items() if lang in SYMBOL_QUERIES))


@functools.cache
def symbol_query(language: str) -> tree_sitter.Query:
    """The compiled symbol query of *language* (once per process)."""
    import tree_sitter

    from neo_git.health.parsing import grammar

    text = resources.files("neo_git.health.languages").joinpath(SYMBOL_QUERIES[language]).read_text("utf-8")
    return tree_sitter.Query(grammar(language), text)
