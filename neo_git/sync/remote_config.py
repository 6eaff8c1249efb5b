"""`git neo install --remote <r>`: let a plain `git fetch` bring the facts and notes too.

Adds two fetch refspecs to `remote.<r>.fetch`, into the same tracking refs
`git neo sync` uses: `+refs/neo/facts:refs/remotes/<r>/neo/facts` (a tracking ref,
forced like a branch's) and `refs/notes/neo:refs/notes/remotes/<r>/neo` — never a
forced notes refspec and never one that writes `refs/notes/neo` itself, so a fetch can
never drop local notes. Merging stays `git neo pull`/`sync`'s job.
"""
from __future__ import annotations

import pygit2

from neo_git.config import neo_config
from neo_git.errors import NeoError
from neo_git.gitrun import GitCommandError, git_dir_args, run_git
from neo_git.identity import repository_paths
from neo_git.sync.transport import FACTS_REF, ref_names


def fetch_refspecs(repo: pygit2.Repository, remote: str) -> list[str]:
    """The refspecs `configure_remote_fetch` adds for *remote* (following `neo.refName`)."""
    names = ref_names(remote, str(neo_config("refName", FACTS_REF, repo=repo)),
                      neo_config("notesRefName", None, repo=repo))
    return [f"+{names.facts_remote}:{names.facts_tracking}", f"{names.notes_remote}:{names.notes_tracking}"]


def configure_remote_fetch(repo: pygit2.Repository, remote: str, remove: bool = False) -> list[str]:
    """Add (or with *remove*, take out) the neo fetch refspecs of *remote*; returns those changed.
    Idempotent: refspecs already there are not added twice."""
    if remote not in list(repo.remotes.names()):
        raise NeoError(f"no remote named '{remote}'", "`git remote -v` lists them")
    key = f"remote.{remote}.fetch"
    try:
        present = [v for v in repo.config.get_multivar(key) if isinstance(v, str)]
    except (KeyError, pygit2.GitError):
        present = []
    paths = repository_paths(repo)
    changed = []
    for spec in fetch_refspecs(repo, remote):
        if remove == (spec not in present):
            continue
        args = ["--unset-all", "--fixed-value", key, spec] if remove else ["--add", key, spec]
        try:
            run_git([*git_dir_args(paths.git_dir), "config", "--local", *args], cwd=paths.git_dir, timeout=10)
        except GitCommandError as exc:
            raise NeoError(f"could not change {key}: {exc.message}") from None
        changed.append(spec)
    return changed
