"""Issue 32, items 2 and 3: an outcome moves only the facts the advice relied on, and a fact
loses confidence only on evidence against it (advice that relied on it abandoned or reverted).
Real agent hooks record the edits, real `git commit` / `git revert` ship them, the outcome
worker classifies them."""
from __future__ import annotations

import json
from dataclasses import replace

from neo_git.agents.handlers import relied_by_edit
from neo_git.agents.payload import FileEdit
from neo_git.identity import open_repository, repository_paths
from neo_git.outcomes.suggestions import load_suggestions, suggestions_path, update_suggestions
from neo_git.store import FactStore
from tests.helpers.agents import payload, run_hook
from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import BASE, RETRY, fact, note, process_head, setup_repo, suggest

CLIENT = 'import httpx\n\nBASE_URL = "https://api.example.com"\n\n\ndef client():\n    return httpx.Client(base_url=BASE_URL)\n'
WITH_AGENT = CLIENT.replace('BASE_URL = "https://api.example.com"\n',
                            'BASE_URL = "https://api.example.com"\nUSER_AGENT = "neo-client/1.0"\n')


def _suggestions(repo):
    return {s.id: s for s in load_suggestions(repository_paths(open_repository(repo)))}


def test_injected_but_unrelated_constraint_keeps_its_confidence(repo_with_commit):
    """The reproduction: the prompt hook injected a "No print()" constraint, the agent added a
    USER_AGENT constant, the commit must leave the constraint at 0.50 (it was raised to 0.70)."""
    repo = repo_with_commit
    commit_files(repo, {"src/client.py": CLIENT}, "client")
    store = FactStore.open(repo)
    no_print = store.add("No print()", "Library code logs through the logging module; never call print().",
                         kind="constraint", confidence=0.5)
    headers = store.add("Client headers", "Every request from src/client.py identifies itself with a "
                        "User-Agent header.", kind="decision", confidence=0.5, paths=["src/client.py"])
    _, out, _ = run_hook("prompt-submit", "claude", payload(
        "claude_user_prompt_submit", repo, prompt="Add a USER_AGENT constant to the HTTP client module"))
    given = out["hookSpecificOutput"]["additionalContext"]
    assert no_print.id in given
    edit = _edit(repo)
    _, out, _ = run_hook("pre-tool-use", "claude", edit)
    given += out["hookSpecificOutput"]["additionalContext"] if out else ""
    assert headers.id in given   # with the prompt, or for the file it edits
    (repo / "src" / "client.py").write_text(WITH_AGENT, encoding="utf-8")   # what the Edit tool did
    assert run_hook("post-tool-use", "claude", {**edit, "hook_event_name": "PostToolUse",
                                                "tool_response": {"success": True}})[0] == 0
    git(repo, "commit", "-q", "-am", "identify the client")
    process_head(repo)

    (suggestion,) = _suggestions(repo).values()
    assert suggestion.status == "accepted" and no_print.id in suggestion.context_ids
    constraint = fact(repo, no_print.id)
    assert constraint.metadata.confidence == 0.5 and constraint.metadata.success_count == 0
    used = fact(repo, headers.id)
    assert abs(used.metadata.confidence - 0.7) < 1e-9 and used.metadata.success_count == 1
    [record] = [r for r in note(repo) if r["type"] == "outcome"]
    assert [m["id"] for m in record["facts"]] == [headers.id]
    [review] = [f for f in FactStore.open(repo).list(kind="review") if "outcome" in f.tags]
    assert "not relied on" in review.body and no_print.id in review.body


def _edit(repo) -> dict:
    """A Claude Code Edit of src/client.py adding the USER_AGENT line (PreToolUse)."""
    edit = payload("claude_pre_tool_use_edit", repo)
    edit["tool_input"] = {"file_path": str(repo / "src" / "client.py"),
                          "old_string": 'BASE_URL = "https://api.example.com"',
                          "new_string": 'BASE_URL = "https://api.example.com"\nUSER_AGENT = "neo-client/1.0"'}
    return edit


def test_a_fact_given_for_the_edited_file_is_relied_on(repo_with_commit):
    repo = repo_with_commit
    commit_files(repo, {"src/client.py": CLIENT, "src/other.py": "X = 1\n"}, "client")
    store = FactStore.open(repo)
    scoped = store.add("Client module", "Module constants in src/client.py are upper case.", paths=["src/client.py"])
    elsewhere = store.add("Other module", "src/other.py holds the retry budget.", paths=["src/other.py"])
    edit = _edit(repo)
    _, out, _ = run_hook("pre-tool-use", "claude", edit)
    assert scoped.id in out["hookSpecificOutput"]["additionalContext"]
    other = {**edit, "tool_input": {"file_path": str(repo / "src" / "other.py"), "old_string": "X = 1",
                                    "new_string": "X = 2"}}
    assert elsewhere.id in run_hook("pre-tool-use", "claude", other)[1]["hookSpecificOutput"]["additionalContext"]
    (repo / "src" / "client.py").write_text(WITH_AGENT, encoding="utf-8")
    assert run_hook("post-tool-use", "claude", {**edit, "hook_event_name": "PostToolUse"})[0] == 0
    (suggestion,) = _suggestions(repo).values()
    assert suggestion.fact_ids == (scoped.id,) and suggestion.context_ids == (elsewhere.id,)


