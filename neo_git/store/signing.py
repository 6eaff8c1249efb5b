"""Signing the commits git-neo writes on `refs/neo/facts`, with git's own machinery.

Teammates trust a change by its verified signature (`sync/signatures.py`), so a clone
whose owner signs commits (`commit.gpgSign`, or `neo.signCommits` for the facts ref
alone) must sign what git-neo writes too. libgit2 cannot sign; `git commit-tree -S`
signs exactly as `git commit -S` does (gpg or ssh, `user.signingKey`, `gpg.format`),
so the commit is written by git when signing is on (a subprocess per write, only then).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from neo_git.errors import NeoError

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

SIGN_TIMEOUT = 30.0   # a gpg agent may ask for a passphrase on a terminal: bounded


def wants_signing(repo: "pygit2.Repository") -> bool:
    """`neo.signCommits` if set, else git's `commit.gpgSign`."""
    from neo_git.config import as_bool, neo_config

    value = neo_config("signCommits", None, repo=repo)
    if value is None:
        try:
            value = repo.config["commit.gpgSign"]
        except (KeyError, ValueError):
            return False
    try:
        return as_bool(value)
    except (TypeError, ValueError):
        return False


def signed_commit(repo: "pygit2.Repository", signature: "pygit2.Signature", message: str,
                  tree: "pygit2.Oid", parents: Sequence["pygit2.Oid"]) -> "pygit2.Oid":
    """Write a signed commit with `git commit-tree -S` (author and committer *signature*)."""
    import pygit2

    from neo_git.gitrun import GitCommandError, run_git

    args = [f"--git-dir={repo.path}", "commit-tree", "-S", str(tree)]
    for parent in parents:
        args += ["-p", str(parent)]
    env = {"GIT_AUTHOR_NAME": signature.name, "GIT_AUTHOR_EMAIL": signature.email,
           "GIT_COMMITTER_NAME": signature.name, "GIT_COMMITTER_EMAIL": signature.email}
    try:
        proc = run_git(args, input=message, timeout=SIGN_TIMEOUT, env=env)
    except GitCommandError as exc:
        raise NeoError(f"could not sign the facts commit: {exc.message}",
                       "check `git config user.signingKey` and `gpg.format`, or turn signing off for "
                       "git-neo with `git config neo.signCommits false`") from None
    return pygit2.Oid(hex=proc.stdout.strip())
