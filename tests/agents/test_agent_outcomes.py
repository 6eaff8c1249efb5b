"""An agent's edit, recorded by the post-tool-use hook, goes through the outcome loop:
committed unchanged it is ACCEPTED, edited by hand first it is MODIFIED, and
`git neo outcomes` attributes it to the agent session and turn."""
from __future__ import annotations

import json

from neo_git.cli import main
from neo_git.identity import open_repository, repository_paths
from neo_git.outcomes.suggestions import load_suggestions
from neo_git.store import FactStore
from tests.agents.helpers import payload, run_hook
from tests.conftest import commit_files, git
from tests.outcome_helpers import process_head

WRITTEN = ("import httpx\n\n\ndef fetch(url):\n    with httpx.Client(timeout=30) as client:\n"
           "        return client.get(url).json()\n")


def _agent_turn(repo):
    fact = FactStore.open(repo).add("HTTP client", "All outbound HTTP goes through httpx with a 30 s timeout.",
                                    kind="decision", confidence=0.6)
    run_hook("prompt-submit", "claude", payload("claude_user_prompt_submit", repo))
    data = payload("claude_post_tool_use_write", repo)
    data["tool_input"]["content"] = WRITTEN
    run_hook("post-tool-use", "claude", data)
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src" / "importer.py").write_text(WRITTEN, encoding="utf-8")   # what the Write tool did
    return fact


def test_agent_edit_committed_unchanged_is_accepted_and_attributed(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    fact = _agent_turn(repo)
    git(repo, "add", "src/importer.py")
    git(repo, "commit", "-q", "-m", "importer over httpx")
    process_head(repo)
    (suggestion,) = load_suggestions(repository_paths(open_repository(repo)))
    assert suggestion.status == "accepted" and suggestion.agent == "claude"
    assert fact.id in suggestion.fact_ids
    moved = FactStore.open(repo).get(fact.id)
    assert moved.metadata.success_count == 1 and moved.metadata.confidence > fact.metadata.confidence
    monkeypatch.chdir(repo)
    assert main(["outcomes", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["agents"]["claude"]["accepted"] == 1 and report["agents"]["claude"]["shipped_unchanged"] == 1.0
    assert "c0ffee00-1111-2222-3333-444455556666" in report["agents"]["claude"]["sessions"]
    assert main(["outcomes"]) == 0
    assert "agent claude: 1 of 1 recorded edits shipped as written (100%)" in capsys.readouterr().out


def test_agent_edit_changed_by_hand_before_the_commit_is_modified(repo_with_commit):
    repo = repo_with_commit
    fact = _agent_turn(repo)
    commit_files(repo, {"src/importer.py": "import requests\n\n\ndef fetch(url):\n"
                                           "    return requests.get(url, timeout=5).json()\n"}, "importer by hand")
    process_head(repo)
    (suggestion,) = load_suggestions(repository_paths(open_repository(repo)))
    assert suggestion.status == "modified"
    assert FactStore.open(repo).get(fact.id).metadata.confidence < fact.metadata.confidence
    records = [json.loads(line) for line in git(repo, "notes", "--ref=neo", "show", "HEAD").splitlines()]
    outcome = next(r for r in records if r.get("type") == "outcome")
    assert outcome["origin"] == "agent" and outcome["session_id"] == "c0ffee00-1111-2222-3333-444455556666"
