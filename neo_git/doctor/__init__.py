"""`git neo doctor`: check the facts ref, the local caches, locks and temp files, and what
git-neo needs from the machine: hooks installed, chained and able to find `git-neo`, agents'
configs runnable (with the `mcp` extra), a remote chosen when several carry facts.

The ref is shared, so the doctor only reports on it (every blob must be a valid
fact at the path its id names, pointers must lead to facts on the ref, and
supersession must not loop) and says what to do. Local state is derived or
leftover, so `--fix` may repair it: caches that do not verify against the ref
are deleted (rebuilt on demand: costs time, never facts), a ref lock whose owner
is gone and temp files nobody has open are removed.

Checks and repairs are registries: `CHECKS` (name -> function of a `Context` returning
findings, run in order) and `REPAIRS` (a finding's `action` -> function applying it). A new
check is a module and a line in each; `examine` and `repair` never change.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.doctor import (
    agents,
    caches,
    githooks,
    leftovers,
    localfiles,
    pointers,
    reachability,
    ref,
    refdamage,
    remotes,
    trustrecord,
)
from neo_git.doctor.findings import STALE_SECONDS, Context, Finding

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

__all__ = ["CHECKS", "REPAIRS", "STALE_SECONDS", "Context", "Finding", "context", "examine", "repair"]

# Run in this order; each returns its findings.
CHECKS: dict[str, Callable[[Context], list[Finding]]] = {
    "ref-file": refdamage.check_ref_file,
    "ref": lambda ctx: ref.check_ref(ctx.repo),
    "local-files": localfiles.check_local_files,
    "cache": lambda ctx: caches.check_caches(ctx.paths, ctx.home),
    "leftovers": lambda ctx: leftovers.check_leftovers(ctx.paths, ctx.home),
    "pointers": pointers.check_pointers,
    "hooks": githooks.check_hooks,
    "path": reachability.check_reachable,
    "agents": agents.check_agents,
    "remote": remotes.check_remote,
    "trust": trustrecord.check_trust_record,
}

# A finding's `action` -> the repair: (finding, context or None, paths some process has open or
# None) -> whether it was done.
REPAIRS: dict[str, Callable[[Finding, Context | None, set[str] | None], bool]] = {
    "remove": leftovers.remove_file,
    pointers.ACTION: pointers.cut_local,
    "reinstall-hooks": githooks.reinstall_hooks,
    "catch-up": reachability.catch_up,
    refdamage.ACTION: refdamage.restore_ref,
    trustrecord.ACTION: trustrecord.rejudge_commits,
    localfiles.ACTION: localfiles.rebuild_file,
}


def context(repo: pygit2.Repository, home: Path | None = None) -> Context:
    """The context for *repo* (NEO_HOME from the environment unless given)."""
    from neo_git import identity

    return Context(repo, identity.repository_paths(repo), identity.neo_home() if home is None else Path(home))


def examine(repo: pygit2.Repository, home: Path | None = None) -> list[Finding]:
    """Everything the doctor checks, in registry order: the ref, the caches, the leftovers, …"""
    ctx = context(repo, home)
    return [finding for check in CHECKS.values() for finding in check(ctx)]


def repair(findings: Iterable[Finding], repo: pygit2.Repository | None = None,
           home: Path | None = None) -> list[Finding]:
    """Apply every fix `--fix` may make; returns those done. A path that changed meanwhile
    (now open, or gone) is left alone."""
    ctx = context(repo, home) if repo is not None else None
    held = leftovers.open_files()
    done = []
    for finding in findings:
        if finding.fix is None:
            continue
        if REPAIRS[finding.action](finding, ctx, held):
            done.append(finding)
    return done
