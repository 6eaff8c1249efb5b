"""The shipped library, a project's own patterns, ids that could escape the library."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from neo_git.errors import NeoError
from neo_git.patterns import REQUIRED_SECTIONS, find_pattern, load_library, shipped_root, validate_folder
from neo_git.patterns.library import PROJECT_FOLDER, read_pattern_bytes
from neo_git.patterns.parse import check_pattern
from tests.helpers.patterns import pattern_text, write_pattern

SHIPPED = sorted(p for p in shipped_root().glob("*/*.md"))


def test_library_has_at_least_fifteen_patterns_in_several_domains():
    assert len(SHIPPED) >= 15
    assert len({p.parent.name for p in SHIPPED}) >= 4


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_shipped_pattern_validates(path: Path):
    pattern, problems = check_pattern(path.read_bytes(), f"{path.parent.name}/{path.stem}", path)
    assert problems == [], "\n".join(map(str, problems))
    assert pattern.author == "git-neo maintainers"
    assert "```" in pattern.sections["Solution"], "the Solution should carry a code sketch"
    assert pattern.sections["References"].count("\n- ") >= 1, "References should list sources"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_shipped_python_sketches_are_valid_python(path: Path):
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    for block in blocks:
        compile(block, str(path), "exec")  # a SyntaxError names the file and line


def test_validate_folder_on_the_shipped_library_is_clean():
    patterns, problems = validate_folder(shipped_root())
    assert problems == [] and len(patterns) == len(SHIPPED)


def test_show_finds_a_shipped_pattern():
    pattern = find_pattern("architecture/dependency-inversion")
    assert pattern.name.startswith("Break an Import Cycle")
    assert set(REQUIRED_SECTIONS) <= set(pattern.sections)
    assert pattern.text.startswith("# Pattern:")
    assert find_pattern("architecture/dependency-inversion.md").id == pattern.id


@pytest.mark.parametrize("bad", ["../architecture/dependency-inversion", "architecture/../../etc/passwd",
                                 "/etc/passwd", "..\\..\\secret", "~/x/y", "C:/x/y"])
def test_show_rejects_ids_escaping_the_library(bad):
    with pytest.raises(NeoError) as info:
        find_pattern(bad)
    assert "points outside the pattern library" in info.value.message
    assert "<domain>/<name>" in info.value.hint


@pytest.mark.parametrize("bad", ["dependency-inversion", "a/b/c", "Architecture/X", ""])
def test_show_rejects_ids_of_the_wrong_shape(bad):
    with pytest.raises(NeoError, match="is not a pattern id"):
        find_pattern(bad)


def test_show_unknown_id_suggests_close_ones():
    with pytest.raises(NeoError) as info:
        find_pattern("architecture/dependency-inversio")
    assert "architecture/dependency-inversion" in info.value.hint


def test_project_pattern_wins_over_shipped_one(tmp_path):
    own = tmp_path / PROJECT_FOLDER
    write_pattern(own, "architecture/dependency-inversion", pattern_text("Our Own Inversion"))
    write_pattern(own, "team/code-review")
    library = load_library(tmp_path)
    assert library.patterns["architecture/dependency-inversion"].name == "Our Own Inversion"
    assert library.patterns["architecture/dependency-inversion"].source == "project"
    assert library.patterns["structure/guard-clauses"].source == "shipped"
    assert "team/code-review" in library.patterns
    assert library.overridden == ["architecture/dependency-inversion"]
    assert find_pattern("architecture/dependency-inversion", tmp_path).name == "Our Own Inversion"
    assert find_pattern("architecture/dependency-inversion").name != "Our Own Inversion"


def test_invalid_project_pattern_is_skipped_with_its_problem(tmp_path):
    own = tmp_path / PROJECT_FOLDER
    write_pattern(own, "team/broken", pattern_text(author=None))
    library = load_library(tmp_path)
    assert "team/broken" not in library.patterns
    assert [p.message for p in library.problems][0].startswith("missing 'Author:")
    with pytest.raises(NeoError, match="is not valid: missing 'Author:"):
        find_pattern("team/broken", tmp_path)


def test_invalid_project_override_does_not_hide_the_shipped_pattern_in_listings(tmp_path):
    write_pattern(tmp_path / PROJECT_FOLDER, "structure/guard-clauses", "# Pattern: Broken\n")
    library = load_library(tmp_path)
    assert library.patterns["structure/guard-clauses"].source == "shipped"
    assert library.problems


def test_show_refuses_a_symlinked_pattern(tmp_path):
    own = tmp_path / PROJECT_FOLDER
    secret = write_pattern(tmp_path / "elsewhere", "x/secret")
    (own / "team").mkdir(parents=True)
    os.symlink(secret, own / "team" / "linked.md")
    with pytest.raises(NeoError, match="is a symlink"):
        find_pattern("team/linked", tmp_path)
    assert "team/linked" not in load_library(tmp_path).patterns


def test_show_refuses_a_symlinked_domain_folder(tmp_path):
    own = tmp_path / PROJECT_FOLDER
    own.mkdir(parents=True)
    write_pattern(tmp_path / "elsewhere", "x/secret")
    os.symlink(tmp_path / "elsewhere" / "x", own / "team")
    with pytest.raises(NeoError, match="is a symlink"):
        find_pattern("team/secret", tmp_path)
    problems = load_library(tmp_path).problems
    assert any("symlink" in p.message for p in problems)


def test_reading_never_follows_a_symlink(tmp_path):
    target = write_pattern(tmp_path, "a/b")
    link = tmp_path / "link.md"
    os.symlink(target, link)
    raw, _, why = read_pattern_bytes(link)
    assert raw is None and "symlink" in why


def test_validate_folder_lists_every_problem(tmp_path):
    write_pattern(tmp_path, "good/one")
    write_pattern(tmp_path, "good/no-author", pattern_text(author=None))
    write_pattern(tmp_path, "good/latin1", pattern_text().encode("utf-8") + b"\xff")
    write_pattern(tmp_path, "Bad Domain/x")
    write_pattern(tmp_path, "good/deeper/x")
    (tmp_path / "stray.md").write_text(pattern_text(), encoding="utf-8")
    (tmp_path / "README.md").write_text("about these patterns\n", encoding="utf-8")
    patterns, problems = validate_folder(tmp_path)
    assert [p.id for p in patterns] == ["good/one"]
    text = "\n".join(map(str, problems))
    assert "no-author.md" in text and "missing 'Author:" in text
    assert "latin1.md" in text and "not UTF-8" in text
    assert "'Bad Domain' is not a valid id part" in text
    assert "nested folder" in text
    assert "stray.md: is not in a domain folder" in text
    assert "README" not in text
    assert len(problems) == 5


def test_validate_folder_missing_is_a_clear_error(tmp_path):
    with pytest.raises(NeoError, match="no such folder"):
        validate_folder(tmp_path / "nope")


def test_edited_file_is_reparsed(tmp_path):
    own = tmp_path / PROJECT_FOLDER
    path = write_pattern(own, "team/edit", pattern_text("First Name"))
    assert load_library(tmp_path).patterns["team/edit"].name == "First Name"
    path.write_text(pattern_text("Second, Longer Name"), encoding="utf-8")
    assert load_library(tmp_path).patterns["team/edit"].name == "Second, Longer Name"
