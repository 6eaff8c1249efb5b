"""Lazy, cached tree-sitter grammars, parsers and compiled queries, one per language.

tree_sitter and the grammar wheels are imported inside these functions only, so
importing neo_git (and starting the CLI) never pays for them.
"""
from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.health.languages import language_spec

if TYPE_CHECKING:
    import tree_sitter

_local = threading.local()  # a Parser must not be shared between threads


@functools.cache
def grammar(name: str) -> tree_sitter.Language:
    """The tree-sitter Language for a registry name (loaded once)."""
    import tree_sitter

    spec = language_spec(name)
    module = _grammar_binding(spec.grammar_module)
    return tree_sitter.Language(getattr(module, spec.grammar_function)())


def _grammar_binding(package: str):
    """The grammar wheel's compiled `<package>._binding`, where its language functions live,
    loaded without running the package's `__init__`: that imports importlib.resources (and with
    it tempfile, shutil, zipfile...: ~4 % of a pre-commit guard's run) for query files git-neo
    never reads. A package laid out otherwise is imported as usual."""
    import importlib.machinery
    import importlib.util
    import sys

    name = f"{package}._binding"
    if name in sys.modules:
        return sys.modules[name]
    found = importlib.util.find_spec(package)   # finds the package; runs nothing of it
    locations = found.submodule_search_locations if found is not None else None
    binding = importlib.machinery.PathFinder.find_spec(name, list(locations)) if locations else None
    if binding is None or not isinstance(binding.loader, importlib.machinery.ExtensionFileLoader):
        return importlib.import_module(package)
    module = importlib.util.module_from_spec(binding)
    binding.loader.exec_module(module)
    sys.modules[name] = module   # an `import <package>` later finds its `_binding` loaded
    return module


@functools.cache
def query(name: str) -> tree_sitter.Query:
    """The language's health query (its `.scm` file), compiled once."""
    import tree_sitter

    spec = language_spec(name)
    # next to languages/__init__.py (importlib.resources would cost the guard ~7 ms of imports)
    text = (Path(__file__).resolve().parent / "languages" / spec.query_file).read_text("utf-8")
    return tree_sitter.Query(grammar(name), text)


def parser(name: str) -> tree_sitter.Parser:
    """A Parser for the language, cached per thread."""
    parsers = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    found = parsers.get(name)
    if found is None:
        import tree_sitter

        found = parsers[name] = tree_sitter.Parser(grammar(name))
    return found


def parse(name: str, source: bytes) -> tree_sitter.Tree:
    """Parse `source` (any bytes; tree-sitter recovers from errors) as language `name`."""
    return parser(name).parse(source)
