"""Merging the outcome notes (`refs/notes/neo`) with a teammate's.

Notes are JSON Lines (one object per line, docs/architecture.md §3), so git's own
`cat_sort_uniq` strategy merges them without conflicts: per annotated commit, the
sorted union of both sides' lines. `git notes merge` writes the merge commit on
`refs/notes/neo` and never touches the work tree for this strategy.
"""
from __future__ import annotations

from neo_git.errors import NeoError
from neo_git.gitrun import GitCommandError
from neo_git.sync.transport import NOTES_REF, Git


def merge_notes(git: Git, tracking: str) -> str:
    """Merge the notes at *tracking* into `refs/notes/neo`; returns what happened."""
    theirs = _resolve(git, tracking)
    if theirs is None:
        return "none on the remote"
    ours = _resolve(git, NOTES_REF)
    if ours == theirs:
        return "up to date"
    try:
        git.run(["notes", f"--ref={NOTES_REF}", "merge", "--quiet", "--strategy=cat_sort_uniq", tracking])
    except GitCommandError as exc:
        raise NeoError(f"could not merge the outcome notes from {tracking}: {exc.message}",
                       f"inspect them with `git log {tracking}`; the facts were merged") from None
    after = _resolve(git, NOTES_REF)
    if after == ours:
        return "up to date"
    return "fast-forward" if after == theirs else "merged"


def _resolve(git: Git, ref: str) -> str | None:
    proc = git.run(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None
