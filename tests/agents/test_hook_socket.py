"""The agent's running `git neo mcp` server answers whole hooks over `.git/neo/agent.sock`:
twenty at once within the limit, from a hook process that loads neither numpy, pygit2 nor
the store, with turn records and de-duplication kept, and only what the agent printed
recorded as given."""
from __future__ import annotations

import json
import socket
import time

import pytest

from neo_git.agents.session_state import load_state, state_path
from neo_git.agents.turns import load_turns
from neo_git.agents.wire import PROTOCOL, Reader, send
from neo_git.identity import open_repository, repository_paths
from neo_git.outcomes.suggestions import load_suggestions
from neo_git.store import FactStore
from tests.helpers.agents import McpServer, finish, payload, run_hook_process, spawn_hook
from tests.helpers.git import git

pytest.importorskip("mcp")

HTTP_BODY = "All outbound HTTP goes through httpx with a 30 s timeout."


@pytest.fixture
def repo(repo_with_commit):
    store = FactStore.open(repo_with_commit)
    store.add("No network in hooks", "Post-commit work must never touch the network.", kind="constraint")
    store.add("HTTP client", HTTP_BODY, kind="decision", confidence=0.9)
    return repo_with_commit


def paths_of(repo):
    return repository_paths(open_repository(repo))


def context_of(out: bytes) -> str:
    return json.loads(out)["hookSpecificOutput"]["additionalContext"]


def prompt(repo, session: str, text: str = "Which HTTP client should the importer use?") -> bytes:
    return json.dumps(payload("claude_user_prompt_submit", repo, session_id=session, prompt=text)).encode()


def test_twenty_prompt_hooks_at_once_all_answer_within_the_default_limit(repo, monkeypatch):
    monkeypatch.delenv("NEO_AGENT_HOOK_TIMEOUT_MS", raising=False)     # the real limit: 1.5 s from the spawn
    with McpServer(repo):
        finish(spawn_hook("prompt-submit", "claude", prompt(repo, "warm-up"), repo))   # the server loads the store once
        procs = [spawn_hook("prompt-submit", "claude", prompt(repo, f"s{n}"), repo, close=n % 2 == 0)
                 for n in range(20)]                                     # half never close stdin
        results = [finish(proc) for proc in procs]
    assert [code for code, _, _ in results] == [0] * 20
    answered = [HTTP_BODY in context_of(out) for _, out, _ in results if out.strip()]
    assert answered == [True] * 20                                       # every one in time, with its context
    paths = paths_of(repo)
    for n in range(20):                                                  # each session's record is kept
        state = load_state(state_path(paths, "claude", f"s{n}"))
        assert state.given and state.turn_facts
    turns = {t.session_id: t for t in load_turns(paths)}
    assert all(turns[f"s{n}"].injected and turns[f"s{n}"].terminal_state is None for n in range(20))


def test_a_hook_the_server_answers_loads_neither_numpy_pygit2_nor_the_store(repo):
    with McpServer(repo):
        proc = spawn_hook("prompt-submit", "claude", prompt(repo, "cheap"), repo, python_flags=("-X", "importtime"))
        code, out, err = finish(proc)
    assert code == 0 and HTTP_BODY in context_of(out)
    imported = {line.rsplit("|", 1)[-1].strip() for line in err.decode().splitlines() if line.startswith("import time:")}
    assert "neo_git.agents.hook_process" in imported                     # the list is real
    heavy = {name for name in imported if name.split(".")[0] in ("numpy", "pygit2")
             or name.startswith(("neo_git.store", "neo_git.facts", "neo_git.recall", "neo_git.embed"))}
    assert heavy == set()


