"""Compare-and-swap on a ref, creation included, under real processes racing for it.

libgit2 checks that a ref does not exist *before* it takes the ref's lock, so two processes
creating the same ref with `create_reference_direct(..., force=False)` could both succeed: the
second silently replaced the first (the first fact ever added in a repository by two writers at
once was lost; `test_concurrency.py::test_eight_processes_add_to_the_project_ref` failed on it about
one run in twenty). A CAS must decide under the ref's lock, for creation as for updates."""
from __future__ import annotations

import multiprocessing

import pygit2

from tests.helpers.git import git

WORKERS = 6
ROUNDS = 25


def _racer(repo_path: str, worker: int, barrier, results) -> None:
    """Each round: build a commit of its own, wait for the others, then try to create the
    round's ref (expected absent) and, in the same round, to move the shared ref from the value
    it read."""
    from neo_git.store.refcas import compare_and_swap

    repo = pygit2.Repository(repo_path)
    sig = pygit2.Signature("w", "w@example.invalid")
    tree = repo.TreeBuilder().write()
    for round_ in range(ROUNDS):
        commit = repo.create_commit(None, sig, sig, f"w{worker} r{round_}\n", tree, [])
        seen = repo.references.get("refs/neo/shared")
        expected = seen.target if seen is not None else None
        barrier.wait(60)
        created = compare_and_swap(repo, f"refs/neo/race-{round_}", None, commit, "race")
        moved = compare_and_swap(repo, "refs/neo/shared", expected, commit, "race")
        results.put((round_, worker, created, moved, str(commit), str(expected)))


def test_exactly_one_of_many_racing_processes_creates_a_ref_and_none_is_overwritten(git_repo):
    from neo_git.store.refstore import ensure_reflog

    ensure_reflog(git_repo / ".git", "refs/neo/shared")
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(WORKERS), ctx.Queue()
    procs = [ctx.Process(target=_racer, args=(str(git_repo), w, barrier, results)) for w in range(WORKERS)]
    for proc in procs:
        proc.start()
    rows = [results.get(timeout=120) for _ in range(WORKERS * ROUNDS)]
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    repo = pygit2.Repository(str(git_repo))
    for round_ in range(ROUNDS):
        winners = [row for row in rows if row[0] == round_ and row[2]]
        assert len(winners) == 1, f"round {round_}: {len(winners)} processes created the same ref"
        assert str(repo.references[f"refs/neo/race-{round_}"].target) == winners[0][4]
    # The shared ref: every successful move started from the value the mover had read, so the
    # moves form one chain through the reflog, none lost.
    moves = {row[4]: row[5] for row in rows if row[3]}
    log = [(str(entry.oid_old), str(entry.oid_new)) for entry in repo.references["refs/neo/shared"].log()]
    assert len(log) == len(moves)
    for old, new in log:
        assert moves[new] == ("None" if set(old) == {"0"} else old)
    assert git(git_repo, "fsck", "--no-dangling").strip() == ""
