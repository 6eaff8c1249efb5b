"""Per-file code-health metrics: lines, functions, deepest nesting, raw imports.

One tree-sitter query per language (languages/<lang>.scm) captures functions,
control-flow statements and imports in C; nesting is then computed from the
captured byte ranges with a stack instead of walking the tree in Python, which
keeps a full analysis close to the cost of the bare parse.
"""
from __future__ import annotations

import posixpath
from bisect import bisect_right

from neo_git.health.languages import EXTENSIONS, language_spec
from neo_git.health.model import FileMetrics, ImportRef

_RESET, _NEST = 0, 1  # event kinds: a function/scope starts a fresh count; a statement adds a level


def language_for_path(path: str) -> str | None:
    """The registry language for a file name, by extension; None if unsupported."""
    return EXTENSIONS.get(posixpath.splitext(path)[1].lower())


def count_lines(source: bytes) -> int:
    """Lines as `wc -l` counts them, plus a last line that has no newline; empty = 0."""
    newlines = source.count(b"\n")
    return newlines + 1 if source and not source.endswith(b"\n") else newlines


def analyze_source(path: str, source: bytes) -> FileMetrics | None:
    """Measure one file's content; None if its language is unsupported.

    Never raises on bad content: code with syntax errors is measured through
    tree-sitter's error recovery (has_errors=True); non-UTF-8 bytes are read as
    Latin-1; binary content (a NUL byte) is not parsed, only its lines counted.
    """
    language = language_for_path(path)
    if language is None:
        return None
    if isinstance(source, str):
        source = source.encode("utf-8", errors="surrogateescape")
    from neo_git.health.parsing import parse

    lines = count_lines(source)
    if b"\0" in source:
        # Binary content under a source name (git's own test is a NUL byte). No
        # grammar allows NUL, and tree-sitter's error recovery on binary data
        # grows faster than linearly (10 MB of random bytes: over a minute).
        return FileMetrics(path, language, lines, 0, 0, has_errors=True)
    source = _as_utf8(source)
    tree = parse(language, source)
    if tree is None:  # tree-sitter gave up (it does not for plain bytes, but be safe)
        return FileMetrics(path, language, lines, 0, 0, has_errors=True)
    root = tree.root_node
    captures = capture(language, root)
    max_nesting, nesting_line = deepest_nesting(captures)
    packages = captures.get("package")
    return FileMetrics(
        path=path,
        language=language,
        lines=lines,
        functions=len({node.id for node in captures.get("function", ())}),
        max_nesting=max_nesting,
        imports=tuple(_imports(language, captures, source)),
        package=_text(min(packages, key=_start)) if packages else None,
        has_errors=root.has_error,
        nesting_line=nesting_line,
    )


def capture(language: str, root) -> dict:
    """Capture name -> nodes, as the language's query finds them (or its walk, which finds the same)."""
    walk = language_spec(language).walk
    if walk is not None:
        return walk(root)
    from tree_sitter import QueryCursor  # lazy: the CLI must start without tree_sitter

    from neo_git.health.parsing import query

    return QueryCursor(query(language)).captures(root)


def query_captures(language: str, root) -> dict:
    """What the language's `.scm` query captures (the reference a walk is tested against)."""
    from tree_sitter import QueryCursor

    from neo_git.health.parsing import query

    return QueryCursor(query(language)).captures(root)


def deepest_nesting(captures: dict) -> tuple[int, int]:
    """(deepest control-flow nesting inside any one function, 1-based line of it).

    Captured nodes nest as byte ranges, so sorting by (start, longest first) and
    keeping a stack of open ranges reproduces the tree's containment. A function
    or scope pushes depth 0 (its own count); a statement pushes its parent's + 1.
    Top-level code is an implicit function at depth 0.
    """
    chained = {node.id for node in captures.get("else_if", ())}
    nested = [n for n in captures.get("nest", ()) if n.id not in chained]
    events = [(n.start_byte, -n.end_byte, _RESET, 0)
              for n in (*captures.get("function", ()), *captures.get("scope", ()))]
    events.extend((n.start_byte, -n.end_byte, _NEST, i) for i, n in enumerate(nested))
    events.sort()
    open_ends: list[int] = []
    open_depths: list[int] = []
    best, best_index = 0, -1
    for start, negative_end, kind, index in events:
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
            open_depths.pop()
        if kind == _RESET:
            depth = 0
        else:
            depth = (open_depths[-1] if open_depths else 0) + 1
            if depth > best:
                best, best_index = depth, index
        open_ends.append(-negative_end)
        open_depths.append(depth)
    line = nested[best_index].start_point[0] + 1 if best_index >= 0 else 0
    return best, line


def _imports(language: str, captures: dict, source: bytes) -> list[ImportRef]:
    """`@import.<kind>` string captures plus whatever the language's reader makes of `@import`."""
    refs: list[ImportRef] = []
    spec = language_spec(language)
    deferred_at = _inside_functions(captures, spec.deferring) if spec.deferring else _never
    for name, nodes in captures.items():
        if not name.startswith("import."):
            continue
        kind = name[len("import."):]
        for node in nodes:
            target = _text(node)[1:-1]  # drop the quotes: "x", 'x', `x`
            if target:
                # a dynamic `import()` never holds up the importing module's evaluation, and a
                # TypeScript `import type`/`export type … from` is erased before anything runs
                deferred = kind == "dynamic" or _type_only(node) or deferred_at(node.start_byte)
                refs.append(ImportRef(target, kind=kind, line=node.start_point[0] + 1, deferred=deferred))
    if spec.read_imports is not None and "import" in captures:
        refs.extend(spec.read_imports(captures, source, deferred_at))
    refs.sort(key=lambda ref: ref.line)
    return refs


def _never(offset: int) -> bool:
    return False


def _type_only(source_node) -> bool:
    """True for the source string of `import type … from "x"` or `export type … from "x"`
    (TypeScript): the statement holds the `type` keyword itself. `import { type X }` does
    not (a runtime import remains under verbatimModuleSyntax)."""
    statement = source_node.parent
    return statement is not None and any(child.type == "type" for child in statement.children)


def _inside_functions(captures: dict, deferring: frozenset[str]):
    """A test "is this byte offset inside a function body?" from the captured functions and
    scopes of the *deferring* types: their outermost ranges, searched by bisection."""
    ranges = sorted((n.start_byte, n.end_byte) for name in ("function", "scope")
                    for n in captures.get(name, ()) if n.type in deferring)
    if not ranges:
        return _never
    starts: list[int] = []
    ends: list[int] = []
    for start, end in ranges:
        if ends and start < ends[-1]:       # nested in the previous outer range
            ends[-1] = max(ends[-1], end)
            continue
        starts.append(start)
        ends.append(end)

    def deferred_at(offset: int) -> bool:
        i = bisect_right(starts, offset) - 1
        return i >= 0 and offset < ends[i]
    return deferred_at


def _as_utf8(source: bytes) -> bytes:
    """Source as tree-sitter reads it: UTF-8. Bytes that are not UTF-8 are taken as
    Latin-1 (the usual legacy encoding, and every byte is valid in it), so a name
    like `café` in a Latin-1 file stays one identifier instead of a syntax error."""
    if source.isascii():
        return source
    try:
        source.decode("utf-8")
    except UnicodeDecodeError:
        return source.decode("latin-1").encode("utf-8")
    return source


def _start(node) -> int:
    return node.start_byte


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")
