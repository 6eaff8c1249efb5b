"""Agents get the facts of the file they are about to edit: Claude Code PreToolUse on Edit/Write/
MultiEdit and Codex PreToolUse on apply_patch inject the path-scoped and cited facts the session
has not seen (PostToolUse of both, what the PreToolUse hook missed); a path-scoped constraint
stays out of unrelated prompts."""
from __future__ import annotations

import pytest

from neo_git.store import FactStore
from tests.helpers.agents import payload, run_hook
from tests.helpers.git import commit_files

IMPORTER = "import httpx\n\n\ndef fetch(url):\n    with httpx.Client(timeout=30) as client:\n        return client.get(url).json()\n"


@pytest.fixture
def repo(repo_with_commit):
    commit_files(repo_with_commit, {"src/importer.py": IMPORTER, "migrations/001_init.sql": "CREATE TABLE t (id int);\n"})
    store = FactStore.open(repo_with_commit)
    ids = {
        "orm": store.add("No ORM in migrations", "Migrations use raw SQL only.", kind="constraint",
                         paths=["migrations/**"]).id,
        "global": store.add("No network in hooks", "Post-commit work must never touch the network.",
                            kind="constraint").id,
        "timeout": store.add("Importer timeout", "fetch uses a 30 s timeout because the vendor is slow.",
                             kind="decision", cites=["src/importer.py:fetch"]).id,
    }
    return repo_with_commit, ids


def test_claude_pre_tool_use_injects_the_path_scoped_constraint_once(repo):
    repo, ids = repo
    code, out, _ = run_hook("pre-tool-use", "claude", payload("claude_pre_tool_use_edit", repo))
    assert code == 0
    context = out["hookSpecificOutput"]
    assert context["hookEventName"] == "PreToolUse"
    text = context["additionalContext"]
    assert f"[fact:{ids['orm']}]" in text and "Migrations use raw SQL only." in text
    assert ids["global"] not in text and ids["timeout"] not in text
    assert "permissionDecision" not in context       # context only: the permission flow is the user's
    code, out, _ = run_hook("pre-tool-use", "claude", payload("claude_pre_tool_use_edit", repo))
    assert code == 0 and out is None                 # seen in this session already


def test_codex_apply_patch_gets_the_cited_fact_marked_stale_when_its_code_changed(repo):
    repo, ids = repo
    commit_files(repo, {"src/importer.py": IMPORTER.replace("timeout=30", "timeout=10")}, "shorter timeout")
    from tests.helpers.citations import process

    process(repo)
    code, out, _ = run_hook("pre-tool-use", "codex", payload("codex_pre_tool_use_apply_patch", repo))
    assert code == 0
    text = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert f"[fact:{ids['timeout']}]" in text and "STALE (cited code changed since" in text
    assert ids["orm"] not in text


def test_claude_post_tool_use_injects_what_the_pre_hook_did_not(repo):
    repo, ids = repo
    data = payload("claude_post_tool_use_write", repo)   # Write src/importer.py
    code, out, _ = run_hook("post-tool-use", "claude", data)
    assert code == 0 and out["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert f"[fact:{ids['timeout']}]" in out["hookSpecificOutput"]["additionalContext"]


def test_codex_post_tool_use_injects_what_the_pre_hook_did_not(repo):
    """Codex's PostToolUse output takes `hookSpecificOutput.additionalContext` too (its
    `PostToolUseHookSpecificOutputWire`); a file the PreToolUse hook already covered is not
    given twice."""
    repo, ids = repo
    code, out, _ = run_hook("post-tool-use", "codex", payload("codex_post_tool_use_apply_patch", repo))
    assert code == 0 and set(out) == {"hookSpecificOutput"}
    assert set(out["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert f"[fact:{ids['timeout']}]" in out["hookSpecificOutput"]["additionalContext"]
    code, out, _ = run_hook("post-tool-use", "codex", payload("codex_post_tool_use_apply_patch", repo))
    assert code == 0 and out is None


def test_a_path_scoped_constraint_is_not_always_apply_for_unrelated_prompts(repo):
    repo, ids = repo
    code, out, _ = run_hook("session-start", "claude", payload("claude_session_start", repo))
    start = out["hookSpecificOutput"]["additionalContext"]
    assert ids["global"] in start and ids["orm"] not in start
    code, out, _ = run_hook("prompt-submit", "claude", payload("claude_user_prompt_submit", repo))
    text = out["hookSpecificOutput"]["additionalContext"] if out else ""
    assert ids["orm"] not in text.split("Relevant facts")[0]      # never among the always-apply ones
    store = FactStore.open(repo)
    unrelated = store.recall("how do we fetch vendor data?")
    assert ids["orm"] not in [f.id for f in unrelated.constraints]
    on_file = store.recall("how do we fetch vendor data?", file="migrations/003_users.sql")
    assert ids["orm"] in [f.id for f in on_file.constraints]
