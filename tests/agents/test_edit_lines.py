"""Issue 32, item 4: an agent's fragment edit is recorded as the whole lines it changes, so a
verbatim ship is ACCEPTED and a changed one MODIFIED. The real PostToolUse hook records the
edit, a real `git commit` ships it, the outcome worker classifies it."""
from __future__ import annotations

import pytest

from neo_git.agents.edit_lines import lines_holding, patch_lines, redo_replacement
from neo_git.identity import open_repository, repository_paths
from neo_git.outcomes.suggestions import load_suggestions
from tests.helpers.agents import payload, run_hook
from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import process_head

BEFORE = "import os\n\nTIMEOUT = 5  # seconds\nRETRIES = 3\n"
AFTER = "import os\n\nTIMEOUT = 10  # seconds\nRETRIES = 3\n"
PATCH = [{"oldStart": 1, "oldLines": 4, "newStart": 1, "newLines": 4,
          "lines": [" import os", " ", "-TIMEOUT = 5  # seconds", "+TIMEOUT = 10  # seconds", " RETRIES = 3"]}]
RESPONSES = {
    # What Claude Code hands PostToolUse today: the original file and the hunks it applied.
    "structured patch": {"filePath": "{file}", "oldString": "TIMEOUT = 5", "newString": "TIMEOUT = 10",
                         "originalFile": BEFORE, "structuredPatch": PATCH, "userModified": False,
                         "replaceAll": False},
    "original file only": {"filePath": "{file}", "originalFile": BEFORE},
    "no detail": {"success": True},   # older payloads: the file on disk is read instead
}


def _edit_payload(repo, response: dict) -> dict:
    data = payload("claude_pre_tool_use_edit", repo, hook_event_name="PostToolUse")
    file = str(repo / "src" / "config.py")
    data["tool_input"] = {"file_path": file, "old_string": "TIMEOUT = 5", "new_string": "TIMEOUT = 10",
                          "replace_all": False}
    data["tool_response"] = {k: (file if v == "{file}" else v) for k, v in response.items()}
    return data


def _claude_edits_timeout(repo, response: dict) -> None:
    commit_files(repo, {"src/config.py": BEFORE}, "config")
    (repo / "src" / "config.py").write_text(AFTER, encoding="utf-8")   # what the Edit tool did
    code, _, _ = run_hook("post-tool-use", "claude", _edit_payload(repo, response))
    assert code == 0


@pytest.mark.parametrize("shape", sorted(RESPONSES))
def test_fragment_edit_shipped_verbatim_is_accepted(repo_with_commit, shape):
    repo = repo_with_commit
    _claude_edits_timeout(repo, RESPONSES[shape])
    (recorded,) = load_suggestions(repository_paths(open_repository(repo)))
    assert recorded.code.strip() == "TIMEOUT = 10  # seconds"
    git(repo, "commit", "-q", "-am", "longer timeout")
    process_head(repo)
    (suggestion,) = load_suggestions(repository_paths(open_repository(repo)))
    assert suggestion.status == "accepted", suggestion.outcome
    assert suggestion.outcome["match"]["added_lines"] == 1


def test_fragment_edit_changed_before_the_commit_is_modified(repo_with_commit):
    repo = repo_with_commit
    _claude_edits_timeout(repo, RESPONSES["structured patch"])
    (repo / "src" / "config.py").write_text(AFTER.replace("10", "15"), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "a longer timeout still")
    process_head(repo)
    (suggestion,) = load_suggestions(repository_paths(open_repository(repo)))
    assert suggestion.status == "modified", suggestion.outcome


def test_multiedit_fragments_become_their_lines(repo_with_commit):
    repo = repo_with_commit
    commit_files(repo, {"src/config.py": BEFORE}, "config")
    (repo / "src" / "config.py").write_text(AFTER.replace("RETRIES = 3", "RETRIES = 5"), encoding="utf-8")
    data = payload("claude_post_tool_use_multiedit", repo)
    data["tool_input"] = {"file_path": str(repo / "src" / "config.py"), "edits": [
        {"old_string": "TIMEOUT = 5", "new_string": "TIMEOUT = 10"},
        {"old_string": "RETRIES = 3", "new_string": "RETRIES = 5"}]}
    assert run_hook("post-tool-use", "claude", data)[0] == 0
    git(repo, "commit", "-q", "-am", "longer timeout, more retries")
    process_head(repo)
    (suggestion,) = load_suggestions(repository_paths(open_repository(repo)))
    assert suggestion.code.splitlines() == ["TIMEOUT = 10  # seconds", "RETRIES = 5"]
    assert suggestion.status == "accepted", suggestion.outcome


@pytest.mark.parametrize("shipped, verdict", [("TIMEOUT = 10  # seconds", "accepted"),
                                              ("TIMEOUT = 12  # seconds", "modified")])
def test_codex_patch_hunk_is_matched_as_it_ships(repo_with_commit, shipped, verdict):
    repo = repo_with_commit
    commit_files(repo, {"src/config.py": BEFORE}, "config")
    data = payload("codex_post_tool_use_apply_patch", repo)
    data["tool_input"]["command"] = ("*** Begin Patch\n*** Update File: src/config.py\n@@\n"
                                     "-TIMEOUT = 5  # seconds\n+TIMEOUT = 10  # seconds\n*** End Patch\n")
    assert run_hook("post-tool-use", "codex", data)[0] == 0
    (repo / "src" / "config.py").write_text(BEFORE.replace("TIMEOUT = 5  # seconds", shipped), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "timeout")
    process_head(repo)
    (suggestion,) = load_suggestions(repository_paths(open_repository(repo)))
    assert suggestion.status == verdict, suggestion.outcome


def test_replacement_is_redone_to_whole_lines():
    assert redo_replacement(BEFORE, "TIMEOUT = 5", "TIMEOUT = 10") == (["TIMEOUT = 5  # seconds"],
                                                                        ["TIMEOUT = 10  # seconds"])
    # A fragment spanning two lines, one ending with its newline, every occurrence, an absent one.
    assert redo_replacement("a = 1\nb = 2\nc = 3\n", "1\nb", "10\nbb") == (["a = 1", "b = 2"], ["a = 10", "bb = 2"])
    assert redo_replacement("x = 1\ny = 2\n", "x = 1\n", "x = 3\n") == (["x = 1"], ["x = 3"])
    assert redo_replacement("f(1)\ng(1)\n", "(1)", "(2)", every=True) == (["f(1)", "g(1)"], ["f(2)", "g(2)"])
    assert redo_replacement("f(1)\n", "(9)", "(2)") is None
    assert lines_holding("a\n  b = x\nc\n", "b = x") == ["  b = x"]
    assert lines_holding("a\n", "zz") is None
    assert patch_lines("not a patch") is None
    assert patch_lines(PATCH)[:2] == (["TIMEOUT = 5  # seconds"], ["TIMEOUT = 10  # seconds"])
