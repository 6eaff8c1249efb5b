"""Who and where: NEO_HOME, the repository's paths, org id from the remote, project id.

Kept free of pygit2 at import time; functions that need a repository take one.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from neo_git.errors import NotARepository

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

UNKNOWN_ORG = "unknown"


def neo_home() -> Path:
    """`$NEO_HOME`, else `~/.neo`: where global and org facts live."""
    env = os.environ.get("NEO_HOME")
    return Path(env).expanduser() if env else Path.home() / ".neo"


@dataclass(frozen=True)
class RepositoryPaths:
    """The directories of one repository (or linked worktree)."""

    git_dir: Path      # per-worktree git dir (.git, or .git/worktrees/<name>)
    common_dir: Path   # shared by all worktrees: refs, objects, and our local state
    workdir: Path | None  # None for a bare repository

    @property
    def neo_dir(self) -> Path:
        """`.git/neo/`: local state shared by the worktrees of this repository."""
        return self.common_dir / "neo"

    @property
    def session_file(self) -> Path:
        """Session-scope facts: one file per worktree."""
        return self.git_dir / "neo" / "session.json"


def repository_paths(repo: "pygit2.Repository") -> RepositoryPaths:
    """The paths of an open pygit2 repository, resolving a linked worktree's common dir."""
    git_dir = Path(repo.path).resolve()
    common = git_dir
    commondir_file = git_dir / "commondir"  # linked worktrees point at the main .git
    if commondir_file.is_file():
        pointer = commondir_file.read_text(encoding="utf-8").strip()
        common = (git_dir / pointer).resolve()
    workdir = Path(repo.workdir).resolve() if repo.workdir else None
    return RepositoryPaths(git_dir=git_dir, common_dir=common, workdir=workdir)


def open_repository(path: str | os.PathLike = ".") -> "pygit2.Repository":
    """Open the repository containing *path*, or raise NotARepository."""
    import pygit2

    found = pygit2.discover_repository(str(path))
    if not found:
        raise NotARepository(os.path.abspath(path))
    return pygit2.Repository(found)


def find_repository_paths(path: str | os.PathLike = ".") -> RepositoryPaths:
    """Paths of the repository containing *path*."""
    return repository_paths(open_repository(path))


# --- org id ------------------------------------------------------------------

_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>(?!/).+)$")


def org_from_url(url: str) -> str:
    """The organisation in a remote URL: `git@github.com:acme/api.git` -> `acme`.

    Handles https (with credentials, which are dropped), ssh://, scp-like
    `user@host:org/repo`, with or without `.git`. Local paths and URLs without
    an owner component give "unknown".
    """
    url = url.strip()
    if not url:
        return UNKNOWN_ORG
    path = None
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme == "file" or not parts.hostname:
            return UNKNOWN_ORG
        path = parts.path
    else:
        match = _SCP_LIKE.match(url)
        if match and not re.match(r"^[A-Za-z]:[\\/]", url):  # not a Windows drive path
            path = match.group("path")
    if path is None:
        return UNKNOWN_ORG
    segments = [s for s in path.split("/") if s]
    if len(segments) < 2:
        return UNKNOWN_ORG
    org = segments[0]
    if org.startswith("~"):  # ssh://host/~user/repo
        org = org[1:]
    return sanitize_id(org) or UNKNOWN_ORG


def sanitize_id(text: str) -> str:
    """Lower-case and keep only characters safe in a file name."""
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")


def org_id(repo: "pygit2.Repository") -> str:
    """Org id from `origin`, else the first remote, else "unknown"."""
    try:
        names = list(repo.remotes.names())
    except Exception:  # noqa: BLE001 - a broken remote config must not stop us
        return UNKNOWN_ORG
    if not names:
        return UNKNOWN_ORG
    name = "origin" if "origin" in names else sorted(names)[0]
    try:
        return org_from_url(repo.remotes[name].url or "")
    except Exception:  # noqa: BLE001
        return UNKNOWN_ORG


def root_commit_id(repo: "pygit2.Repository") -> str | None:
    """First 16 hex of the root commit reached from HEAD by first parents, or None if unborn."""
    import pygit2

    if repo.head_is_unborn:
        return None
    walker = repo.walk(repo.head.target, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.simplify_first_parent()
    for commit in walker:
        return str(commit.id)[:16]
    return None


def author_identity(repo: "pygit2.Repository | None") -> str:
    """`Name <email>` of the person writing a fact, from git's usual sources."""
    name = os.environ.get("GIT_AUTHOR_NAME")
    email = os.environ.get("GIT_AUTHOR_EMAIL")
    if repo is not None and (not name or not email):
        config = repo.config
        try:
            name = name or config["user.name"]
        except KeyError:
            pass
        try:
            email = email or config["user.email"]
        except KeyError:
            pass
    return f"{name or 'unknown'} <{email or 'unknown'}>"
