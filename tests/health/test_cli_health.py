"""`git neo health` through the CLI entry point, in real repositories."""
from __future__ import annotations

import json
import os

import pytest

from neo_git.cli import main
from tests.helpers.git import commit_files, git
from tests.helpers.health import functions, nested


@pytest.fixture
def project(git_repo, monkeypatch):
    commit_files(git_repo, {
        "app/__init__.py": "",
        "app/a.py": "from app import b\n" + nested(3),
        "app/b.py": "from app import a\n",
        "app/big.py": functions(31),
        "web/main.js": "function go() { if (x) { return 1; } }\n",
        "README.md": "# demo\n",
    }, "first")
    git(git_repo, "tag", "v1")
    monkeypatch.chdir(git_repo)
    return git_repo


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_report_has_the_documented_keys(project, capsys):
    code, out, err = run(capsys, "health", "--json")

    assert code == 0 and err == ""
    data = json.loads(out)
    for key in ("files", "cycles", "modules_in_cycles", "cycle_components", "god_files", "max_nesting",
                "max_nesting_files", "per_language", "skipped", "rev", "lines"):
        assert key in data
    assert data["rev"] == git(project, "rev-parse", "HEAD").strip()
    assert (data["files"], data["cycles"], data["max_nesting"]) == (5, 1, 3)
    assert data["modules_in_cycles"] == ["app/a.py", "app/b.py"]
    assert data["god_files"] == [{"path": "app/big.py", "lines": 62, "functions": 31, "language": "python"}]
    assert sorted(data["per_language"]) == ["javascript", "python"]
    assert data["per_language"]["javascript"] == {"files": 1, "lines": 1, "functions": 1, "cycles": 0,
                                                  "god_files": 0, "max_nesting": 1}


def test_human_report_shows_table_cycles_god_files_and_nesting(project, capsys):
    code, out, _ = run(capsys, "health")

    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("health of HEAD (")
    header = next(line for line in lines if line.startswith("language"))
    assert header.split() == ["language", "files", "lines", "functions", "god", "files", "cycles",
                              "max", "nesting"]
    assert any(line.split()[:2] == ["python", "4"] for line in lines)
    assert any(line.split()[:2] == ["total", "5"] for line in lines)
    assert "import cycles: 1 (1 at import time, 0 closing only through a deferred import)" in lines
    assert "  1. app/a.py:1 → app/b.py:1 → app/a.py" in lines
    assert "  app/big.py  62 lines, 31 functions" in lines
    assert "deepest nesting: 3" in lines and "  app/a.py:5" in lines


def test_staged_shows_the_index(project, capsys):
    (project / "app" / "b.py").write_text("X = 1\n", encoding="utf-8")
    git(project, "add", "app/b.py")

    code, out, _ = run(capsys, "health", "--staged", "--json")

    data = json.loads(out)
    assert code == 0 and data["rev"] == "index" and data["cycles"] == 0


def test_diff_between_two_revisions(project, capsys):
    commit_files(project, {"app/b.py": "X = 1\n", "app/huge.py": functions(45)}, "second")

    code, out, _ = run(capsys, "health", "--diff", "v1", "HEAD", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["verdict"] == "regression"          # one more god file outweighs the broken cycle
    assert data["files"] == ["app/huge.py"]
    assert data["before"]["cycles"] == 1 and data["after"]["cycles"] == 0
    assert data["cycles_delta"] == -1 and data["god_files_delta"] == 1

    code, out, _ = run(capsys, "health", "--diff", "v1", "HEAD")
    assert code == 0
    assert out.splitlines()[0].startswith("health v1 (") and out.splitlines()[0].endswith(": regression")
    assert "files responsible: app/huge.py" in out


def test_unknown_revision_is_fatal_with_a_hint(project, capsys):
    code, out, err = run(capsys, "health", "no-such-rev")

    assert code == 1 and out == ""
    assert err.splitlines()[0] == "fatal: unknown revision 'no-such-rev'"
    assert err.splitlines()[1].startswith("hint: ")
    assert run(capsys, "health", "--diff", "v1", "nope")[0] == 1


def test_empty_repository_explains_itself_and_staged_still_works(git_repo, monkeypatch, capsys):
    monkeypatch.chdir(git_repo)

    code, _, err = run(capsys, "health")
    assert code == 1
    assert err.startswith("fatal: HEAD has no commits yet") and "--staged" in err

    code, out, _ = run(capsys, "health", "--staged", "--json")
    assert code == 0 and json.loads(out)["files"] == 0


def test_conflicting_options_are_usage_errors(project, capsys):
    code, out, err = run(capsys, "health", "--diff", "v1", "HEAD", "--staged")
    assert (code, out) == (2, "") and err.startswith("usage: git neo health")
    code, _, err = run(capsys, "health", "v1", "--staged")
    assert code == 2 and err.splitlines()[-1] == (
        "git neo health: error: --staged measures the index; give either REV or --staged")


def test_outside_a_repository(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))

    code, _, err = run(capsys, "health")

    assert code == 1 and err.startswith("fatal: not a git repository")


def test_non_utf8_file_names_survive_json_and_text_output(git_repo, monkeypatch, capsys):
    name = "caf\udce9.py"                      # b"caf\xe9.py" on disk and in git
    commit_files(git_repo, {name: nested(2)})
    monkeypatch.chdir(git_repo)

    code, out, _ = run(capsys, "health", "--json")
    assert code == 0
    [where] = json.loads(out)["max_nesting_files"]
    assert os.fsencode(where["path"]) == b"caf\xe9.py"

    code, out, _ = run(capsys, "health")
    assert code == 0 and "  caf\ufffd.py:3" in out.splitlines()


def test_human_report_says_what_was_skipped_and_what_had_syntax_errors(git_repo, monkeypatch, capsys):
    commit_files(git_repo, {"ok.py": functions(1), "broken.py": "def oops(:\n",
                            "node_modules/lib/index.js": "function f() {}\n", "app.min.js": "var a;\n"})
    monkeypatch.chdir(git_repo)

    code, out, _ = run(capsys, "health")

    assert code == 0
    assert "skipped: minified 1, vendored 1" in out.splitlines()
    assert "measured despite syntax errors: 1 file(s), e.g. broken.py" in out.splitlines()


def test_only_a_person_at_a_terminal_gets_a_process_pool(monkeypatch):
    """Hooks run with stdin from /dev/null: they must never fan out over the machine."""
    import io

    from neo_git.cli import health as cli_health

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stdin", io.StringIO())
    monkeypatch.setattr("sys.stderr", Tty())
    assert cli_health._workers() == 1
    monkeypatch.setattr("sys.stdin", Tty())
    assert 1 <= cli_health._workers() <= 4
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert cli_health._workers() == 2