def test_what_a_hook_never_printed_is_not_recorded_as_given(repo):
    paths = paths_of(repo)
    raw = prompt(repo, "lost")
    with McpServer(repo) as server:
        # A hook process that ran out of time after the answer came but before it printed it:
        # the answer is read, no ack is sent.
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(str(server.socket))
        send(conn, {"op": "hook", "v": PROTOCOL, "args": ["prompt-submit", "--agent", "claude"],
                    "spawned": time.monotonic(), "limit_ms": 20000, "limit_fixed": True,
                    "git_dir": str(paths.git_dir), "size": len(raw)}, raw)
        reader = Reader(conn)
        lines = [reader.line(time.monotonic() + 30), reader.line(time.monotonic() + 30)]
        conn.close()
        assert lines[0] == {"limit_ms": 20000} and HTTP_BODY in lines[1]["output"]["hookSpecificOutput"]["additionalContext"]
        time.sleep(0.5)
        assert load_state(state_path(paths, "claude", "lost")).given == []    # not recorded: never shown
        (turn,) = [t for t in load_turns(paths) if t.session_id == "lost"]
        assert turn.injected == ()                                       # the turn itself did start
        code, out, _ = finish(spawn_hook("prompt-submit", "claude", raw, repo))
        assert code == 0 and HTTP_BODY in context_of(out)                # so the next prompt gets it
        code, out, _ = finish(spawn_hook("prompt-submit", "claude", prompt(repo, "lost", "And the HTTP timeout?"), repo))
    assert code == 0 and (not out.strip() or HTTP_BODY not in context_of(out))   # and then never again
    given = load_state(state_path(paths, "claude", "lost")).given
    assert len(given) == len(set(given)) > 0


def test_a_session_through_the_server_keeps_turns_edits_and_de_duplication(repo):
    with McpServer(repo):
        code, out, _ = run_hook_process("session-start", "claude",
                                        json.dumps(payload("claude_session_start", repo)).encode(), repo)
        assert code == 0 and "No network in hooks" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
        FactStore.open(repo).add("Importer retries", "The importer retries 429 responses with backoff and jitter.",
                                 kind="pattern")   # written elsewhere while the server runs
        code, out, _ = run_hook_process("prompt-submit", "claude",
                                        json.dumps(payload("claude_user_prompt_submit", repo)).encode(), repo)
        text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert "Importer retries" in text and "No network in hooks" not in text and "HTTP client" not in text
        code, out, _ = run_hook_process("post-tool-use", "claude",
                                        json.dumps(payload("claude_post_tool_use_write", repo)).encode(), repo)
        assert code == 0
        code, out, _ = run_hook_process("stop", "codex", json.dumps(payload("codex_stop", repo)).encode(), repo)
        assert code == 0 and json.loads(out) == {}                      # Codex wants JSON on a Stop hook's stdout
        code, out, _ = run_hook_process("stop", "claude", json.dumps(payload("claude_stop", repo)).encode(), repo)
        assert code == 0 and out == ""
    (suggestion,) = load_suggestions(paths_of(repo))
    (turn,) = [t for t in load_turns(paths_of(repo)) if t.agent == "claude"]
    assert suggestion.origin == "agent" and suggestion.turn_id == turn.turn_id and suggestion.context_ids
    assert turn.terminal_state == "completed"
    assert [entry["hook"] for entry in turn.injected] == ["session-start", "prompt-submit"]


def test_a_linked_worktree_is_answered_with_its_own_store_by_the_main_worktrees_server(repo, tmp_path):
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "-b", "side", str(other))
    FactStore.open(other).add("Side branch rule", "On the side branch the HTTP client is aiohttp.", kind="decision",
                              scope="session")
    with McpServer(repo):
        code, out, _ = run_hook_process("prompt-submit", "claude", prompt(other, "wt", "Which HTTP client, aiohttp?"),
                                        other)
    assert code == 0 and "aiohttp" in json.loads(out)["hookSpecificOutput"]["additionalContext"]   # its own session facts


def test_a_killed_servers_socket_file_is_passed_over_and_then_replaced(repo):
    neo_dir = paths_of(repo).neo_dir
    neo_dir.mkdir(parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(neo_dir / "agent.sock"))
    dead.close()                                                         # a killed server's leftover
    code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, "stale"), repo,
                                    env={"NEO_AGENT_HOOK_TIMEOUT_MS": "20000"})
    assert code == 0 and HTTP_BODY in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    with McpServer(repo):                                                # a new server takes the path over
        code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, "fresh"), repo)
        assert code == 0 and HTTP_BODY in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert not (neo_dir / "agent.sock").exists()                         # and removes it when it ends
