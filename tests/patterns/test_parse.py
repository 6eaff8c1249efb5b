"""One pattern file: what makes it valid, and the message for each way it is not."""
from __future__ import annotations

from pathlib import Path

import pytest

from neo_git.patterns.model import MAX_BYTES, MAX_LINES
from neo_git.patterns.parse import check_pattern
from tests.helpers.patterns import SECTIONS, pattern_text

PATH = Path("lib/structure/sample.md")


def check(text: str | bytes, pattern_id: str = "structure/sample"):
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return check_pattern(raw, pattern_id, PATH)


def messages(text: str | bytes, pattern_id: str = "structure/sample") -> list[str]:
    pattern, problems = check(text, pattern_id)
    assert pattern is None
    return [p.message for p in problems]


def test_valid_pattern_parses_every_field():
    text = pattern_text("Guard Clauses").replace("Author: Test Author",
                                                 "Author: Test Author\nTags: nesting, early return")
    pattern, problems = check(text)
    assert problems == []
    assert (pattern.id, pattern.name, pattern.domain, pattern.author) == \
        ("structure/sample", "Guard Clauses", "structure", "Test Author")
    assert list(pattern.sections) == list(SECTIONS)
    assert pattern.sections["Forces"] == "Some text about forces."
    assert pattern.tags == ("nesting", "early return")
    assert pattern.summary == "Some text about intent."


def test_missing_author_is_reported():
    assert messages(pattern_text(author=None)) == \
        ["missing 'Author: <who wrote it>' line (between the title and the first section)"]


def test_empty_author_is_reported_with_its_line():
    pattern, problems = check(pattern_text(author=""))
    assert pattern is None and problems[0].line == 2 and "missing 'Author:" in problems[0].message


def test_every_missing_section_is_listed():
    found = messages(pattern_text(sections=("Intent", "Solution", "References")))
    assert found == ["missing section '## Forces'", "missing section '## Consequences'"]


def test_empty_section_is_reported():
    text = pattern_text().replace("Some text about consequences.", "   ")
    assert messages(text) == ["section '## Consequences' is empty"]


def test_overlong_file_is_reported():
    text = pattern_text(body="line about {section}\n" * 70)
    assert len(text.splitlines()) > MAX_LINES
    assert any(f"the limit is {MAX_LINES}" in m for m in messages(text))


def test_exactly_the_line_limit_is_fine():
    text = pattern_text()
    text += "\n" * (MAX_LINES - len(text.splitlines()))
    assert len(text.splitlines()) == MAX_LINES
    assert check(text)[1] == []


def test_huge_file_is_refused_before_decoding():
    assert messages(b"x" * (MAX_BYTES + 1)) == [f"file is {MAX_BYTES + 1:,} bytes; the limit is {MAX_BYTES:,}"]


def test_not_utf8_names_the_byte_and_line():
    raw = pattern_text().encode("utf-8").replace(b"Some text about forces.", b"caf\xe9")
    pattern, problems = check(raw)
    assert pattern is None
    (problem,) = problems
    assert "not UTF-8: byte 0xe9" in problem.message and problem.line == 8


def test_missing_title():
    text = pattern_text().replace("# Pattern: Sample Pattern", "# Sample Pattern")
    assert messages(text) == ["the first line must be '# Pattern: <Name>'"]


@pytest.mark.parametrize("bad_id", ["Structure/sample", "structure/sample.v2", "structure/has space",
                                    "structure/", "structure/--x"])
def test_unsafe_id_is_reported(bad_id):
    assert any(m.startswith(f"unsafe id '{bad_id}'") for m in messages(pattern_text(), bad_id))


def test_duplicate_section_is_reported():
    text = pattern_text() + "\n## Intent\nagain\n"
    assert any("'## Intent' appears twice (first at line" in m for m in messages(text))


def test_headings_inside_code_fences_are_code():
    text = pattern_text().replace("Some text about solution.",
                                  "```python\n## not a section\nx = 1\n```")
    pattern, problems = check(text)
    assert problems == []
    assert "## not a section" in pattern.sections["Solution"]
    assert "not a section" not in pattern.sections


def test_unclosed_code_fence_is_reported():
    text = pattern_text().replace("Some text about references.", "```\ncode")
    assert any("never closed" in m for m in messages(text))


def test_problem_prints_as_path_line_message():
    _, problems = check(pattern_text(author=""))
    assert str(problems[0]).startswith(f"{PATH}:2: missing")
