"""The symbols of one file: every function, method and class a citation can name, with its
lines and fingerprint, read with the health engine's grammars and the language's symbol query.

Names are qualified by the definitions around them (`Config.load`, `outer.inner`; Go methods
by their receiver, Rust methods by their `impl`). Definitions sharing a qualified name (a
Python property and its setter, TypeScript or Java overloads) are one symbol: its lines run
from the first to the last and its fingerprint covers all of them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from neo_git.citations.fingerprint import (
    digest,
    leaf_tokens,
    marked_tokens,
    symbol_digest,
    text_tokens,
    without_trailing_commas,
)

if TYPE_CHECKING:  # pragma: no cover
    import tree_sitter


class Symbol(NamedTuple):
    """One citable symbol of a file."""

    name: str          # qualified: Class.method
    start: int         # first line, 1-based
    end: int           # last line
    fingerprint: str


class FileCode(NamedTuple):
    """What verification needs to know about one blob."""

    fingerprint: str                 # the whole file
    symbols: dict[str, Symbol]       # by qualified name (empty for unsupported languages)


class _Definition(NamedTuple):
    start: int
    end: int
    name: str
    citable: bool
    node: tree_sitter.Node
    name_id: int


def _text(node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _parse(language: str, source: bytes):
    """(tree root, definitions, ids of ignored nodes)."""
    from tree_sitter import QueryCursor

    from neo_git.citations.languages import symbol_query
    from neo_git.health.parsing import parse

    root = parse(language, source).root_node
    ignore: set[int] = set()
    by_name: dict[int, _Definition] = {}
    for _pattern, captures in QueryCursor(symbol_query(language)).matches(root):
        for node in captures.get("ignore", ()):
            ignore.add(node.id)
        kind = "definition" if "definition" in captures else "container" if "container" in captures else None
        if kind is None or not captures.get("name"):
            continue
        node, name = captures[kind][0], captures["name"][0]
        label = _text(name)
        qualifier = captures.get("qualifier")
        if qualifier:
            label = f"{_text(qualifier[0])}.{label}"
        known = by_name.get(name.id)
        # A decorated definition matches twice (with and without its decorators): keep the wider.
        if known is None or node.end_byte - node.start_byte > known.end - known.start:
            by_name[name.id] = _Definition(node.start_byte, node.end_byte, label, kind == "definition", node, name.id)
    return root, sorted(by_name.values(), key=lambda d: (d.start, -d.end)), ignore


def read_code(language: str | None, source: bytes) -> FileCode:
    """The file's fingerprint and symbols (*language* None: plain text, no symbols)."""
    if language is None or b"\0" in source:
        return FileCode(plain_fingerprint(source), {})
    root, definitions, ignore = _parse(language, source)
    frozen = frozenset(ignore)
    marks = frozenset(d.node.id for d in definitions) | frozenset(d.name_id for d in definitions)
    stream, spans = marked_tokens(root, frozen, marks)
    stack: list[_Definition] = []
    grouped: dict[str, list[_Definition]] = {}
    for definition in definitions:
        while stack and stack[-1].end <= definition.start:
            stack.pop()
        name = ".".join([d.name for d in stack] + [definition.name])
        stack.append(definition)
        if definition.citable:
            grouped.setdefault(name, []).append(definition)
    symbols = {}
    for name, parts in grouped.items():
        tokens: list[bytes] = []
        for part in parts:
            if part.node.id in spans:
                tokens += symbol_digest(stream, spans[part.node.id], spans.get(part.name_id))
        symbols[name] = Symbol(name, parts[0].node.start_point[0] + 1, max(p.node.end_point[0] + 1 for p in parts),
                               digest(tokens))
    return FileCode(digest(without_trailing_commas(stream)), symbols)


def plain_fingerprint(source: bytes) -> str:
    """The fingerprint of a file no grammar reads: its words (binary content: its bytes)."""
    if b"\0" in source:
        return digest([source])
    return digest(t for _, t in text_tokens(source))


def line_tokens(language: str | None, source: bytes) -> list[tuple[int, bytes]]:
    """(line, token) of the whole file, for line-span citations."""
    if language is None or b"\0" in source:
        return text_tokens(source)
    root, _definitions, ignore = _parse(language, source)
    return leaf_tokens(root, frozenset(ignore))


def to_json(code: FileCode) -> dict:
    """Cache form."""
    return {"f": code.fingerprint, "s": [list(s) for s in code.symbols.values()]}


def from_json(data: dict) -> FileCode:
    """From the cache form (ValueError/KeyError/TypeError when it is not one)."""
    symbols = {}
    for name, start, end, fingerprint in data["s"]:
        symbols[str(name)] = Symbol(str(name), int(start), int(end), str(fingerprint))
    return FileCode(str(data["f"]), symbols)
