"""Python: the statements health needs, found by walking the tree, and import statements -> ImportRefs.

`walk` returns what python.scm would capture, without running the query: a query cursor
visits every node of the tree, expressions and tokens included (a quarter of the parse
time on CPython's stdlib and sympy), while everything health counts in Python is a
statement, and statements only sit in statement containers. So the walk enters module,
blocks and compound statements only (and anything holding a syntax error, where tree-sitter
may put a statement anywhere). Lambdas are not reported: they hold no statements, so they
change neither nesting nor where an import runs. python.scm stays the reference
(tests/health/test_python_walk.py compares both on real code).
"""
from __future__ import annotations

import re

from neo_git.health.model import ImportRef

# `TYPE_CHECKING`, `typing.TYPE_CHECKING`, and aliases such as `t.TYPE_CHECKING`
# (`import typing as t`, click does this), as grimp accepts them too.
_TYPE_CHECKING = re.compile(r"(?:\w+\s*\.\s*)*TYPE_CHECKING")


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def _dotted(node) -> str:
    """`a . b` written with any spacing -> "a.b"; aliases resolve to the imported name."""
    if node.type == "aliased_import":
        node = node.child_by_field_name("name")
    return "".join(_text(node).split())


def _under_type_checking(node) -> bool:
    """Is `node` inside the body (not the else) of `if TYPE_CHECKING:` / `if <module>.TYPE_CHECKING:`?"""
    child, parent = node, node.parent
    while parent is not None:
        if parent.type == "if_statement" and child.type == "block":
            condition = parent.child_by_field_name("condition")
            consequence = parent.child_by_field_name("consequence")
            if (consequence is not None and consequence.id == child.id and condition is not None
                    and _TYPE_CHECKING.fullmatch(_text(condition))):
                return True
        child, parent = parent, parent.parent
    return False


# node type -> capture name (python.scm)
_CAPTURED = {
    "function_definition": "function", "class_definition": "scope",
    "if_statement": "nest", "for_statement": "nest", "while_statement": "nest", "try_statement": "nest",
    "with_statement": "nest", "match_statement": "nest",
    "import_statement": "import", "import_from_statement": "import",
}
# node types whose named children may be statements
_CONTAINERS = frozenset({
    "module", "block", "function_definition", "class_definition", "decorated_definition",
    "if_statement", "elif_clause", "else_clause", "for_statement", "while_statement", "try_statement",
    "except_clause", "except_group_clause", "finally_clause", "with_statement", "match_statement",
    "case_clause", "ERROR",
})


def walk(root) -> dict[str, list]:
    """The nodes python.scm captures, by capture name, in document order (lambdas left out)."""
    found: dict[str, list] = {"function": [], "scope": [], "nest": [], "else_if": [], "import": []}
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        name = _CAPTURED.get(kind)
        if name is not None:
            found[name].append(node)
            if kind == "if_statement":
                _chained_if(node, found["else_if"])
        if kind in _CONTAINERS or node.has_error:
            children = node.named_children
            children.reverse()
            stack.extend(children)
    return found


def _chained_if(node, chained: list) -> None:
    """`else:` holding only an `if` (and comments) continues the chain, as `elif` does."""
    for clause in node.children_by_field_name("alternative"):
        if clause.type != "else_clause":
            continue
        body = clause.child_by_field_name("body")
        if body is None or body.type != "block":
            continue
        statements = [c for c in body.named_children if c.type != "comment"]
        if len(statements) == 1 and statements[0].type == "if_statement":
            chained.append(statements[0])


def read_imports(captures: dict, source: bytes, deferred_at=lambda offset: False) -> list[ImportRef]:
    """One ImportRef per imported module (`import a, b` gives two); `from __future__` skipped.
    An import inside a function or method is deferred (`deferred_at` tells by byte offset)."""
    # Walking up from every import is only worth it in the few files that can need it.
    maybe_type_checking = b"TYPE_CHECKING" in source
    refs: list[ImportRef] = []
    for node in captures.get("import", ()):
        line = node.start_point[0] + 1
        type_checking = maybe_type_checking and _under_type_checking(node)
        deferred = deferred_at(node.start_byte)
        names = node.children_by_field_name("name")
        if node.type == "import_statement":
            for name in names:
                refs.append(ImportRef(_dotted(name), (), 0, "import", type_checking, line, deferred))
            continue
        module = node.child_by_field_name("module_name")
        if module is None:  # only in broken code
            continue
        level, target = 0, _dotted(module)
        if module.type == "relative_import":
            prefix = next((c for c in module.children if c.type == "import_prefix"), None)
            level = _text(prefix).count(".") if prefix is not None else 0
            dotted = next((c for c in module.children if c.type == "dotted_name"), None)
            target = _dotted(dotted) if dotted is not None else ""
        # `from x import *` names no submodules: names stays empty.
        imported = tuple(_dotted(n) for n in names)
        refs.append(ImportRef(target, imported, level, "from", type_checking, line, deferred))
    return refs
