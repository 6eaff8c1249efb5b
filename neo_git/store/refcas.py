"""Move a git ref by compare-and-swap with pygit2: the facts ref, the notes ref."""
from __future__ import annotations

import pygit2


def compare_and_swap(repo: pygit2.Repository, ref: str, expected: pygit2.Oid | None, new: pygit2.Oid,
                     reflog_message: str) -> bool:
    """Point *ref* at *new* if it still points at *expected* (None: if it does not exist);
    False when another writer got there first or holds the ref's lock.

    The comparison is made under the ref's lock (a reference transaction): libgit2 checks that a
    ref does not exist *before* locking it, so two processes creating it with
    `create_reference_direct(..., force=False)` could both succeed, the second silently replacing
    the first (`tests/test_refcas_race.py`)."""
    try:
        with repo.transaction() as txn:
            txn.lock_ref(ref)   # the ref's .lock file: fails at once while another writer holds it
            current = repo.references.get(ref)   # nobody can move it while the lock is ours
            if (current.target if current is not None else None) != expected:
                raise _Moved
            txn.set_target(ref, new, message=reflog_message)
        return True   # committed as the transaction closed
    except _Moved:
        return False
    except (pygit2.GitError, OSError) as exc:
        # pygit2 raises OSError, not GitError, for "failed to lock file …/facts.lock"
        # (libgit2's GIT_ERROR_OS class): another writer holds the ref's lock.
        text = str(exc)
        if "does not match" in text or "lock" in text or "exists" in text:
            return False
        raise


class _Moved(Exception):
    """The ref no longer points where the writer read it (left through the transaction, which
    then releases the lock without writing)."""
