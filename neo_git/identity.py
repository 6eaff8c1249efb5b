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

from neo_git.errors import NeoError, NotARepository

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

UNKNOWN_ORG = "unknown"


def neo_home() -> Path:
    """`$NEO_HOME`, else `~/.neo`: where global and org facts live.

    A relative NEO_HOME is refused: it would be resolved against whatever folder a
    command runs in (a hook runs in the work tree), scattering facts into checkouts.
    A NEO_HOME that is a file is refused too."""
    from neo_git.errors import NeoError

    env = os.environ.get("NEO_HOME")
    if not env:
        return Path.home() / ".neo"
    home = Path(env).expanduser()
    if not home.is_absolute():
        raise NeoError(f"NEO_HOME must be an absolute path, not '{env}'",
                       "set it to a full path (e.g. NEO_HOME=$HOME/.neo), or unset it to use ~/.neo")
    if home.exists() and not home.is_dir():
        raise NeoError(f"NEO_HOME is not a folder: {home}",
                       "point NEO_HOME at a folder (it is created if missing), or unset it to use ~/.neo")
    return home


def vector_cache_dir(home: Path | None = None) -> Path:
    """Where embeddings are cached: `<NEO_HOME>/cache/vectors` (derived data, local)."""
    return (neo_home() if home is None else Path(home)) / "cache" / "vectors"


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


def repository_paths(repo: pygit2.Repository) -> RepositoryPaths:
    """The paths of an open pygit2 repository, resolving a linked worktree's common dir
    (`$GIT_COMMON_DIR` wins, as in git)."""
    git_dir = Path(repo.path).resolve()
    common = git_dir
    env_common = os.environ.get("GIT_COMMON_DIR")
    commondir_file = git_dir / "commondir"  # linked worktrees point at the main .git
    if env_common:
        common = Path(env_common).resolve()
    elif commondir_file.is_file():
        pointer = commondir_file.read_text(encoding="utf-8").strip()
        common = (git_dir / pointer).resolve()
    workdir = Path(repo.workdir).resolve() if repo.workdir else None
    return RepositoryPaths(git_dir=git_dir, common_dir=common, workdir=workdir)


def open_repository(path: str | os.PathLike | None = None) -> pygit2.Repository:
    """The repository git itself would use from *path* (default: the current directory).

    Inside hooks git sets `GIT_DIR` (and `GIT_WORK_TREE`, in worktrees `GIT_COMMON_DIR`,
    during `commit -a` `GIT_INDEX_FILE`); they win over discovery, as in git. An explicit
    *path* other than the current directory (a library caller naming a repository) is
    discovered from that path, ignoring `GIT_DIR`. The index git would commit is
    `open_index(repo)`. Raises NotARepository.
    """
    import pygit2

    from neo_git.errors import NeoError

    here = os.getcwd()
    explicit = path is not None and os.path.abspath(path) != here
    git_dir = None if explicit else os.environ.get("GIT_DIR")
    if git_dir:
        try:
            repo = pygit2.Repository(os.path.abspath(git_dir))
        except pygit2.GitError as exc:
            raise NeoError(f"GIT_DIR does not name a repository: {git_dir} ({exc})",
                           "unset GIT_DIR or point it at a .git directory") from None
        if not os.environ.get("GIT_WORK_TREE"):
            _work_tree_from_gitfile(repo, here)   # hooks of a --separate-git-dir repository
    else:
        start = os.fspath(path) if path is not None else here
        try:
            found = pygit2.discover_repository(start)
        except pygit2.GitError as exc:
            raise_unsupported(start, exc)
        if not found:
            raise NotARepository(os.path.abspath(start))
        try:
            repo = pygit2.Repository(found)
        except pygit2.GitError as exc:
            raise_unsupported(found, exc)
        _work_tree_from_gitfile(repo, start)
    work_tree = None if explicit else os.environ.get("GIT_WORK_TREE")
    if work_tree:
        repo.workdir = os.path.abspath(work_tree)
    return repo


