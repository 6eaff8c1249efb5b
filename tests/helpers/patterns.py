"""Writing small pattern files for the tests."""
from __future__ import annotations

from pathlib import Path

SECTIONS = ("Intent", "Forces", "Solution", "Consequences", "References")


def pattern_text(name: str = "Sample Pattern", *, author: str | None = "Test Author",
                 sections: tuple[str, ...] = SECTIONS, body: str = "Some text about {section}.") -> str:
    """A pattern file's text with the given title, author line and sections."""
    lines = [f"# Pattern: {name}"]
    if author is not None:
        lines.append(f"Author: {author}")
    for section in sections:
        lines += ["", f"## {section}", body.format(section=section.lower())]
    return "\n".join(lines) + "\n"


def write_pattern(root: Path, pattern_id: str, text: str | bytes | None = None) -> Path:
    """Write `<root>/<pattern_id>.md` (a valid pattern unless *text* says otherwise)."""
    path = root / f"{pattern_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is None:
        text = pattern_text()
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path
