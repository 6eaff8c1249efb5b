"""`git neo construct list|search|show|validate` through main(), inside and outside a repository."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from neo_git.cli import main
from neo_git.patterns.library import PROJECT_FOLDER
from tests.helpers.patterns import pattern_text, write_pattern


@pytest.fixture(autouse=True)
def hash_embedder(monkeypatch):
    monkeypatch.setenv("NEO_EMBEDDER", "hash")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_groups_by_domain(capsys, tmp_path):
    code, out, _ = run(capsys, "-C", str(tmp_path), "construct", "list")
    assert code == 0
    assert "architecture/\n" in out and "structure/\n" in out
    assert "architecture/dependency-inversion" in out


def test_list_json_marks_project_overrides(capsys, git_repo):
    write_pattern(git_repo / PROJECT_FOLDER, "structure/guard-clauses", pattern_text("Our Guards"))
    code, out, _ = run(capsys, "-C", str(git_repo / ".neo"), "construct", "list", "--json")
    data = json.loads(out)
    assert code == 0 and data["overridden"] == ["structure/guard-clauses"]
    mine = next(p for p in data["patterns"] if p["id"] == "structure/guard-clauses")
    assert mine["name"] == "Our Guards" and mine["source"] == "project"


def test_search_prints_ranked_hits(capsys, tmp_path):
    code, out, _ = run(capsys, "-C", str(tmp_path), "construct", "search",
                       "break an import cycle between two packages", "-k", "2")
    assert code == 0
    first = out.splitlines()[0]
    assert "architecture/" in first and "Import" in first
    code, out, _ = run(capsys, "construct", "search", "exponential backoff", "--json")
    hits = json.loads(out)["hits"]
    assert hits[0]["id"] == "resilience/retry-with-backoff" and len(hits) == 5
    assert {"score", "semantic", "lexical", "author", "path"} <= set(hits[0])


def test_search_rejects_bad_k(capsys):
    code, _, err = run(capsys, "construct", "search", "x", "-k", "0")
    assert code == 2 and "-k must be at least 1" in err


def test_show_prints_the_pattern(capsys):
    code, out, _ = run(capsys, "construct", "show", "resilience/circuit-breaker")
    assert code == 0 and out.startswith("# Pattern: Circuit Breaker\n") and "## Consequences" in out
    code, out, _ = run(capsys, "construct", "show", "resilience/circuit-breaker", "--json")
    data = json.loads(out)
    assert data["id"] == "resilience/circuit-breaker" and "Forces" in data["sections"]


def test_show_rejects_escaping_ids_with_fatal_and_hint(capsys):
    code, out, err = run(capsys, "construct", "show", "../../etc/passwd")
    assert code == 1 and out == ""
    assert "fatal: pattern id '../../etc/passwd' points outside the pattern library" in err
    assert "hint: ids look like <domain>/<name>" in err


def test_validate_ok_and_failing_folder(capsys, tmp_path):
    good = tmp_path / "good"
    write_pattern(good, "team/one")
    code, out, _ = run(capsys, "construct", "validate", str(good))
    assert code == 0 and "ok: 1 pattern(s)" in out
    bad = tmp_path / "bad"
    write_pattern(bad, "team/one")
    write_pattern(bad, "team/two", pattern_text(author=None, sections=("Intent", "Solution")))
    write_pattern(bad, "team/three", "# Pattern: Three\nAuthor: x\n" + "\n" * 400)
    code, out, err = run(capsys, "construct", "validate", str(bad))
    assert code == 1
    lines = out.splitlines()
    assert sum("two.md" in line for line in lines) == 4  # author + three missing sections
    assert any("three.md" in line and "the limit is 300" in line for line in lines)
    assert "fatal: " in err and "problem(s) in 2 file(s)" in err
    code, out, _ = run(capsys, "construct", "validate", str(bad), "--json")
    assert code == 1 and json.loads(out)["valid"] == ["team/one"]


def test_validate_defaults_to_the_project_folder(capsys, git_repo):
    write_pattern(git_repo / PROJECT_FOLDER, "team/broken", pattern_text(author=None))
    code, out, _ = run(capsys, "-C", str(git_repo), "construct", "validate")
    assert code == 1 and "broken.md" in out


def test_validate_defaults_to_the_shipped_library_outside_a_repository(capsys, tmp_path):
    code, out, _ = run(capsys, "-C", str(tmp_path), "construct", "validate")
    assert code == 0 and out.startswith("ok: ")


def test_construct_help_does_not_import_numpy(capsys):
    code, out, _ = run(capsys, "construct", "-h")
    assert code == 0 and "validate" in out
    probe = ("import sys; from neo_git.cli import main; main(['construct', 'list']); "
             "print('numpy' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env=os.environ)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("False"), proc.stderr
