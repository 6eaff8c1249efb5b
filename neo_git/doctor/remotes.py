"""The doctor's check of where facts are shared: when more than one remote carries facts (their
tracking refs `refs/remotes/<r>/neo/facts` exist here) and none is chosen (`neo.remote`), `git
neo sync` refuses until one is; a chosen remote that no longer exists is reported too. Only
local refs are read: the doctor never goes to the network."""
from __future__ import annotations

from neo_git.doctor.findings import Context, Finding

CHECK = "remote"


def check_remote(ctx: Context) -> list[Finding]:
    """`neo.remote` set when several remotes carry facts, and naming a remote that exists."""
    from neo_git.sync.remotes import REMOTE_KEY, chosen_remote

    remotes = list(ctx.repo.remotes.names())
    chosen = chosen_remote(ctx.repo)
    if chosen is not None and chosen not in remotes:
        return [Finding(CHECK, f"{REMOTE_KEY} names '{chosen}', which is not a remote any more: `git neo sync` "
                               "has nowhere to share facts",
                        hint=("choose another: " + " or ".join(f"`git neo sync --remote {r}`" for r in remotes)
                              if remotes else f"`git remote add {chosen} <url>`, or `git config --unset {REMOTE_KEY}`"))]
    carrying = [r for r in remotes if _exists(ctx, f"refs/remotes/{r}/neo/facts")]
    if chosen is None and len(carrying) > 1:
        return [Finding(CHECK, f"{len(carrying)} remotes carry facts ({', '.join(map(str, carrying))}) and none is chosen for "
                               "sharing yours (neo.remote): `git neo sync` refuses until one is",
                        hint="choose one: " + " or ".join(f"`git neo sync --remote {r}`" for r in carrying))]
    return []


def _exists(ctx: Context, ref: str) -> bool:
    """Whether *ref* exists (False when packed-refs cannot be read: the "ref-file" check says so)."""
    import pygit2

    try:
        return ref in ctx.repo.references
    except pygit2.GitError:
        return False
