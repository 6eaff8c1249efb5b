"""`git neo install --remote <r>`: let a plain `git fetch` bring the facts and notes too.

Adds two fetch refspecs to `remote.<r>.fetch`, into the same tracking refs
`git neo sync` uses: `+refs/neo/facts*:refs/remotes/<r>/neo/facts*` and
`+refs/notes/neo*:refs/notes/remotes/<r>/neo*`. Both are forced, like a branch's
tracking ref: a teammate who force-pushes the notes must not make every later plain
`git fetch` fail ("rejected (non-fast-forward)"), and a tracking ref holds nothing of
ours (the local `refs/notes/neo` is never a fetch's destination, so a fetch can never
drop local notes). Both are patterns (the `*` matches the empty string): an exact
refspec for a ref the remote does not have makes `git fetch` fail with "couldn't find
remote ref". Merging stays `git neo pull`/`sync`'s job. Older installs' exact,
non-forced refspecs are replaced.
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
    return [f"+{names.facts_remote}*:{names.facts_tracking}*", f"+{names.notes_remote}*:{names.notes_tracking}*"]


def legacy_refspecs(repo: pygit2.Repository, remote: str) -> list[str]:
    """Refspecs earlier versions added (exact, notes not forced): replaced, and removed on uninstall."""
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
    wanted = fetch_refspecs(repo, remote)
    for spec in wanted + legacy_refspecs(repo, remote):
        if spec in wanted and remove == (spec not in present):
            continue
        if spec not in wanted and spec not in present:
            continue
        removing = remove or spec not in wanted
        args = ["--unset-all", "--fixed-value", key, spec] if removing else ["--add", key, spec]
        try:
            run_git([*git_dir_args(paths.git_dir), "config", "--local", *args], cwd=paths.git_dir, timeout=10)
        except GitCommandError as exc:
            raise NeoError(f"could not change {key}: {exc.message}") from None
        if spec in wanted:
            changed.append(spec)   # an old refspec replaced on the way is not news
    return changed
