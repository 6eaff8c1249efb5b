"""Issue 37, deliverable 3: no exit 3 and no hang from what arrives from outside (a teammate's
note, a setting, a file on disk, a damaged HEAD, a held cache lock)."""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.helpers.git import git
from tests.helpers.plumbing import neo

BAD_NOTES = [
    {"facts": "notalist"},
    {"facts": [{"id": "abcdabcdabcdabcd", "confidence": "high", "success_count": 7}, 5, "x"]},
    {"facts": [{"id": 12, "confidence": [0.1, 0.2]}], "commit": 7, "file": ["a"], "description": {"x": 1}},
    {"ts": 5, "health": 3, "health_reasons": "long", "match": "yes", "origin": "agent", "agent": 4,
     "session_id": [1]},
]


@pytest.mark.parametrize("bad", BAD_NOTES)
def test_a_teammates_ill_typed_note_line_never_crashes_outcomes(team_repo, capsys, bad):
    repo, _ = team_repo
    line = {"id": "1111111111111111", "type": "outcome", "ts": "2026-12-01T00:00:00+00:00",
            "verdict": "accepted", **bad}
    good = {"id": "2222222222222222", "type": "outcome", "ts": "2026-12-02T00:00:00+00:00",
            "verdict": "modified", "commit": "c" * 40, "file": "src/app.py",
            "facts": [{"id": "abcdabcdabcdabcd", "confidence": [0.5, 0.3], "success_count": [0, 0]}]}
    note = "\n".join(json.dumps(r) for r in (line, good)) + "\n"
    git(repo, "notes", "--ref=refs/notes/neo", "add", "-m", note, "HEAD")
    result = neo(capsys, "outcomes")
    assert result.code == 0, result.err
    assert "src/app.py" in result.out and "0.50 -> 0.30" in result.out    # the good line still counts
    data = json.loads(neo(capsys, "outcomes", "--json").out)
    assert {r["id"] for r in data["outcomes"]} == {"1111111111111111", "2222222222222222"}
    result = neo(capsys, "report", "--out", str(repo.parent / "report.html"))
    assert result.code == 0, result.err


def _hold_lock(path) -> subprocess.Popen:
    """A process that holds an flock on *path* until it is killed (a stopped or stuck git-neo)."""
    import subprocess
    import sys

    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT, 0o644)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(120)\n")],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_held_parse_cache_lock_is_skipped_not_waited_for(team_repo, capsys):
    import time

    repo, ids = team_repo
    assert neo(capsys, "list").code == 0                     # the cache and its lock exist
    cache = repo / ".git" / "neo" / "cache"
    locks = sorted(cache.glob("facts-*.lock"))
    assert locks, sorted(p.name for p in cache.iterdir())
    holders = [_hold_lock(path) for path in locks]
    try:
        git(repo, "update-ref", "refs/neo/facts", git(repo, "rev-parse", "refs/neo/facts").strip())
        for argv in (["list"], ["recall", "HTTP client"], ["add", "Logging", "Use structlog everywhere."],
                     ["list"]):
            started = time.monotonic()
            result = neo(capsys, *argv)
            took = time.monotonic() - started
            assert result.code == 0, result.err
            assert took < 4, f"`git neo {argv[0]}` took {took:.1f} s behind a held cache lock"
        assert "Logging" in neo(capsys, "list").out
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()


def test_a_head_naming_an_invalid_branch_is_a_fatal_not_a_crash(repo_with_commit, monkeypatch, capsys):
    monkeypatch.chdir(repo_with_commit)
    (repo_with_commit / ".git" / "HEAD").write_text("ref: refs/heads/bad name\n")
    for argv in (["init"], ["add", "Layout", "Code lives under src/."], ["list"], ["recall", "layout"]):
        result = neo(capsys, *argv)
        assert result.code in (0, 1), (argv, result.err)
        if result.code == 1:
            assert result.err.startswith("fatal: HEAD is not valid") and "hint: " in result.err, result.err
    assert neo(capsys, "init").code == 1


