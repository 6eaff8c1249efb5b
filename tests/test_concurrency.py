"""Many real processes writing at once, and writers killed mid-save: no fact is lost,
the ref and the files always hold a complete state."""
from __future__ import annotations

import json
import multiprocessing
import os
import queue
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.git import git
from tests.helpers.store import PYTHON, REF, neo_home, open_store

WORKERS = 8
PER_WORKER = 25


def _add_many(repo: str, scope: str, seed: int, count: int, start, results) -> None:
    """Worker process: wait for the start signal, then add *count* distinct facts."""
    from tests.helpers.store import distinct_text, open_store

    store = open_store(repo, **{scope: 100_000})
    rng = random.Random(seed)
    texts = [distinct_text(rng) for _ in range(count)]
    start.wait(60)
    ids = []
    for subject, body in texts:
        result = store.add_detailed(subject, body, scope=scope)
        assert not result.duplicate and result.superseded is None, (subject, result)
        ids.append(result.fact.id)
    results.put((seed, ids))


def _run_workers(repo: Path, scope: str) -> set[str]:
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    results = ctx.Queue()
    procs = [ctx.Process(target=_add_many, args=(str(repo), scope, 1000 + i, PER_WORKER, start, results))
             for i in range(WORKERS)]
    for proc in procs:
        proc.start()
    start.set()
    ids: set[str] = set()
    deadline = time.monotonic() + 120
    for _ in procs:
        while True:  # fail fast if a worker died instead of waiting for its result
            try:
                _seed, worker_ids = results.get(timeout=0.5)
                break
            except queue.Empty:
                assert time.monotonic() < deadline, "workers too slow"
                dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
                assert not dead, f"a worker crashed (exit codes {dead})"
        ids.update(worker_ids)
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    return ids


@pytest.mark.timeout(180)
def test_eight_processes_add_to_the_project_ref(repo_with_commit):
    # No init first: the writers also race to create the ref.
    ids = _run_workers(repo_with_commit, "project")
    assert len(ids) == WORKERS * PER_WORKER
    store = open_store(repo_with_commit)
    facts = store.list(scope="project")
    assert {f.id for f in facts} == ids and store.warnings == []
    assert git(repo_with_commit, "fsck", "--no-dangling", "--strict").strip() == ""
    parents = git(repo_with_commit, "rev-list", "--parents", REF).splitlines()
    assert len(parents) == WORKERS * PER_WORKER              # one commit per add
    assert all(len(line.split()) <= 2 for line in parents)     # linear: never a merge
    assert sum(1 for line in parents if len(line.split()) == 1) == 1  # one root
    reflog = git(repo_with_commit, "reflog", "show", "--format=%H", REF).splitlines()
    assert len(reflog) == len(parents)


@pytest.mark.timeout(180)
def test_eight_processes_add_to_the_global_file(repo_with_commit):
    ids = _run_workers(repo_with_commit, "global")
    data = json.loads((neo_home() / "facts" / "facts_global.json").read_bytes())
    assert data["version"] == "2.0"
    assert {f["id"] for f in data["facts"]} == ids and len(data["facts"]) == WORKERS * PER_WORKER
    store = open_store(repo_with_commit)
    assert len(store.list(scope="global")) == WORKERS * PER_WORKER and store.warnings == []


# --- killed writers ----------------------------------------------------------------

_WRITER = r"""
import random, sys
from tests.helpers.store import distinct_text, open_store
scope, seed = sys.argv[1], int(sys.argv[2])
store = open_store(".", **{scope: 100_000})
rng = random.Random(seed)
while True:
    fact = store.add(*distinct_text(rng), scope=scope)
    print(fact.id, flush=True)
"""


def _kill_writer_mid_save(repo: Path, scope: str, seed: int, out: Path) -> list[str]:
    """Start a writer looping over adds, SIGKILL it at a random moment; the ids it finished."""
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with open(out, "wb") as handle:
        proc = subprocess.Popen([PYTHON, "-c", _WRITER, scope, str(seed)], cwd=repo, stdout=handle,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        while out.stat().st_size == 0:  # the writer is past its imports and saving
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(random.uniform(0.0, 0.25))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        proc.stderr.close()
    return out.read_text().split()


@pytest.mark.timeout(120)
def test_killing_a_global_writer_never_leaves_a_broken_file(repo_with_commit, tmp_path):
    path = neo_home() / "facts" / "facts_global.json"
    finished: set[str] = set()
    previous: set[str] = set()
    for round_ in range(4):
        finished.update(_kill_writer_mid_save(repo_with_commit, "global", round_, tmp_path / f"out{round_}"))
        data = json.loads(path.read_bytes())                     # always parses
        stored = {f["id"] for f in data["facts"]}
        assert finished <= stored                               # every finished add is there
        assert previous <= stored                               # old state or newer, never less
        assert len(stored - finished - previous) <= 1           # at most the one being saved
        previous = stored
    store = open_store(repo_with_commit, **{"global": 100_000})
    assert {f.id for f in store.list(scope="global")} == previous and store.warnings == []
    store.add("After the crash", "The lock died with the killed writer.", scope="global")  # no stale lock


@pytest.mark.timeout(120)
def test_killing_a_ref_writer_never_leaves_a_broken_ref(repo_with_commit, tmp_path):
    open_store(repo_with_commit).init()
    finished: set[str] = set()
    previous: set[str] = set()
    for round_ in range(4):
        finished.update(_kill_writer_mid_save(repo_with_commit, "project", round_, tmp_path / f"out{round_}"))
        lock = repo_with_commit / ".git" / "refs" / "neo" / "facts.lock"
        if lock.exists():  # killed inside libgit2's ref update: git leaves a stale lock, as git itself does
            lock.unlink()
        assert git(repo_with_commit, "rev-parse", "--verify", REF).strip()
        assert git(repo_with_commit, "fsck", "--no-dangling").strip() == ""
        store = open_store(repo_with_commit)
        stored = {f.id for f in store.list(scope="project")}
        assert store.warnings == []                              # every blob on the ref parses
        assert finished <= stored and previous <= stored
        assert len(stored - finished - previous) <= 1  # at most the one being saved
        previous = stored
    open_store(repo_with_commit).add("After the crash", "The ref still moves.")


def test_unborn_repo_project_id_race_keeps_the_first_writers_id(git_repo, monkeypatch):
    """Two first writers in a repository without commits: the one that publishes its id
    second must adopt the first one's, or facts of one project get two project ids."""
    store = open_store(git_repo)
    marker = store.paths.neo_dir / "project_id"
    real_read_text = Path.read_text
    raced = []

    def read_text_after_losing_the_race(self, *args, **kwargs):
        if self == marker and not raced:  # we looked: no marker yet; then the other process wrote it
            raced.append(True)
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("0123456789abcdef\n", encoding="utf-8")
            raise FileNotFoundError(marker)
        return real_read_text(self, *args, **kwargs)

    with monkeypatch.context() as patch:  # (monkeypatch.undo() would also undo the test isolation)
        patch.setattr(Path, "read_text", read_text_after_losing_the_race)
        assert store.project_id == "0123456789abcdef"
    fact = open_store(git_repo).add("Build tool", "We build with hatch.")
    assert fact.project_id == "0123456789abcdef"
    assert [p.name for p in marker.parent.iterdir() if p.name.startswith(".project_id")] == []
