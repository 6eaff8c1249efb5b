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


# A repository in every language with imports between files, and staged steps that change each
# family's edges, the files a resolver reads, additions with deletions, and a file turning binary.
MIXED = {
    "pkg/__init__.py": "", "pkg/a.py": "from pkg import b\n", "pkg/b.py": "X = 1\n",
    "pkg/c.py": "import pkg.a\n",
    "go.mod": "module example.com/m\n\ngo 1.22\n",
    "a/a.go": 'package a\n\nimport "example.com/m/b"\n\nfunc A() { b.B() }\n',
    "a/a2.go": "package a\n\nfunc A2() {}\n",
    "b/b.go": "package b\n\nfunc B() {}\n",
    "tsconfig.json": '{"compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["src/*"]}}}\n',
    "src/x.ts": 'import { y } from "@/y";\nexport const x = y;\n',
    "src/y.ts": "export const y = 1;\n",
    "Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\n',
    "src/lib.rs": "mod m;\nmod n;\n",
    "src/m.rs": "use crate::n::N;\npub struct M;\n",
    "src/n.rs": "pub struct N;\n",
    "java/com/acme/A.java": "package com.acme;\nimport com.acme.util.B;\nclass A { B b; }\n",
    "java/com/acme/util/B.java": "package com.acme.util;\npublic class B {}\n",
}

STEPS = [
    {"pkg/b.py": "from pkg import a\nX = 1\n"},                                   # python cycle
    {"b/b.go": 'package b\n\nimport "example.com/m/a"\n\nfunc B() { a.A2() }\n',
     "a/a2.go": "package a\n\nfunc A2() { if true { for { } } }\n"},            # go package cycle
    {"src/y.ts": 'import { x } from "./x";\nexport const y = 1;\n'},            # ts cycle
    {"tsconfig.json": '{"compilerOptions": {"baseUrl": "."}}\n'},                # config read changes
    {"src/n.rs": "use crate::m::M;\npub struct N;\n"},                           # rust cycle
    {"java/com/acme/util/B.java": "package com.other;\npublic class B {}\n"},   # java package moves
    {"pkg/d.py": "import pkg.b\n", "pkg/c.py": None},                            # add and delete
    {"pkg/b.py": b"\x00binary now\x00"},                                         # becomes skipped
]
