"""Value types shared by the health modules: per-file metrics and raw imports.

Per-file results are cached by blob id (JSON via to_dict/from_dict), so these
must stay plain data.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class ImportRef(NamedTuple):
    """One import as written in the source, before resolution to a repository path.

    target: Python dotted module ("a.b"; "" for `from . import x`), JS/TS specifier
        ("./x", "@/lib/y"), Go import path ("example.com/m/pkg"), Rust path
        ("crate::a::b", "super::x", "self::y"; for `mod foo;` just "foo"), Java name
        ("com.acme.Foo", "com.acme.*", static: "com.acme.Foo.bar").
    names: Python `from X import a, b` -> ("a", "b") (they may be submodules); else ().
    level: Python relative level (leading dots); 0 elsewhere.
    kind: "import" | "from" (Python), "import" | "require" | "dynamic" | "export" (JS/TS),
        "import" (Go), "use" | "mod" (Rust), "import" | "static" (Java).
    type_checking: Python import under `if TYPE_CHECKING:` (left out of the cycle graph).
    line: 1-based line of the import.
    deferred: runs later than the module's own loading: inside a function or method
        (Python, JS/TS), or a JS/TS dynamic `import()`. Module level, class bodies and
        top-level `if`/`try` run at import time (False). Go, Rust and Java have no
        deferred imports.
    """

    target: str
    names: tuple[str, ...] = ()
    level: int = 0
    kind: str = "import"
    type_checking: bool = False
    line: int = 0
    deferred: bool = False


@dataclass(frozen=True)
class FileMetrics:
    """What one source file contributes to a health snapshot."""

    path: str                 # repository-relative, '/' separated
    language: str             # key of the language registry: python, javascript, typescript, tsx, go, rust, java
    lines: int
    functions: int            # functions + methods (+ arrow functions assigned to names in JS/TS)
    max_nesting: int          # deepest control-flow nesting inside any one function
    imports: tuple[ImportRef, ...] = ()
    package: str | None = None  # Java `package a.b;`, Go `package name`; None elsewhere
    has_errors: bool = False    # the parse produced ERROR/MISSING nodes (still measured)
    nesting_line: int = 0       # a line where max_nesting is reached (0 if none)

    def to_dict(self) -> dict:
        """Plain JSON-able form (used by the blob-keyed cache)."""
        return {
            "path": self.path, "language": self.language, "lines": self.lines,
            "functions": self.functions, "max_nesting": self.max_nesting,
            "imports": [list(i) for i in self.imports], "package": self.package,
            "has_errors": self.has_errors, "nesting_line": self.nesting_line,
        }

    @classmethod
    def from_dict(cls, data: dict) -> FileMetrics:
        """Inverse of to_dict."""
        imports = tuple(
            ImportRef(row[0], tuple(row[1]), int(row[2]), row[3], bool(row[4]), int(row[5]),
                      bool(row[6]) if len(row) > 6 else False)
            for row in data.get("imports", ())
        )
        return cls(
            path=data["path"], language=data["language"], lines=int(data["lines"]),
            functions=int(data["functions"]), max_nesting=int(data["max_nesting"]),
            imports=imports, package=data.get("package"),
            has_errors=bool(data.get("has_errors", False)),
            nesting_line=int(data.get("nesting_line", 0)),
        )


@dataclass(frozen=True)
class ImportGraph:
    """Resolved import edges between repository modules (files; Go: package directories).

    `edges` holds every edge (what grimp and madge count); `deferred_edges` the part of it
    reached only through deferred imports, so the import-time graph is the difference.
    `sites[node][target]` says where the edge is written: the line in *node*'s own file,
    or "path:line" when the node is not a file (a Go package)."""

    edges: dict[str, frozenset[str]] = field(default_factory=dict)           # node -> nodes it imports
    type_checking_edges: dict[str, frozenset[str]] = field(default_factory=dict)  # Python TYPE_CHECKING only
    language_of: dict[str, str] = field(default_factory=dict)                # node -> language
    deferred_edges: dict[str, frozenset[str]] = field(default_factory=dict)  # node -> only-deferred targets
    sites: dict[str, dict[str, int | str]] = field(default_factory=dict)     # node -> target -> where

    def import_time_edges(self) -> dict[str, frozenset[str]]:
        """The edges that run when the modules load (every edge less the deferred-only ones)."""
        late = self.deferred_edges
        if not late:
            return self.edges
        return {node: targets - late[node] if node in late else targets for node, targets in self.edges.items()}

    def site(self, node: str, target: str) -> str:
        """Where *node* imports *target*, as "path:line" ("path" when unknown)."""
        where = self.sites.get(node, {}).get(target)
        if isinstance(where, str):
            return where
        return f"{node}:{where}" if where else node