def _run_neo(cwd, *args, timeout=60):
    """`git-neo ARGS` as a process (a hang must fail the test, not stop the suite)."""
    import os
    import subprocess

    from tests.helpers.outcomes import VENV_BIN

    return subprocess.run([os.path.join(VENV_BIN, "git-neo"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def test_init_skips_an_instruction_file_that_is_a_fifo(repo_with_commit):
    import os

    os.mkfifo(repo_with_commit / "CLAUDE.md")
    (repo_with_commit / "AGENTS.md").write_text("# Rules\n\n- Never import requests; use httpx.\n")
    proc = _run_neo(repo_with_commit, "init")
    assert proc.returncode == 0, proc.stderr
    assert "CLAUDE.md" in proc.stderr and "FIFO" in proc.stderr
    assert "constraint" in _run_neo(repo_with_commit, "list").stdout   # AGENTS.md was still read


@pytest.mark.parametrize("make", ["/dev/zero", "fifo", "directory", "too-large"])
def test_import_refuses_what_is_not_a_regular_file_before_reading_it(team_repo, tmp_path, make, monkeypatch):
    import os

    import neo_git.transfer as transfer

    repo, _ = team_repo
    before = git(repo, "rev-parse", "refs/neo/facts").strip()
    if make == "/dev/zero":
        target = "/dev/zero"
    elif make == "fifo":
        target = str(tmp_path / "facts.fifo")
        os.mkfifo(target)
    elif make == "directory":
        target = str(tmp_path)
    else:   # a regular file over the cap (the cap lowered for the test, in-process)
        target = str(tmp_path / "big.json")
        with open(target, "w") as handle:
            handle.write('{"version": "2.0", "facts": []}' + " " * 4096)
    if make == "too-large":
        from neo_git.cli import main

        monkeypatch.setattr(transfer, "MAX_IMPORT_BYTES", 1024)
        monkeypatch.chdir(repo)
        assert main(["import", target]) == 1
        return
    proc = _run_neo(repo, "import", target, timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("fatal: ") and "not a regular file" in proc.stderr and "hint: " in proc.stderr
    assert git(repo, "rev-parse", "refs/neo/facts").strip() == before


@pytest.mark.parametrize("make", ["fifo", "too-large"])
def test_ask_include_refuses_a_fifo_and_leaves_out_a_huge_file_before_reading_it(team_repo, make, monkeypatch):
    """`--include` names a file of the work tree: a FIFO there would block the read until a
    writer came, a file of gigabytes would be read whole to keep 16,000 characters of it."""
    import os

    repo, _ = team_repo
    if make == "fifo":
        os.mkfifo(repo / "pipe.py")
        proc = _run_neo(repo, "ask", "what is in pipe.py?", "--include", "pipe.py", "--provider", "none",
                        "--show-prompt", timeout=30)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith("fatal: ") and "not a regular file" in proc.stderr and "hint: " in proc.stderr
        return
    from neo_git.ask import prompt

    monkeypatch.setattr(prompt, "MAX_INCLUDE_BYTES", 4096)
    (repo / "big.py").write_text("x = 1\n" * 2000, encoding="utf-8")
    (repo / "small.py").write_text("y = 2\n", encoding="utf-8")
    files, notes = prompt.read_included(["big.py", "small.py"], repo, repo)
    assert [f.path for f in files] == ["small.py"]
    assert any("big.py left out" in note and "larger than 4 KiB" in note for note in notes), notes


def test_an_agents_edit_of_a_fifo_does_not_hold_the_hook_to_its_limit(team_repo):
    """PostToolUse reads the edited file to place the edit's lines: a FIFO there is skipped, not
    waited on until the hook's time limit (which then drops the hook's work)."""
    import json
    import os

    from tests.helpers.agents import payload, run_hook_process

    repo, _ = team_repo
    os.mkfifo(repo / "edited.py")
    data = payload("claude_post_tool_use_multiedit", repo)
    data["tool_input"]["file_path"] = str(repo / "edited.py")
    # A limit far above a loaded machine's start-up: only a read that blocks can reach it.
    code, _out, took = run_hook_process("PostToolUse", "claude", json.dumps(data).encode(), repo,
                                        env={"NEO_AGENT_HOOK_TIMEOUT_MS": "30000"}, timeout=60)
    assert code == 0
    log = repo / ".git" / "neo" / "hook.log"
    assert "time limit" not in (log.read_text(encoding="utf-8") if log.exists() else ""), log.read_text()
    assert took < 25, took
