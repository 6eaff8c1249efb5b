"""The agent socket works whatever the length of the path to `.git/neo/agent.sock` (or says why
not), and whatever listens there cannot stretch a hook past its own limit (issue 37)."""
from __future__ import annotations

import json
import os
import socket
import stat
import threading

import pytest

from neo_git.agents import wire
from neo_git.agents.hook_answer import ServedStore
from neo_git.agents.hook_socket import listening, serve_hooks
from neo_git.store import FactStore
from tests.helpers.agents import McpServer, finish, payload, run_hook_process, spawn_hook
from tests.helpers.git import commit_files, git

HTTP_BODY = "All outbound HTTP goes through httpx with a 30 s timeout."


def _store_facts(repo) -> None:
    store = FactStore.open(repo)
    store.add("No network in hooks", "Post-commit work must never touch the network.", kind="constraint")
    store.add("HTTP client", HTTP_BODY, kind="decision", confidence=0.9)


def _prompt(repo, session: str) -> bytes:
    return json.dumps(payload("claude_user_prompt_submit", repo, session_id=session,
                              prompt="Which HTTP client should the importer use?")).encode()


def _log(repo) -> str:
    log = repo / ".git" / "neo" / "hook.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


@pytest.fixture
def long_repo(tmp_path):
    """A repository whose `.git/neo/agent.sock` is longer than a unix socket address holds."""
    repo = tmp_path / ("a-rather-long-folder-name-" * 3) / ("and-another-one-" * 3) / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    commit_files(repo, {"README.md": "hello\n"}, "initial")
    assert len(os.fsencode(repo / ".git" / "neo" / "agent.sock")) > 108   # sun_path's 108 bytes, NUL included
    _store_facts(repo)
    return repo


def test_twenty_prompts_at_once_get_context_when_the_socket_path_is_long(long_repo):
    pytest.importorskip("mcp")
    sock = long_repo / ".git" / "neo" / "agent.sock"
    with McpServer(long_repo):                                           # it waits until the socket answers
        assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600   # where it belongs
        code, out, err = finish(spawn_hook("prompt-submit", "claude", _prompt(long_repo, "served"), long_repo,
                                           env={"NEO_AGENT_HOOK_TIMEOUT_MS": "20000"},
                                           python_flags=("-X", "importtime")))
        assert code == 0 and HTTP_BODY in json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert "| numpy" not in err.decode()                            # the server answered, not a forked child
        # Twenty at once (with time to spare: on two loaded cores twenty interpreters alone can
        # take the default 1.5 s, see test_hook_socket.py for the default limit).
        procs = [spawn_hook("prompt-submit", "claude", _prompt(long_repo, f"s{n}"), long_repo,
                            env={"NEO_AGENT_HOOK_TIMEOUT_MS": "20000"}) for n in range(20)]
        results = [finish(proc) for proc in procs]
    assert [code for code, _, _ in results] == [0] * 20
    answered = [HTTP_BODY in json.loads(out)["hookSpecificOutput"]["additionalContext"]
                for _, out, _ in results if out.strip()]
    assert answered == [True] * 20
    assert not sock.exists()                                             # removed when the server ends


def test_a_long_socket_path_is_bound_and_reached_through_its_folder(tmp_path):
    folder = tmp_path / ("x" * 80) / ("y" * 80)
    folder.mkdir(parents=True)
    path = str(folder / "agent.sock")
    assert wire.unix_address(str(tmp_path / "s.sock")) == (str(tmp_path / "s.sock"), None)   # short: as is
    address, fd = wire.unix_address(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(address)
        server.listen(1)
    finally:
        os.close(fd)
    try:
        assert stat.S_ISSOCK(os.stat(path).st_mode)                       # the file is in the folder itself
        assert listening(folder / "agent.sock")                          # and a new connection finds it
    finally:
        server.close()


def test_a_socket_that_cannot_be_made_says_why(tmp_path, monkeypatch):
    neo_dir = tmp_path / ("z" * 120) / "neo"
    real_isdir = os.path.isdir
    monkeypatch.setattr(os.path, "isdir", lambda p: False if p == "/proc/self/fd" else real_isdir(p))   # as on macOS
    said: list[str] = []
    assert serve_hooks(neo_dir, ServedStore(None, threading.Lock()), report=said.append) is None
    assert len(said) == 1 and "over the 100 bytes" in said[0] and "answer in their own processes" in said[0]


class _Listener:
    """Something other than git-neo listening on `.git/neo/agent.sock`: it accepts, announces a
    limit of ten minutes, and then says nothing more."""

    def __init__(self, repo) -> None:
        neo_dir = repo / ".git" / "neo"
        neo_dir.mkdir(parents=True, exist_ok=True)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(neo_dir / "agent.sock"))
        self.server.listen(8)
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.held.append(conn)
            try:
                conn.sendall(b'{"limit_ms": 600000}\n')
            except OSError:
                pass

    def close(self) -> None:
        self.server.close()
        for conn in self.held:
            conn.close()


def test_a_listener_cannot_stretch_the_hooks_limit(repo_with_commit, monkeypatch):
    monkeypatch.delenv("NEO_AGENT_HOOK_TIMEOUT_MS", raising=False)
    _store_facts(repo_with_commit)
    listener = _Listener(repo_with_commit)
    try:
        code, out, seconds = run_hook_process("prompt-submit", "claude", _prompt(repo_with_commit, "held"),
                                              repo_with_commit, timeout=60)
    finally:
        listener.close()
    assert listener.held                                                 # it did talk to the listener
    assert code == 0 and out == "" and seconds < 5                       # was held 30 s and more
    assert "stopped at the time limit (1500 ms" in _log(repo_with_commit)


def test_the_repositorys_limit_is_read_by_the_hook_itself(repo_with_commit, monkeypatch):
    monkeypatch.delenv("NEO_AGENT_HOOK_TIMEOUT_MS", raising=False)
    _store_facts(repo_with_commit)
    git(repo_with_commit, "config", "neo.agentHookTimeoutMs", "400")
    listener = _Listener(repo_with_commit)
    try:
        code, out, seconds = run_hook_process("prompt-submit", "claude", _prompt(repo_with_commit, "short"),
                                              repo_with_commit, timeout=60)
    finally:
        listener.close()
    assert code == 0 and out == "" and seconds < 1.45                    # under the default 1.5 s
    assert "stopped at the time limit (400 ms" in _log(repo_with_commit)


def test_a_limit_that_is_no_number_of_ms_keeps_the_default_and_says_so(repo_with_commit, monkeypatch):
    monkeypatch.delenv("NEO_AGENT_HOOK_TIMEOUT_MS", raising=False)
    _store_facts(repo_with_commit)
    for value in ("99999999999999999999", "soon"):
        git(repo_with_commit, "config", "neo.agentHookTimeoutMs", value)
        code, out, seconds = run_hook_process("prompt-submit", "claude", _prompt(repo_with_commit, value),
                                              repo_with_commit, env={}, timeout=60)
        assert code == 0 and seconds < 5
        assert "neo.agentHookTimeoutMs is not a whole number of ms" in _log(repo_with_commit)
        assert "Traceback" not in _log(repo_with_commit)
    git(repo_with_commit, "config", "neo.agentHookTimeoutMs", "20000")   # a valid one is followed: time to answer
    code, out, _ = run_hook_process("prompt-submit", "claude", _prompt(repo_with_commit, "valid"), repo_with_commit)
    assert code == 0 and HTTP_BODY in json.loads(out)["hookSpecificOutput"]["additionalContext"]
