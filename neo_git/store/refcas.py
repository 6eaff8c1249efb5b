"""Move a git ref by compare-and-swap with pygit2: the facts ref, the notes ref."""
from __future__ import annotations

import pygit2


def compare_and_swap(repo: pygit2.Repository, ref: str, expected: pygit2.Oid | None, new: pygit2.Oid,
                     reflog_message: str) -> bool:
    """Point *ref* at *new* if it still points at *expected* (None: if it does not exist);
    False when another writer got there first or holds the ref's lock."""
    try:
        if expected is None:
            repo.create_reference_direct(ref, new, False, message=reflog_message)
            return True
        current = repo.references[ref]
        if current.target != expected:
            return False
        # libgit2 re-checks the old value under the ref's lock file: this is the CAS.
        current.set_target(new, reflog_message)
        return True
    except (pygit2.AlreadyExistsError, KeyError):
        return False
    except (pygit2.GitError, OSError) as exc:
        # pygit2 raises OSError, not GitError, for "failed to lock file …/facts.lock"
        # (libgit2's GIT_ERROR_OS class): another writer holds the ref's lock.
        text = str(exc)
        if "does not match" in text or "lock" in text or "exists" in text:
            return False
        raise
