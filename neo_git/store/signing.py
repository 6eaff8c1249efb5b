"""Signing the commits git-neo writes on `refs/neo/facts`.

Teammates trust a change by its verified signature (`sync/signatures.py`), so every facts
commit is signed unless the person says otherwise:

- git's own signing when the person set it up: `neo.signCommits true`, or `commit.gpgSign`
  with `neo.signCommits` unset. libgit2 cannot sign; `git commit-tree -S` signs exactly as
  `git commit -S` does (gpg or ssh, `user.signingKey`, `gpg.format`). A failure stops the
  write: the person asked for their key, and a silently unsigned commit would surprise them.
- otherwise git-neo's per-user key (`store/signing_key.py`), unless `neo.autoSign false`.
  A failure (no ssh-keygen, a damaged key) writes the commit unsigned and says so once per
  process on stderr: signing must never cost a write.
- nothing when `neo.signCommits false`.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from neo_git.config import as_bool, neo_config
from neo_git.errors import NeoError
from neo_git.identity import neo_home
from neo_git.store.signing_key import SigningFailed, ensure_key, sign

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

SIGN_TIMEOUT = 30.0   # a gpg agent may ask for a passphrase on a terminal: bounded
GIT = "git"           # signing modes: git's own signing,
OWN_KEY = "own-key"   # git-neo's per-user key
# NEO_HOME -> why its key failed in this process: said once, and not tried again by this process
_failed: dict[str, str] = {}


def signing_mode(repo: pygit2.Repository) -> str | None:
    """How facts commits are signed here: `GIT`, `OWN_KEY` or None (unsigned)."""
    explicit = neo_config("signCommits", None, repo=repo)
    if explicit is not None:
        return GIT if _true(explicit) else None
    try:
        if _true(repo.config["commit.gpgSign"]):
            return GIT
    except (KeyError, ValueError):
        pass
    return OWN_KEY if _true(neo_config("autoSign", True, repo=repo)) else None


def _true(value: object) -> bool:
    try:
        return as_bool(value)
    except (TypeError, ValueError):
        return False


def write_commit(repo: pygit2.Repository, mode: str | None, signature: pygit2.Signature, message: str,
                 tree: pygit2.Oid, parents: Sequence[pygit2.Oid], home: Path | None = None) -> pygit2.Oid:
    """Write the facts commit (author and committer *signature*), signed as *mode* says (the own
    key is the one under *home*, default `$NEO_HOME`)."""
    if mode == GIT:
        return git_signed_commit(repo, signature, message, tree, parents)
    if mode == OWN_KEY:
        home = Path(home) if home is not None else neo_home()
        if str(home) not in _failed:
            try:
                return own_key_signed_commit(repo, signature, message, tree, parents, home)
            except SigningFailed as exc:
                _say_once(str(home), str(exc))
    return repo.create_commit(None, signature, signature, message, tree, list(parents))


def own_key_signed_commit(repo: pygit2.Repository, signature: pygit2.Signature, message: str,
                          tree: pygit2.Oid, parents: Sequence[pygit2.Oid], home: Path | None = None
                          ) -> pygit2.Oid:
    """The commit signed with the person's key under *home* (made now if they have none): the
    signature over the commit's bytes goes into its `gpgsig` header, where git puts an ssh one."""
    key = ensure_key(signature.email.lower(), home)
    # pygit2's stub says Oid; it returns the commit's text
    buffer = cast(str, repo.create_commit_string(signature, signature, message, tree, list(parents)))
    armored = sign(buffer.encode("utf-8"), key)
    return repo.create_commit_with_signature(buffer, armored, "gpgsig")


def _say_once(home: str, reason: str) -> None:
    _failed[home] = reason
    try:
        print(f"warning: could not sign the facts commit with git-neo's key ({reason}); it was written "
              "unsigned, and so are this command's other writes\n"
              "hint: teammates see unsigned facts as claims; fix the key in ~/.neo/keys (a new one is made "
              "when it is missing), or turn automatic signing off: `git config --global neo.autoSign false`",
              file=sys.stderr)
    except (OSError, ValueError):   # no stderr to tell: the write goes on all the same
        pass


def git_signed_commit(repo: pygit2.Repository, signature: pygit2.Signature, message: str,
                      tree: pygit2.Oid, parents: Sequence[pygit2.Oid]) -> pygit2.Oid:
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


def reset_failure() -> None:
    """Forget a failure of this process (tests that fix the key and write again)."""
    _failed.clear()
