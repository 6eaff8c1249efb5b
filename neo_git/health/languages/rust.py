"""Rust `use` and `mod foo;` -> ImportRefs (nodes captured by rust.scm)."""
from __future__ import annotations

from neo_git.health.model import ImportRef


def _path(node) -> str:
    return "".join(node.text.decode("utf-8", errors="replace").split())


def _join(prefix: str, path: str) -> str:
    return f"{prefix}::{path}" if prefix else path


def _leaf_paths(node, prefix: str) -> list[str]:
    """Expand one `use` argument into its leaf paths: `a::{b, c::d}` -> a::b, a::c::d."""
    kind = node.type
    if kind == "scoped_use_list":
        path = node.child_by_field_name("path")
        inner = _join(prefix, _path(path)) if path is not None else prefix
        listed = node.child_by_field_name("list")
        return _leaf_paths(listed, inner) if listed is not None else [inner]
    if kind == "use_list":
        paths: list[str] = []
        for child in node.named_children:
            paths.extend(_leaf_paths(child, prefix))
        return paths
    if kind == "use_as_clause":
        path = node.child_by_field_name("path")
        return [_join(prefix, _path(path))] if path is not None else []
    if kind == "use_wildcard":
        # `a::b::*` imports from the module a::b.
        return [_join(prefix, _path(node).removesuffix("*").removesuffix("::"))]
    if kind == "self":
        # `use a::{self, b}`: `self` is the module a itself.
        return [prefix or "self"]
    if kind in ("scoped_identifier", "identifier", "crate", "super", "metavariable"):
        return [_join(prefix, _path(node))]
    return []  # comments, ERROR nodes


def read_imports(captures: dict, source: bytes, deferred_at=None) -> list[ImportRef]:
    """`use` trees expanded to one ImportRef per leaf; `mod foo;` as kind "mod"."""
    refs: list[ImportRef] = []
    for node in captures.get("import", ()):
        line = node.start_point[0] + 1
        if node.type == "mod_item":
            name = node.child_by_field_name("name")
            if name is not None:
                refs.append(ImportRef(_path(name), kind="mod", line=line))
            continue
        argument = node.child_by_field_name("argument")
        if argument is None:
            continue
        for path in _leaf_paths(argument, ""):
            if path:
                refs.append(ImportRef(path, kind="use", line=line))
    return refs
