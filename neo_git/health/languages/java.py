"""Java import declarations -> ImportRefs (nodes captured by java.scm)."""
from __future__ import annotations

from neo_git.health.model import ImportRef


def read_imports(captures: dict, source: bytes, deferred_at=None) -> list[ImportRef]:
    """`import a.b.C;` -> "a.b.C"; `a.b.*` keeps the star; `import static` is kind "static"."""
    refs: list[ImportRef] = []
    for node in captures.get("import", ()):
        name, star, static = None, False, False
        for child in node.children:
            if child.type in ("scoped_identifier", "identifier"):
                name = child
            elif child.type == "asterisk":
                star = True
            elif child.type == "static":
                static = True
        if name is None:
            continue
        target = "".join(name.text.decode("utf-8", errors="replace").split())
        if star:
            target += ".*"
        refs.append(ImportRef(target, kind="static" if static else "import",
                              line=node.start_point[0] + 1))
    return refs
