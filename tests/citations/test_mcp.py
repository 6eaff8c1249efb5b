"""An agent's `add_fact` through a real MCP session may cite what it edited in this turn (the work
tree, before any commit); `recall` takes the file being worked on."""
from __future__ import annotations

import pytest

from tests.helpers.citations import citations, process
from tests.helpers.git import commit_files, git
from tests.helpers.mcp import run_session

pytest.importorskip("mcp")

NEW = "def backoff(attempt, base=0.1, cap=5.0):\n    return min(cap, base * 2 ** attempt)\n"


@pytest.mark.timeout(90)
def test_add_fact_cites_a_file_edited_this_turn_and_the_commit_keeps_it_verified(repo_with_commit):
    repo = repo_with_commit
    (repo / "src").mkdir()
    (repo / "src" / "retry.py").write_text(NEW)           # written by the agent, not committed

    async def script(session):
        added = await session.call_tool("add_fact", {
            "subject": "Backoff is capped", "body": "backoff never waits more than 5 s.", "kind": "pattern",
            "cites": ["src/retry.py:backoff"], "paths": ["src/**"]})
        bad = await session.call_tool("add_fact", {"subject": "x", "cites": ["src/retry.py:bakoff"]})
        recalled = await session.call_tool("recall", {"query": "anything", "file": "src/retry.py", "format": "json"})
        return added, bad, recalled

    added, bad, recalled = run_session(repo, script)
    fact = added.structured_content["fact"]
    [citation] = fact["metadata"]["citations"]
    assert citation["path"] == "src/retry.py" and citation["symbol"] == "backoff" and "commit" not in citation
    assert fact["metadata"]["paths"] == ["src/**"]
    assert bad.is_error and "did you mean backoff?" in bad.content[0].text
    assert recalled.structured_content["file_facts"] == [fact["id"]]
    commit_files(repo, {"src/retry.py": NEW}, "add backoff")
    process(repo)
    [after] = citations(repo, fact["id"])
    assert after["state"] == "verified"
    assert git(repo, "log", "-1", "--format=%s", "refs/neo/facts").startswith("add ")   # nothing to record
