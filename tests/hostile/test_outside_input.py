"""Issue 37, deliverable 3: no exit 3 and no hang from what arrives from outside (a teammate's
note, a setting, a file on disk, a damaged HEAD, a held cache lock)."""
from __future__ import annotations

import json

import pytest

from tests.conftest import git
from tests.hostile.plumbing import neo

BAD_NOTES = [
    {"facts": "notalist"},
    {"facts": [{"id": "abcdabcdabcdabcd", "confidence": "high", "success_count": 7}, 5, "x"]},
    {"facts": [{"id": 12, "confidence": [0.1, 0.2]}], "commit": 7, "file": ["a"], "description": {"x": 1}},
    {"ts": 5, "health": 3, "health_reasons": "long", "match": "yes", "origin": "agent", "agent": 4,
     "session_id": [1]},
]


@pytest.mark.parametrize("bad", BAD_NOTES)
def test_a_teammates_ill_typed_note_line_never_crashes_outcomes(team_repo, capsys, bad):
    repo, _ = team_repo
    line = {"id": "1111111111111111", "type": "outcome", "ts": "2026-12-01T00:00:00+00:00",
            "verdict": "accepted", **bad}
    good = {"id": "2222222222222222", "type": "outcome", "ts": "2026-12-02T00:00:00+00:00",
            "verdict": "modified", "commit": "c" * 40, "file": "src/app.py",
            "facts": [{"id": "abcdabcdabcdabcd", "confidence": [0.5, 0.3], "success_count": [0, 0]}]}
    note = "\n".join(json.dumps(r) for r in (line, good)) + "\n"
    git(repo, "notes", "--ref=refs/notes/neo", "add", "-m", note, "HEAD")
    for argv in (["outcomes"], ["outcomes", "--json"]):
        result = neo(capsys, *argv)
        assert result.code == 0, result.err
        assert "src/app.py" in result.out and "0.50 -> 0.30" in result.out or argv[-1] == "--json"
    data = json.loads(neo(capsys, "outcomes", "--json").out)
    assert {r["id"] for r in data["outcomes"]} == {"1111111111111111", "2222222222222222"}
    result = neo(capsys, "report", "--out", str(repo.parent / "report.html"))
    assert result.code == 0, result.err
