"""`git neo outcomes --wait`: wait for the hooks' background worker to finish with HEAD.

The post-commit shim hands the commit to a background process and returns at once, so an
`outcomes` typed (or pasted) right after `git commit` may run before the worker has even
queued the commit: its suggestion still shows as pending, and `refs/notes/neo` may not
exist yet. Waiting means: HEAD is in the worker's ledger (`processed.json`, saved once
everything else is written) and nothing is left in the queue. The processing lock is never taken to look (a
worker that found it held would leave its items for the next commit). Only while git-neo's
hooks are installed: without them nobody will process HEAD."""
from __future__ import annotations

import time

from neo_git.outcomes.queue import QUEUE_FILE

POLL_SECONDS = 0.05


def head_processed(repo, paths) -> bool:
    """Is HEAD processed (or is there nothing to process: unborn, unreadable)?"""
    from neo_git.outcomes.ledger import Ledger

    try:
        if repo.head_is_unborn:
            return True
        head = str(repo.head.target)
    except Exception:  # noqa: BLE001 - a HEAD git-neo cannot read: nothing to wait for
        return True
    # The ledger is saved last, after the note, the facts and the suggestions' statuses (a note
    # alone is written before the suggestion stops being listed as pending).
    ledger = Ledger(paths.neo_dir)
    return head in ledger and head not in ledger.retry


def _queue_empty(neo_dir) -> bool:
    try:
        return (neo_dir / QUEUE_FILE).stat().st_size == 0
    except OSError:
        return True


def wait_for_worker(repo, paths, seconds: float, hooks_installed: bool) -> bool:
    """Wait up to *seconds* for the worker to finish with HEAD; False when time ran out.
    Without the hooks (*hooks_installed*: `githooks.install.hooks_installed`) no worker runs."""
    if not hooks_installed:
        return True
    deadline = time.monotonic() + max(0.0, seconds)
    while True:
        if _queue_empty(paths.neo_dir) and head_processed(repo, paths):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_SECONDS)
