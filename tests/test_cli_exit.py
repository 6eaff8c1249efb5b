"""`git-neo` ends without tearing the interpreter down (`cli.exit_now`): output and exit codes
must be exactly what a normal exit gives, and a thread still working is waited for."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from neo_git.store import FactStore


def _buffered() -> dict:
    """The environment with stdout block-buffered, as it is for a program writing to a pipe."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def _git_neo(repo, *argv) -> subprocess.CompletedProcess:
    """The console entry point (`neo_git.cli.run`), as the `git-neo` executable runs it."""
    return subprocess.run([sys.executable, "-m", "neo_git.cli", *argv], cwd=repo, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=120, env=_buffered())


def test_output_arrives_whole(repo_with_commit):
    store = FactStore.open(repo_with_commit, embedder="hash")
    facts = store.add_many([{"subject": f"Constraint {i}: never call service {i} without a timeout",
                             "body": "Use the shared client; it retries with backoff. " * 8, "kind": "constraint"}
                            for i in range(120)])
    listed = _git_neo(repo_with_commit, "list")  # a line per print: the last ones sit in stdout's buffer
    assert listed.returncode == 0, listed.stderr
    assert all(fact.id[:16] in listed.stdout.decode() for fact in facts)
    assert listed.stdout.endswith(b"\n")
    as_json = _git_neo(repo_with_commit, "list", "--json")
    assert len(json.loads(as_json.stdout)) == 120


def test_exit_codes_are_kept(repo_with_commit):
    assert _git_neo(repo_with_commit, "no-such-command").returncode == 2
    missing = _git_neo(repo_with_commit, "show", "deadbeef")
    assert missing.returncode == 1 and b"fatal:" in missing.stderr
    assert _git_neo(repo_with_commit, "list").returncode == 0


def test_a_reader_that_leaves_early_is_not_an_error(repo_with_commit):
    store = FactStore.open(repo_with_commit, embedder="hash")
    store.add_many([{"subject": f"Fact number {i} about the cache layer"} for i in range(300)])
    proc = subprocess.Popen([sys.executable, "-m", "neo_git.cli", "list"], cwd=repo_with_commit,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=_buffered())
    proc.stdout.readline()
    proc.stdout.close()  # `git neo list | head -1`
    assert proc.wait(timeout=60) == 0
    assert b"Traceback" not in proc.stderr.read()


def test_a_thread_still_working_is_waited_for(tmp_path):
    done = tmp_path / "done"
    script = textwrap.dedent(f"""
        import threading, time
        from neo_git.cli import exit_now

        def work():
            time.sleep(0.3)
            open({str(done)!r}, "w").write("finished")

        threading.Thread(target=work).start()
        print("bye")
        exit_now(3)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60, env=_buffered())
    assert result.returncode == 3 and result.stdout == b"bye\n"
    assert done.read_text() == "finished"


def test_the_entry_point_runs_blas_single_threaded_unless_told_otherwise(tmp_path):
    """`run()` sets up a command's process: one OpenBLAS thread (a user's setting wins) and a
    cyclic GC that collects every 100,000 allocations, not every 700."""
    script = textwrap.dedent("""
        import gc, os, sys
        import neo_git.cli as cli

        def report():
            print(os.environ.get("OPENBLAS_NUM_THREADS"), gc.get_threshold()[0])
            return 0

        cli.main = report
        cli.run()
    """)
    env = _buffered()
    env.pop("OPENBLAS_NUM_THREADS", None)
    plain = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60, env=env)
    assert plain.returncode == 0 and plain.stdout.split() == [b"1", b"100000"]
    chosen = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60,
                            env={**env, "OPENBLAS_NUM_THREADS": "4"})
    assert chosen.stdout.split()[0] == b"4"


def test_the_library_runs_blas_single_threaded_as_the_cli_does(tmp_path):
    """Issue 35: `from neo_git import FactStore` (no CLI) sets the same BLAS threading, before
    numpy starts its pool; a setting the program made first wins."""
    script = textwrap.dedent("""
        import os
        from neo_git import FactStore
        import numpy
        print(os.environ.get("OPENBLAS_NUM_THREADS"), "neo_git.cli" in __import__("sys").modules)
    """)
    env = _buffered()
    env.pop("OPENBLAS_NUM_THREADS", None)
    plain = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60, env=env)
    assert plain.returncode == 0 and plain.stdout.split() == [b"1", b"False"], plain.stderr
    chosen = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60,
                            env={**env, "OPENBLAS_NUM_THREADS": "2"})
    assert chosen.stdout.split()[0] == b"2"


def test_a_recall_never_loads_the_write_policy(repo_with_commit):
    FactStore.open(repo_with_commit, embedder="hash").add_many(
        [{"subject": f"Decision {i} about the cache layer", "kind": "decision"} for i in range(20)])
    script = textwrap.dedent(f"""
        import sys
        from neo_git.store import FactStore

        FactStore.open({str(repo_with_commit)!r}, embedder="hash").recall("cache layer")
        print(sorted(m for m in sys.modules if m in ("neo_git.store.policy", "neo_git.store.supersession",
                                                     "neo_git.store.review", "neo_git.store.index")))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60, env=_buffered())
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == b"[]"
