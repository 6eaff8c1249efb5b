"""Case 1: deeply nested JSON (RecursionError in the parser) never stops git-neo."""
from __future__ import annotations

import json

import pytest

from tests.helpers.git import git
from tests.helpers.plumbing import fact_dict, neo, push_files, ref_state

DEEP = b"[" * 1000 + b"]" * 1000
HOSTILE_ID = "abcdef0123456789"
HOSTILE_PATH = f"facts/ab/{HOSTILE_ID}.json"


@pytest.mark.parametrize("argv", [["list"], ["list", "--all", "--json"], ["recall", "http client"],
                                  ["add", "Logging", "Use structlog everywhere."]])
def test_deeply_nested_fact_blob_is_skipped_with_a_warning(team_repo, good_blobs, capsys, argv):
    repo, ids = team_repo
    push_files(repo, {HOSTILE_PATH: DEEP})
    result = neo(capsys, *argv)
    assert result.code == 0, result.err
    if argv[0] != "add":  # add reads only what it needs; the read commands name the skipped blob
        assert HOSTILE_PATH in result.err and "warning:" in result.err
    for fact_id, blob in good_blobs.items():
        assert git(repo, "show", f"refs/neo/facts:facts/{fact_id[:2]}/{fact_id}.json") == blob


def test_show_of_a_good_fact_next_to_a_nested_blob(team_repo, capsys):
    repo, ids = team_repo
    push_files(repo, {HOSTILE_PATH: DEEP})
    result = neo(capsys, "show", ids[0])
    assert result.code == 0, result.err
    assert "HTTP client" in result.out


def test_nested_value_inside_a_valid_fact_is_refused(team_repo, capsys):
    """Parseable but deep (500 levels inside metadata) would crash canonical JSON later."""
    repo, ids = team_repo
    deep = json.loads("[" * 500 + "]" * 500)
    push_files(repo, {HOSTILE_PATH: fact_dict(HOSTILE_ID, metadata={"invalidation": {"detail": deep}})})
    result = neo(capsys, "list", "--all")
    assert result.code == 0, result.err
    assert HOSTILE_PATH in result.err


def test_deeply_nested_session_file_is_a_clear_fatal(team_repo, capsys):
    repo, _ = team_repo
    session = repo / ".git" / "neo" / "session.json"
    session.parent.mkdir(parents=True, exist_ok=True)
    session.write_bytes(b'{"version": "2.0", "facts": ' + DEEP + b"}")
    result = neo(capsys, "list")
    assert result.code == 1, result.err
    assert "fatal:" in result.err and "session.json" in result.err and "hint:" in result.err
    assert list(session.parent.glob("session.json.corrupt-*")), "the unreadable file is kept aside"


def test_deeply_nested_import_file_is_a_clear_fatal(team_repo, capsys, tmp_path):
    repo, _ = team_repo
    before = ref_state(repo)
    path = tmp_path / "facts.json"
    path.write_bytes(b'{"version": "2.0", "facts": [' + DEEP + b"]}")
    result = neo(capsys, "import", str(path))
    assert result.code == 1, result.err
    assert "fatal:" in result.err and "facts.json" in result.err
    assert ref_state(repo) == before