def _work_tree_from_gitfile(repo, start: str) -> None:
    """`git init --separate-git-dir` leaves a `.git` *file* in the work tree; libgit2 then takes
    the git dir's parent for the work tree (unless `core.worktree` says otherwise), while git
    takes the folder holding that file. Do as git does."""
    if repo.is_bare:
        return
    try:
        if repo.config["core.worktree"]:
            return   # git and libgit2 both follow it
    except (KeyError, ValueError):
        pass
    folder = Path(os.path.abspath(start))
    for candidate in (folder, *folder.parents):
        marker = candidate / ".git"
        if marker.is_dir():
            return   # an ordinary repository: libgit2 already agrees with git
        if marker.is_file():
            if (Path(repo.path) / "commondir").is_file():
                return   # a linked worktree: libgit2 reads its `gitdir` link itself
            if repo.workdir is None or Path(repo.workdir).resolve() != candidate.resolve():
                repo.workdir = str(candidate)
            return


def raise_unsupported(where: str, exc: Exception):
    """A repository libgit2 cannot open (sha256 objects, reftable refs, ...): say so."""
    from neo_git.errors import NeoError

    text = str(exc)
    if "objectformat" in text.lower() or "object format" in text.lower():
        raise NeoError(f"{where} uses an object format libgit2 cannot read ({text})",
                       "git-neo needs a sha1 repository; sha256 repositories are not supported yet") from None
    if "reftable" in text.lower() or "refstorage" in text.lower():
        raise NeoError(f"{where} stores refs in the reftable format, which libgit2 cannot open",
                       "git-neo works with the files ref backend (`git refs migrate --ref-format=files`)") from None
    raise NeoError(f"cannot open the repository at {where}: {text}",
                   "check it with `git status`; git-neo opens repositories with libgit2") from None


def open_index(repo: pygit2.Repository) -> pygit2.Index:
    """The index git would commit now: `$GIT_INDEX_FILE` (set during `git commit -a` and in
    hooks) if set, else the repository's, freshly read."""
    import pygit2

    from neo_git.errors import NeoError

    named = os.environ.get("GIT_INDEX_FILE")
    if named:
        return pygit2.Index(os.path.abspath(named))  # a missing file is an empty index, as in git
    if repo.is_bare:
        raise NeoError("a bare repository has no index", "measure a commit instead: `git neo health REV`")
    index = repo.index
    index.read(True)  # the Repository object may be older than the last `git add`
    return index


def find_repository_paths(path: str | os.PathLike | None = None) -> RepositoryPaths:
    """Paths of the repository containing *path* (default: as git finds it from here)."""
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


def org_id(repo: pygit2.Repository) -> str:
    """Org id: `git config neo.org` when set (a remote whose URL does not name the org, or none),
    else from `origin`, else the first remote, else "unknown"."""
    try:
        configured = sanitize_id(str(repo.config["neo.org"]))
        if configured:
            return configured
    except Exception:  # noqa: BLE001 - unset (KeyError), or a broken config: fall back to the remotes
        pass
    try:
        names = [name for name in repo.remotes.names() if name is not None]
    except Exception:  # noqa: BLE001 - a broken remote config must not stop us
        return UNKNOWN_ORG
    if not names:
        return UNKNOWN_ORG
    name = "origin" if "origin" in names else sorted(names)[0]
    try:
        return org_from_url(repo.remotes[name].url or "")
    except Exception:  # noqa: BLE001
        return UNKNOWN_ORG


def root_commit_id(repo: pygit2.Repository) -> str | None:
    """First 16 hex of the root commit reached from HEAD by first parents, or None if unborn."""
    import pygit2

    try:
        if repo.head_is_unborn:
            return None
        head = repo.head.target
    except (pygit2.GitError, ValueError) as exc:   # InvalidSpecError: `ref: refs/heads/bad name`
        raise bad_head(repo, exc) from None
    walker = repo.walk(head, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.simplify_first_parent()
    for commit in walker:
        return str(commit.id)[:16]
    return None


def bad_head(repo: pygit2.Repository, exc: Exception) -> NeoError:
    """The error for a HEAD that names no valid branch or commit (git's own commands fail on it too)."""
    try:
        target = (Path(repo.path) / "HEAD").read_text(encoding="utf-8", errors="replace").strip()[:200]
    except OSError:
        target = "?"
    return NeoError(f"HEAD is not valid ({target!r}: {exc})",
                    "point it at a branch: `git symbolic-ref HEAD refs/heads/main` (or your branch's name)")


def author_identity(repo: pygit2.Repository | None) -> str:
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
