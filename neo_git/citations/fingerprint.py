"""Fingerprints of cited code that ignore whitespace and comments.

A fingerprint is the first 16 hex digits of the SHA-256 of a token stream. For a language the
health engine parses, the stream is the syntax tree written out: each inner node as its type
with an open and a close mark, each leaf as its text (whitespace inside it folded to one
space), nodes the language's symbol query marks `@ignore` (comments, line continuations)
left out, and a comma just before a closing bracket dropped (formatters add and remove
trailing commas). So re-indenting, re-wrapping, re-commenting or reformatting code keeps its
fingerprint, while moving a statement out of a block (same tokens, other tree) changes it. The
cited symbol's own name is written as a placeholder: the same code under another name is the
same code, and verification reports it as moved.

Anything else (an unsupported language, a line span) is a flat stream: the tokens in order,
with the line each starts on.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import tree_sitter

OPEN, CLOSE, NAME = b"\x01", b"\x02", b"\x03"
_SPACE = re.compile(rb"\s+")
_CLOSERS = frozenset({b")", b"]", b"}"})
_WORDS = re.compile(rb"\S+")


def digest(tokens: Iterable[bytes]) -> str:
    """The fingerprint of a token stream: 16 hex digits."""
    h = hashlib.sha256()
    for token in tokens:
        h.update(token)
        h.update(b"\x00")
    return h.hexdigest()[:16]


def _leaf_text(node: tree_sitter.Node) -> bytes:
    text = node.text or b""
    if not text.strip():
        return b""
    return _SPACE.sub(b" ", text.strip()) if _SPACE.search(text) else text


def marked_tokens(node: tree_sitter.Node, ignore: frozenset[int] | set[int], marks: frozenset[int] | set[int]
                  ) -> tuple[list[bytes], dict[int, tuple[int, int]]]:
    """The structural token stream of *node*'s subtree (ids in *ignore* skipped; trailing commas
    not yet dropped) and, for each node id in *marks*, the [start, end) slice of the stream its
    subtree wrote: a file's symbols are slices of the file's own stream, walked once."""
    out: list[bytes] = []
    spans: dict[int, tuple[int, int]] = {}
    starts: dict[int, int] = {}
    cursor = node.walk()
    depth = 0
    while True:
        current = cursor.node
        assert current is not None   # a cursor over a node is always on one
        nid = current.id
        if nid in marks:
            starts[nid] = len(out)
        if nid in ignore:
            pass
        elif current.child_count == 0:
            text = _leaf_text(current)
            if text:
                out.append(text)
        else:
            out.append(OPEN + current.type.encode())
            if cursor.goto_first_child():
                depth += 1
                continue
            out.append(CLOSE)
        if nid in marks:
            spans[nid] = (starts[nid], len(out))
        while depth > 0 and not cursor.goto_next_sibling():
            cursor.goto_parent()
            depth -= 1
            out.append(CLOSE)
            above = cursor.node
            assert above is not None
            parent = above.id
            if parent in marks:
                spans[parent] = (starts[parent], len(out))
        if depth == 0:
            return out, spans


def symbol_digest(tokens: list[bytes], span: tuple[int, int], name: tuple[int, int] | None) -> list[bytes]:
    """The tokens of one symbol, cut from the file's stream, its name slice as the placeholder."""
    start, end = span
    if name is None or not start <= name[0] <= name[1] <= end:
        return without_trailing_commas(tokens[start:end])
    return without_trailing_commas([*tokens[start:name[0]], NAME, *tokens[name[1]:end]])


def without_trailing_commas(tokens: list[bytes]) -> list[bytes]:
    """*tokens* without a comma just before a closing bracket (formatters add and remove them)."""
    drop = [i for i in range(len(tokens) - 1) if tokens[i] == b"," and tokens[i + 1] in _CLOSERS]
    for i in reversed(drop):
        del tokens[i]
    return tokens


def leaf_tokens(root: tree_sitter.Node, ignore: frozenset[int] | set[int]) -> list[tuple[int, bytes]]:
    """(1-based line, token) of every leaf of *root*, ignored subtrees left out (for line spans)."""
    out: list[tuple[int, bytes]] = []
    cursor = root.walk()
    depth = 0
    while True:
        current = cursor.node
        assert current is not None   # a cursor over a node is always on one
        if current.id in ignore:
            pass
        elif current.child_count == 0:
            text = _leaf_text(current)
            if text:
                out.append((current.start_point[0] + 1, text))
        elif cursor.goto_first_child():
            depth += 1
            continue
        while depth > 0 and not cursor.goto_next_sibling():
            cursor.goto_parent()
            depth -= 1
        if depth == 0:
            return _flat_without_trailing_commas(out)


def _flat_without_trailing_commas(tokens: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    return [t for i, t in enumerate(tokens)
            if not (t[1] == b"," and i + 1 < len(tokens) and tokens[i + 1][1] in _CLOSERS)]


def text_tokens(data: bytes) -> list[tuple[int, bytes]]:
    """(1-based line, word) of plain text: whitespace-separated words (comments are not known)."""
    return [(number, word) for number, line in enumerate(data.split(b"\n"), 1) for word in _WORDS.findall(line)]


def span_digest(tokens: Sequence[tuple[int, bytes]], start: int, end: int) -> tuple[str, int]:
    """(fingerprint, token count) of the tokens that start on lines *start*..*end*."""
    chosen = [t for line, t in tokens if start <= line <= end]
    return digest(chosen), len(chosen)


def find_span(tokens: Sequence[tuple[int, bytes]], fingerprint: str, size: int,
              near: int = 1) -> tuple[int, int] | None:
    """The lines of a run of *size* tokens with *fingerprint*, starting at the first token of a
    line (the one nearest line *near* when several match), or None."""
    if size <= 0 or size > len(tokens):
        return None
    words = [t for _, t in tokens]
    found: list[tuple[int, int]] = []
    previous_line = None
    for i, (line, _) in enumerate(tokens):
        if line == previous_line:
            continue
        previous_line = line
        if i + size > len(tokens):
            break
        if digest(words[i:i + size]) == fingerprint:
            found.append((line, tokens[i + size - 1][0]))
    if not found:
        return None
    return min(found, key=lambda span: (abs(span[0] - near), span[0]))
