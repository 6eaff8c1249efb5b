"""The running MCP server answers the hooks' recalls over `.git/neo/agent.sock`."""
from __future__ import annotations

import os
import stat

from neo_git.agents.recall_socket import recall_via_server, serve_recalls, socket_path
from neo_git.identity import open_repository, repository_paths
from neo_git.store import FactStore
from tests.agents.helpers import payload, run_hook


def test_a_listening_server_answers_and_the_hook_uses_it(repo_with_commit, monkeypatch):
    store = FactStore.open(repo_with_commit)
    store.add("HTTP client", "All outbound HTTP goes through httpx with a 30 s timeout.", kind="decision")
    neo_dir = repository_paths(open_repository(repo_with_commit)).neo_dir
    assert recall_via_server(neo_dir, "http client") is None           # nobody listens yet
    calls = []

    def recall(query, k, max_tokens):
        calls.append(query)
        return store.recall(query, k=k, max_tokens=max_tokens).to_dict()

    stop = serve_recalls(neo_dir, recall)
    assert stop is not None
    try:
        assert stat.S_IMODE(os.stat(socket_path(neo_dir)).st_mode) == 0o600
        served = recall_via_server(neo_dir, "which http client?")
        assert [f["subject"] for f in served["valid_facts"]] == ["HTTP client"]
        assert serve_recalls(neo_dir, recall) is None                   # one live server per repository
        code, out, _ = run_hook("prompt-submit", "claude", payload("claude_user_prompt_submit", repo_with_commit))
        assert code == 0 and "HTTP client" in out["hookSpecificOutput"]["additionalContext"]
        assert calls[-1].startswith("Which HTTP client")                # the hook asked the server
    finally:
        stop()
    assert not socket_path(neo_dir).exists()
    code, out, _ = run_hook("prompt-submit", "claude",
                            payload("claude_user_prompt_submit", repo_with_commit, session_id="another"))
    assert "HTTP client" in out["hookSpecificOutput"]["additionalContext"]   # and falls back without one


def test_a_stale_socket_file_is_replaced(repo_with_commit):
    import socket

    neo_dir = repository_paths(open_repository(repo_with_commit)).neo_dir
    neo_dir.mkdir(parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(socket_path(neo_dir)))
    dead.close()                                                         # a killed server's leftover
    assert recall_via_server(neo_dir, "anything") is None
    stop = serve_recalls(neo_dir, lambda q, k, m: {"constraints": [], "valid_facts": [], "invalidated": []})
    assert stop is not None
    stop()
