"""The doctor's check of the trust record (`.git/neo/trust/received.json`) and its repair.

A commit on the facts ref that this clone did not write counts by its verdict alone
(`store/received.py`); one without a verdict is unverified, so a lost or damaged record, or a
ref moved by plain `git fetch`, only ever demotes facts (trust fails closed). This check
names how many commits are waiting for a verdict; the repair judges them again from git data
(`sync/signatures.rejudge`: git verifies each signature, and the remote whose facts history
holds the commit is where it came from).
"""
from __future__ import annotations

from neo_git.doctor.findings import Context, Finding

REF = "refs/neo/facts"
ACTION = "rejudge"


def _git(ctx: Context):
    from neo_git.sync.transport import Git

    return Git(ctx.paths, 120.0)


def check_trust_record(ctx: Context) -> list[Finding]:
    """Commits with no trust verdict (their facts count as unverified), and an unreadable record."""
    import pygit2

    from neo_git.errors import NeoError
    from neo_git.store import received
    from neo_git.store.ref_damage import checked_tip
    from neo_git.sync.signatures import unjudged

    try:
        if checked_tip(ctx.repo, ctx.paths.common_dir, REF) is None:
            return []
    except (NeoError, OSError, pygit2.GitError):
        return []   # a damaged ref: the "ref-file" check reports it; verdicts wait for its repair
    state = received.state(ctx.paths.neo_dir)
    waiting = unjudged(_git(ctx), ctx.repo, ctx.paths.common_dir, REF)
    path = str(received.record_path(ctx.paths.neo_dir))
    found = _lost_pins(ctx)
    if not waiting and state != "unreadable":
        return found
    why = {"missing": "no trust record: it was deleted, or the ref came by a plain `git fetch` or a mirror clone",
           "unreadable": "the trust record is unreadable"}.get(
        state, "the ref was moved outside `git neo sync`, e.g. by a plain `git fetch` of refs/neo/facts")
    problem = (f"{len(waiting)} commit(s) on {REF} have no trust verdict ({why}): "
               "their facts count as unverified claims" if waiting else f"{path} is unreadable")
    return [Finding("trust", problem, fix="judge them again from git data (signatures, the remotes' facts history)",
                    path=path, action=ACTION), *found]


def _lost_pins(ctx: Context) -> list[Finding]:
    """The record of keys pinned on first use (`store/pins.py`), gone or unreadable while verdicts
    could pin: until it is rebuilt, no pinned key speaks for anyone."""
    from neo_git.store import pins
    from neo_git.sync.signatures import pins_lost

    if not pins_lost(ctx.paths.neo_dir):
        return []
    state = pins.state(ctx.paths.neo_dir)
    return [Finding("trust", f"the record of signing keys pinned on first use is {state}: keys pinned for teammates "
                    "speak for nobody until it is rebuilt", fix="pin again from the verdicts, in the facts "
                    "history's order", path=str(pins.record_path(ctx.paths.neo_dir)), action=ACTION)]


def rejudge_commits(finding: Finding, ctx: Context | None, held: set[str] | None) -> bool:
    """The "rejudge" repair: verdicts recomputed from git data, the record rewritten (and the pins
    rebuilt from them when that record was lost)."""
    from neo_git.store import pins, received
    from neo_git.sync.signatures import rejudge

    if ctx is None:
        return False
    if received.state(ctx.paths.neo_dir) == "unreadable":
        received.record_path(ctx.paths.neo_dir).unlink(missing_ok=True)
        received.clear_memo()
    if pins.state(ctx.paths.neo_dir) == "unreadable":
        pins.record_path(ctx.paths.neo_dir).unlink(missing_ok=True)
        pins.clear_memo()
    rejudge(_git(ctx), ctx.repo, ctx.paths.common_dir, REF)
    return True
