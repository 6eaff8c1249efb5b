"""Source texts for the health tests: many functions, deep nesting, an import cycle."""
from __future__ import annotations


def functions(count: int) -> str:
    """*count* one-line functions f0, f1, …"""
    return "".join(f"def f{i}():\n    return {i}\n" for i in range(count))


def nested(depth: int, name: str = "deep") -> str:
    """A function *name* with *depth* nested `if`s."""
    body = f"def {name}(a):\n"
    for level in range(depth):
        body += "    " * (level + 1) + "if a:\n"
    return body + "    " * (depth + 1) + "return a\n"


# A cycle closed by a deferred import, as click has one (`_neo_y` imports `_neo_x` inside `g`).
CLICK_STYLE = {
    "pkg/__init__.py": "",
    "pkg/_neo_x.py": "from . import _neo_y\n\n\ndef f():\n    return _neo_y.g()\n",
    "pkg/_neo_y.py": "def g():\n    from . import _neo_x\n    return _neo_x\n",
}
