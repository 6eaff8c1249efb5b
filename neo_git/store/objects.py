"""Objects a repository does not have: fetch them where git can, else say which.

A partial clone (`git clone --filter=blob:none`) leaves fact blobs on the
promisor remote until something asks for them. git fetches them lazily; libgit2
(pygit2) does not, it only reports them missing. So the ref reader asks here,
once per read for every object it lacks, and git fetches them the way it does
itself for a lazy fetch (`fetch --filter=blob:none --stdin` with the ids).
Anything still missing is a `fatal:` naming the object, never a traceback.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from neo_git.errors import NeoError
from neo_git.gitrun import git_dir_args, run_git

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

FETCH_TIMEOUT = 120.0


class MissingObject(NeoError):
    """A git object the facts ref needs is not in the repository and could not be fetched."""

    def __init__(self, oid: str, where: str, remote: str | None) -> None:
        if remote:
            hint = (f"the promisor remote '{remote}' could not supply it; check the connection, "
                    f"then `git fetch {remote}` and try again")
        else:
            hint = ("the repository is incomplete (an interrupted clone or a hand-built ref); "
                    "`git fsck` lists what is missing; fetch refs/neo/facts again from a complete clone")
        super().__init__(f"object {oid} ({where}) is missing from this repository", hint)
        self.oid = oid


def promisor_remote(repo: pygit2.Repository) -> str | None:
    """The remote a partial clone fetches missing objects from, or None."""
    config = repo.config
    try:
        named = config["extensions.partialclone"]
        if named:
            return str(named)
    except KeyError:
        pass
    try:
        names = list(repo.remotes.names())
    except Exception:  # noqa: BLE001 - a broken remote config: no promisor
        return None
    for name in names:
        try:
            if config.get_bool(f"remote.{name}.promisor"):
                return name
        except (KeyError, ValueError, Exception):  # noqa: BLE001 - unset or not a boolean
            continue
    return None


def fetch_missing(repo: pygit2.Repository, oids: Iterable[str | pygit2.Oid]) -> str | None:
    """Ask the promisor remote for *oids* (one `git fetch` for all); returns the remote asked, or None."""
    wanted = sorted({str(o) for o in oids})
    remote = promisor_remote(repo)
    if not wanted or remote is None:
        return remote
    args = [*git_dir_args(repo.path), "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", remote,
            "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--stdin"]
    try:
        run_git(args, input="".join(f"{oid}\n" for oid in wanted), timeout=FETCH_TIMEOUT, check=False)
    except NeoError:
        pass  # git missing or timed out: the caller reports the object as missing
    return remote
