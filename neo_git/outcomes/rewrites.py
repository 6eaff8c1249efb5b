"""Rewritten commits (amend, rebase): outcome state follows the new ids.

git runs post-rewrite once per `git commit --amend` and once per finished rebase,
with "old new" lines on stdin. With `notes.rewriteRef=refs/notes/neo` (set by
`git neo install`) git already copied the notes; `notes.move_note` adds whatever is
missing (records are de-duplicated by id, so a copy git made is not doubled). A new
commit whose old commit was processed counts as processed (a squash of processed
commits is not new work); one that was not is processed now, once, since the shims
skip post-commit while a rebase is running.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import replace

import pygit2

from neo_git.fileio import locked
from neo_git.identity import RepositoryPaths, repository_paths
from neo_git.outcomes.ledger import Ledger, author_key
from neo_git.outcomes.processing import LOCK_TIMEOUT, CommitResult, _after_processing, process_one, recheck_citations
from neo_git.outcomes.suggestions import Suggestion, update_suggestions
from neo_git.store import notes

log = logging.getLogger("neo_git.outcomes")
MAX_PAIRS = 10_000


def parse_rewrite_map(text: str) -> list[tuple[str, str]]:
    """The "old new [extra]" lines git gives post-rewrite on stdin, validated."""
    pairs = []
    for line in text.splitlines()[:MAX_PAIRS]:
        parts = line.split()
        if len(parts) >= 2 and all(len(p) in (40, 64) and all(c in "0123456789abcdef" for c in p)
                                   for p in parts[:2]):
            pairs.append((parts[0], parts[1]))
    return pairs


def apply_rewrites(repo: pygit2.Repository, pairs: Iterable[tuple[str, str]], *, kind: str = "rebase",
                   paths: RepositoryPaths | None = None, hold_lock: bool = True) -> list[CommitResult]:
    """Move processed state, notes and suggestion outcomes from old to new commit ids, then
    process new commits that replaced nothing processed (under the processing lock;
    *hold_lock* False: the caller holds it)."""
    pairs = list(pairs)
    paths = paths or repository_paths(repo)
    paths.neo_dir.mkdir(parents=True, exist_ok=True)
    results = []
    with locked(paths.neo_dir / "outcomes.lock", timeout=LOCK_TIMEOUT) if hold_lock else nullcontext():
        ledger = Ledger(paths.neo_dir)
        moved: dict[str, str] = {}
        fresh: list[str] = []
        for old, new in pairs:
            if old in ledger:
                moved[old] = new
                try:
                    notes.move_note(repo, old, new)
                except Exception as exc:  # noqa: BLE001 - the note is a record; state still moves
                    log.warning("note %s -> %s: %s", old[:12], new[:12], exc)
                if new not in ledger:
                    try:
                        key = author_key(repo[new].peel(pygit2.Commit))
                    except (KeyError, ValueError):
                        key = ""
                    ledger.mark(new, key, f"{kind} of {old}")
            elif new not in ledger and new not in fresh:
                fresh.append(new)
        _move_suggestion_commits(paths, moved)
        for new in fresh:
            if new not in ledger:
                results.append(process_one(repo, paths, ledger, new, f"post-rewrite ({kind})"))
        recheck_citations(repo, results, ledger)
        _recheck_rewritten(repo, moved)
        ledger.save()
    _after_processing(repo, results)
    return results


def _recheck_rewritten(repo: pygit2.Repository, moved: dict[str, str]) -> None:
    """A rebased or amended copy of a processed commit may hold other code (a new base, an
    edit folded in): citations of the files that differ from the old copy are checked again."""
    if not moved:
        return
    from neo_git.citations.recording import recheck_commits
    from neo_git.citations.verify import diff_changes

    try:
        items = [(new, diff_changes(repo, repo[old].peel(pygit2.Commit).tree, repo[new].peel(pygit2.Commit).tree))
                 for old, new in moved.items()]
        _transitions, error = recheck_commits(repo, items)
    except Exception as exc:  # noqa: BLE001 - the next commit touching those files checks them again
        error = f"{type(exc).__name__}: {exc}"
    if error:
        log.warning("citations after the rewrite: %s", error)


def _move_suggestion_commits(paths: RepositoryPaths, moved: dict[str, str]) -> None:
    if not moved:
        return

    def change(current: list[Suggestion]) -> list[Suggestion] | None:
        out, touched = [], False
        for s in current:
            if s.outcome and s.outcome.get("commit") in moved:
                s = replace(s, outcome={**s.outcome, "commit": moved[s.outcome["commit"]]})
                touched = True
            if s.status == "pending" and s.head in moved:
                s = replace(s, head=moved[s.head])
                touched = True
            out.append(s)
        return out if touched else None

    update_suggestions(paths, change)
