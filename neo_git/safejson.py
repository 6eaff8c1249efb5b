"""JSON from outside (a teammate's blob, a file on disk) parsed without surprises.

`json.loads` raises RecursionError, not ValueError, on deeply nested input
(`[[[[…]]]]`, 1,000 levels in a 2 kB blob), and a value nested a few hundred
levels deep that does parse can still overflow the stack later, when it is
written back with `json.dumps(indent=…)`. Nothing git-neo stores nests more than
a few levels, so anything deeper than MAX_DEPTH is refused with a ValueError,
which every reader already handles as "not valid JSON".
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

MAX_DEPTH = 32


def loads(data: bytes | str, max_depth: int | None = MAX_DEPTH) -> Any:
    """`json.loads`, but ValueError (never RecursionError) for input nested deeper than
    *max_depth*. None skips the depth walk where the caller keeps no nested value it did not
    check itself (a fact: `Fact.from_dict` takes plain fields only)."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise ValueError(f"nested too deeply (more than {MAX_DEPTH} levels)") from None
    if max_depth is not None:
        check_depth(value, max_depth)
    return value


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """ValueError if *value* nests lists/objects deeper than *limit* (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            raise ValueError(f"nested too deeply (more than {limit} levels)")
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
