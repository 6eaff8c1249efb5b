"""The language registry: which grammar wheel, query file and import reader each language uses.

Language specifics are data: the `.scm` query next to this file says which syntax
nodes are functions, control flow and imports; the small per-language modules turn
captured import nodes into ImportRefs where the capture alone is not enough.
Nothing here imports tree_sitter (the CLI imports this at start-up).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from neo_git.health.languages import java, python, rust
from neo_git.health.model import ImportRef

# (captures: capture name -> captured nodes, source bytes, deferred_at(byte offset) -> bool) -> ImportRefs
ImportReader = Callable[[dict, bytes, Callable[[int], bool]], "list[ImportRef]"]


class LanguageSpec(NamedTuple):
    """How to parse and query one language."""

    grammar_module: str            # the tree-sitter-<lang> wheel's module
    grammar_function: str          # its function returning the language pointer
    query_file: str                # .scm file in this package
    read_imports: ImportReader | None = None  # for `@import` captures; `@import.<kind>` needs none
    # Captured @function/@scope node types whose body runs after the module has loaded:
    # an import inside one is deferred. Empty where imports are declarations (Go, Rust, Java).
    deferring: frozenset[str] = frozenset()
    # (root node) -> what the query would capture, found without running it (faster where
    # everything that counts is a statement); None: run the query
    walk: Callable[[object], dict] | None = None


_PYTHON_DEFERRING = frozenset({"function_definition", "lambda"})
_JS_DEFERRING = frozenset({"function_declaration", "generator_function_declaration", "method_definition",
                           "arrow_function", "function_expression", "generator_function"})

LANGUAGES: dict[str, LanguageSpec] = {
    "python": LanguageSpec("tree_sitter_python", "language", "python.scm", python.read_imports, _PYTHON_DEFERRING,
                           python.walk),
    "javascript": LanguageSpec("tree_sitter_javascript", "language", "javascript.scm", None, _JS_DEFERRING),
    "typescript": LanguageSpec("tree_sitter_typescript", "language_typescript", "typescript.scm", None,
                               _JS_DEFERRING),
    "tsx": LanguageSpec("tree_sitter_typescript", "language_tsx", "typescript.scm", None, _JS_DEFERRING),
    "go": LanguageSpec("tree_sitter_go", "language", "go.scm"),
    "rust": LanguageSpec("tree_sitter_rust", "language", "rust.scm", rust.read_imports),
    "java": LanguageSpec("tree_sitter_java", "language", "java.scm", java.read_imports),
}

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}


class UnknownLanguageError(ValueError):
    """A language name that is not in the registry."""


def language_spec(name: str) -> LanguageSpec:
    """The registry entry for `name`; unknown names fail listing the valid ones."""
    try:
        return LANGUAGES[name]
    except KeyError:
        valid = ", ".join(sorted(LANGUAGES))
        raise UnknownLanguageError(f"unknown language {name!r} (known: {valid})") from None
