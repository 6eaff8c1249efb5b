"""An agent's edit, recorded by the post-tool-use hook, goes through the outcome loop:
committed unchanged it is ACCEPTED, edited by hand first it is MODIFIED, and
`git neo outcomes` attributes it to the agent session and turn."""
from __future__ import annotations

import json

from neo_git.cli import main
from neo_git.identity import open_repository, repository_paths
from neo_git.outcomes.suggestions import load_suggestions
from neo_git.store import FactStore
from tests.helpers.agents import payload, run_hook
from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import process_head

WRITTEN = ("import httpx\n\n\ndef fetch(url):\n    with httpx.Client(timeout=30) as client:\n"
           "        return client.get(url).json()\n")


def _agent_turn(repo):
    """A turn in which the agent is given two facts (with the prompt, or before it writes
    src/importer.py): one scoped to that file (the edit relies on it) and a general one (merely
    present). Returns (scoped fact, general fact)."""
    store = FactStore.open(repo)
    fact = store.add("Timeouts under src", "Every client created under src/ sets an explicit 30 second timeout.",
                     kind="decision", confidence=0.6, paths=["src/**"])
    general = store.add("HTTP client", "All outbound HTTP goes through httpx.", kind="decision", confidence=0.6)
    assert {f.id for f in store.list()} == {fact.id, general.id}
    _, out, _ = run_hook("prompt-submit", "claude", payload("claude_user_prompt_submit", repo))
    given = out["hookSpecificOutput"]["additionalContext"]
    data = payload("claude_post_tool_use_write", repo)
    data["tool_input"]["content"] = WRITTEN
    _, out, _ = run_hook("pre-tool-use", "claude", {**data, "hook_event_name": "PreToolUse"})
    given += out["hookSpecificOutput"]["additionalContext"] if out else ""
    assert fact.id in given and general.id in given
    run_hook("post-tool-use", "claude", data)
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src" / "importer.py").write_text(WRITTEN, encoding="utf-8")   # what the Write tool did
    return fact, general


def test_agent_edit_committed_unchanged_is_accepted_and_attributed(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    fact, general = _agent_turn(repo)
    git(repo, "add", "src/importer.py")
    git(repo, "commit", "-q", "-m", "importer over httpx")
    process_head(repo)
    (suggestion,) = load_suggestions(repository_paths(open_repository(repo)))
    assert suggestion.status == "accepted" and suggestion.agent == "claude"
    assert {fact.id, general.id} == set(suggestion.fact_ids) | set(suggestion.context_ids)
    moved = FactStore.open(repo).get(fact.id)
    assert moved.metadata.success_count == 1 and moved.metadata.confidence > fact.metadata.confidence
    present = FactStore.open(repo).get(general.id)   # in the context, not about the file: untouched
    assert present.metadata.success_count == 0 and present.metadata.confidence == 0.6
    monkeypatch.chdir(repo)
    assert main(["outcomes", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["agents"]["claude"]["accepted"] == 1 and report["agents"]["claude"]["shipped_unchanged"] == 1.0
    assert "c0ffee00-1111-2222-3333-444455556666" in report["agents"]["claude"]["sessions"]
    assert main(["outcomes"]) == 0
    assert "agent claude: 1 of 1 recorded edits shipped as written (100%)" in capsys.readouterr().out


def test_agent_edit_changed_by_hand_before_the_commit_is_modified(repo_with_commit):
    repo = repo_with_commit
    fact, general = _agent_turn(repo)
    commit_files(repo, {"src/importer.py": "import requests\n\n\ndef fetch(url):\n"
                                           "    return requests.get(url, timeout=5).json()\n"}, "importer by hand")
    process_head(repo)
    (suggestion,) = load_suggestions(repository_paths(open_repository(repo)))
    assert suggestion.status == "modified"
    # Restyled by hand: used, a little support (issue 32), and nothing for the fact merely present.
    assert abs(FactStore.open(repo).get(fact.id).metadata.confidence - 0.65) < 1e-9
    assert FactStore.open(repo).get(general.id).metadata.confidence == 0.6
    records = [json.loads(line) for line in git(repo, "notes", "--ref=neo", "show", "HEAD").splitlines()]
    outcome = next(r for r in records if r.get("type") == "outcome")
    assert outcome["origin"] == "agent" and outcome["session_id"] == "c0ffee00-1111-2222-3333-444455556666"
