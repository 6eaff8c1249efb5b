"""Lazy, cached tree-sitter grammars, parsers and compiled queries, one per language.

tree_sitter and the grammar wheels are imported inside these functions only, so
importing neo_git (and starting the CLI) never pays for them.
"""
from __future__ import annotations

import functools
import importlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.health.languages import language_spec

if TYPE_CHECKING:
    import tree_sitter

_local = threading.local()  # a Parser must not be shared between threads


@functools.cache
def grammar(name: str) -> "tree_sitter.Language":
    """The tree-sitter Language for a registry name (loaded once)."""
    import tree_sitter

    spec = language_spec(name)
    module = importlib.import_module(spec.grammar_module)
    return tree_sitter.Language(getattr(module, spec.grammar_function)())


@functools.cache
def query(name: str) -> "tree_sitter.Query":
    """The language's health query (its `.scm` file), compiled once."""
    import tree_sitter

    spec = language_spec(name)
    # next to languages/__init__.py (importlib.resources would cost the guard ~7 ms of imports)
    text = (Path(__file__).resolve().parent / "languages" / spec.query_file).read_text("utf-8")
    return tree_sitter.Query(grammar(name), text)


def parser(name: str) -> "tree_sitter.Parser":
    """A Parser for the language, cached per thread."""
    parsers = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    found = parsers.get(name)
    if found is None:
        import tree_sitter

        found = parsers[name] = tree_sitter.Parser(grammar(name))
    return found


def parse(name: str, source: bytes) -> "tree_sitter.Tree":
    """Parse `source` (any bytes; tree-sitter recovers from errors) as language `name`."""
    return parser(name).parse(source)