def test_an_agent_suggestion_recorded_before_reliance_was_kept_apart_credits_only_its_files_facts(repo_with_commit):
    """A suggestions file written by an older version lists every fact of the agent's turn."""
    repo = repo_with_commit
    unrelated = setup_repo(repo)
    store = FactStore.open(repo)
    about_db = store.add("Database access", "Everything in src/db.py goes through one connection pool.",
                         kind="decision", paths=["src/db.py"]).id
    made = suggest(repo, RETRY, [unrelated, about_db], origin="agent", agent="claude", session_id="old-session")
    paths = repository_paths(open_repository(repo))
    update_suggestions(paths, lambda current: [replace(x, context_ids=None) for x in current])   # as written then
    stored = json.loads(suggestions_path(paths).read_text())["suggestions"]
    assert [x["id"] for x in stored] == [made.id] and "context_ids" not in stored[0]
    commit_files(repo, {"src/db.py": BASE + "\n\n" + RETRY}, "retry helper")
    process_head(repo)
    assert fact(repo, unrelated).metadata.confidence == 0.5
    [record] = [r for r in note(repo) if r["type"] == "outcome"]
    assert record["verdict"] == "accepted" and [m["id"] for m in record["facts"]] == [about_db]
    assert fact(repo, about_db).metadata.confidence > 0.5


def test_named_facts_of_an_agent_suggestion_through_mcp_are_relied_on(repo_with_commit):
    """MCP `suggest` with an agent name: the facts it names are relied on (not context)."""
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    s = suggest(repo, RETRY, [fact_id], origin="agent", agent="claude")
    assert s.context_ids == ()
    commit_files(repo, {"src/db.py": BASE + "\n\n" + RETRY}, "retry helper")
    process_head(repo)
    assert fact(repo, fact_id).metadata.success_count == 1


def test_an_edit_names_the_facts_it_relies_on():
    turn = ["0123456789abcdef", "fedcba9876543210", "aaaaaaaabbbbbbbb"]
    edit = FileEdit("src/a.py", "# per neo fact [fact:0123456789abcdef]\nTIMEOUT = 10\n", "@@\n+# see fedcba98\n")
    assert relied_by_edit(edit, ["1111111111111111"], turn) == ["1111111111111111", "0123456789abcdef",
                                                                "fedcba9876543210"]
    assert relied_by_edit(FileEdit("src/a.py", "x = 1\n"), [], turn) == []


def test_abandoned_advice_costs_the_facts_it_relied_on(repo_with_commit):
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    s = suggest(repo, RETRY, [fact_id], description="extract the retry loop")
    commit_files(repo, {"src/db.py": BASE + "\n\ndef close():\n    return None if os else 1\n"}, "something else")
    process_head(repo)
    assert _suggestions(repo)[s.id].status == "abandoned"
    moved = fact(repo, fact_id)
    assert abs(moved.metadata.confidence - 0.4) < 1e-9 and moved.metadata.success_count == 0
    [record] = [r for r in note(repo) if r["type"] == "outcome"]
    assert record["verdict"] == "abandoned" and record["facts"][0]["confidence"] == [0.5, 0.4]
    before = git(repo, "rev-parse", "refs/neo/facts")
    process_head(repo)   # a repeat changes nothing
    assert git(repo, "rev-parse", "refs/neo/facts") == before


def test_a_draft_its_own_author_revised_costs_nothing(repo_with_commit):
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    draft = suggest(repo, "def fetch_all(urls):\n    results = [fetch(u) for u in urls]\n", [fact_id],
                    origin="agent", agent="claude", session_id="s-1", context_ids=[])
    final = suggest(repo, RETRY, [fact_id], origin="agent", agent="claude", session_id="s-1", context_ids=[])
    commit_files(repo, {"src/db.py": BASE + "\n\n" + RETRY}, "retry helper")
    process_head(repo)
    statuses = _suggestions(repo)
    assert statuses[draft.id].status == "abandoned" and statuses[final.id].status == "accepted"
    [record] = [r for r in note(repo) if r.get("suggestion") == draft.id]
    assert record["revised_by"] == final.id and record["facts"] == []
    from neo_git.cli.outcomes import format_outcome

    assert f"revised by its author's later suggestion {final.id[:8]}" in format_outcome(record)
    [shipped] = [r for r in note(repo) if r.get("suggestion") == final.id]
    gained = shipped["facts"][0]["confidence"]   # the final's gain, and nothing else
    assert gained[0] == 0.5 and fact(repo, fact_id).metadata.confidence == gained[1] > 0.5


def test_a_revert_takes_back_what_the_shipped_advice_gained(repo_with_commit):
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    suggest(repo, RETRY, [fact_id])
    commit_files(repo, {"src/db.py": BASE + "\n\n" + RETRY}, "retry helper")
    process_head(repo)
    accepted = fact(repo, fact_id).metadata
    assert accepted.success_count == 1 and accepted.confidence > 0.5
    git(repo, "revert", "--no-edit", "HEAD")
    process_head(repo)
    reverted = fact(repo, fact_id)
    assert abs(reverted.metadata.confidence - (accepted.confidence - 0.2)) < 1e-9
    assert reverted.metadata.success_count == 0
    [record] = [r for r in note(repo) if r.get("verdict") == "reverted"]
    assert record["facts"][0]["id"] == fact_id
    before = git(repo, "rev-parse", "refs/neo/facts")
    process_head(repo)   # a repeat changes nothing
    assert git(repo, "rev-parse", "refs/neo/facts") == before
