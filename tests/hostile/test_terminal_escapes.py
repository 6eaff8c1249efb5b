"""Case 8: control characters from a push are shown, never executed by the terminal."""
from __future__ import annotations

import pytest

from tests.helpers.plumbing import fact_dict, neo, push_files

ESCAPES = ("\x1b", "\x07", "\r", "\x9b", "\u202e")
HOSTILE = "5555666677778888"
SUBJECT = "Deploy \x1b[31mRED\x1b]0;pwned\x07 now\rOVERWRITE\nsecond line \u202eevil"


def _clean(text: str) -> None:
    for char in ESCAPES:
        assert char not in text, f"raw {char!r} reached the terminal: {text!r}"


@pytest.fixture
def hostile(team_repo):
    repo, ids = team_repo
    fact = fact_dict(HOSTILE, SUBJECT, body="first\x1b[2J\nsecond \x9b6n line",
                     is_valid=False, superseded_by=ids[0],
                     metadata={"created_at": "2026\x1b[1m-01-01", "author": "mallory \x1b[5m<m@x>",
                               "confidence": 0.5, "source_file": "src/\x1b[8mhidden.py",
                               "invalidation": {"reason": "superseded", "detail": "because\x1b[2J"}})
    push_files(repo, {f"facts/55/{HOSTILE}.json": fact,
                      "facts/55/\x1b[2Jbad.json": b"not json"})
    return repo, ids


@pytest.mark.parametrize("argv", [["list", "--all"], ["show", HOSTILE], ["recall", "deploy red now"],
                                  ["why", HOSTILE], ["history", HOSTILE]])
def test_control_characters_are_rendered_visibly(hostile, capsys, argv):
    result = neo(capsys, *argv)
    assert result.code == 0, result.err
    _clean(result.out)
    _clean(result.err)
    if argv[0] in ("list", "show", "history"):
        assert "\\x1b[31mRED" in result.out and "\\n" in result.out


def test_json_output_keeps_the_exact_text(hostile, capsys):
    import json

    result = neo(capsys, "show", "--json", HOSTILE)
    assert json.loads(result.out)["subject"] == SUBJECT


def test_visible_leaves_ordinary_text_alone():
    from neo_git.cli.output import visible

    text = "Ünïcode, tabs\tand emoji 🚀 stay"
    assert visible(text) == text
    assert visible("a\nb") == "a\\nb" and visible("\x1b[0m") == "\\x1b[0m"


def test_health_report_shows_control_characters_in_file_names(repo_with_commit, monkeypatch, capsys):
    from neo_git.cli import main
    from tests.helpers.git import commit_files

    commit_files(repo_with_commit, {"evil\x1b[2Jname.py": "import os\n" * 900}, "a long file with a hostile name")
    monkeypatch.chdir(repo_with_commit)
    assert main(["health"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "evil\\x1b[2Jname.py" in out


def test_list_untrusted_shows_an_attackers_author_email_escaped(team_repo, capsys, monkeypatch):
    repo, _ = team_repo
    import os

    saved = os.environ.get("GIT_AUTHOR_EMAIL")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "mallory\x1b[31m\u202e@example.com")   # the teammate's commit
    push_files(repo, {f"facts/55/{HOSTILE}.json": fact_dict(HOSTILE, "a claim")})
    if saved is None:
        monkeypatch.delenv("GIT_AUTHOR_EMAIL")
    else:
        monkeypatch.setenv("GIT_AUTHOR_EMAIL", saved)
    result = neo(capsys, "list", "--untrusted")
    assert result.code == 0, result.err
    assert HOSTILE in result.out and "\\x1b[31m" in result.out
    _clean(result.out)
    _clean(result.err)


def test_turns_show_a_session_id_escaped(team_repo, capsys):
    repo, _ = team_repo
    from neo_git.agents.turns import start_turn
    from neo_git.identity import open_repository, repository_paths

    start_turn(repository_paths(open_repository(repo)), "claude", "sess\u202eion")
    result = neo(capsys, "turns")
    assert result.code == 0, result.err
    assert "\\u202e" in result.out
    _clean(result.out)
