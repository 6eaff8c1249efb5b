"""Where `.git/neo` is, found from git's files the way the git hook shims find it (no pygit2).

An agent hook that only has to ask the agent's running `git neo mcp` server for its answer
must not pay for libgit2 (~40 ms of CPU to import and open a repository) just to learn where
the server's socket is. Git's discovery is simple for the usual case: walk up from the folder
to the first one holding `.git` (a folder, or a file saying `gitdir: <path>` in a linked
worktree or a `--separate-git-dir` checkout) or being a git dir itself (bare); a worktree's
git dir names the shared one in `commondir`. Anything this walk does not model — `GIT_DIR`,
`GIT_COMMON_DIR` or `GIT_CEILING_DIRECTORIES` in the environment, a `.git` file that does not
parse — is `UNSURE`, and the caller takes the full path (pygit2's discovery). Like git and
pygit2's default, the walk stops at a filesystem boundary.
Standard library only: it runs in the hook's start-up path.
"""
from __future__ import annotations

import os


class GitPlace:
    """The git dir of the worktree a hook runs in, and the folder shared by its worktrees.
    (A plain class: `typing.NamedTuple` would import typing, ~3 ms of the hook's start-up.)"""

    __slots__ = ("git_dir", "common_dir")

    def __init__(self, git_dir: str, common_dir: str) -> None:
        self.git_dir = git_dir        # resolved: `.git`, `.git/worktrees/<name>`, or a separate git dir
        self.common_dir = common_dir  # resolved: where refs, objects and git-neo's local state live

    def __eq__(self, other) -> bool:
        return isinstance(other, GitPlace) and (self.git_dir, self.common_dir) == (other.git_dir, other.common_dir)

    def __repr__(self) -> str:
        return f"GitPlace({self.git_dir!r}, {self.common_dir!r})"

    @property
    def neo_dir(self) -> str:
        """`<common dir>/neo`, as `identity.RepositoryPaths.neo_dir`."""
        return os.path.join(self.common_dir, "neo")


UNSURE = "unsure"   # the environment changes git's discovery: ask pygit2
_GIT_ENV = ("GIT_DIR", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES")


def find_git_place(start: str) -> GitPlace | str | None:
    """The repository containing *start* (a GitPlace), None when there is none, or UNSURE."""
    if any(os.environ.get(name) for name in _GIT_ENV):
        return UNSURE
    try:
        folder = os.path.realpath(start)
        device = os.stat(folder).st_dev
    except (OSError, ValueError):
        return UNSURE
    while True:
        marker = os.path.join(folder, ".git")
        if os.path.isdir(marker):
            return _place(marker) if _is_git_dir(marker) else UNSURE
        if os.path.isfile(marker):
            return _from_gitfile(marker, folder)
        if _is_git_dir(folder):
            return _place(folder)   # a bare repository (or the agent runs inside .git)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        try:
            if os.stat(parent).st_dev != device:
                return None   # git stops at a filesystem boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM unset)
        except OSError:
            return UNSURE
        folder = parent


def _is_git_dir(path: str) -> bool:
    # git's own test (setup.c, is_git_directory): HEAD, objects/ and refs/ (commondir aside).
    common = path
    pointer = _first_line(os.path.join(path, "commondir"))
    if pointer:
        common = os.path.join(path, pointer)
    return (os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(os.path.join(common, "objects"))
            and os.path.isdir(os.path.join(common, "refs")))


def _from_gitfile(marker: str, folder: str) -> GitPlace | str:
    line = _first_line(marker)
    if not line or not line.startswith("gitdir:"):
        return UNSURE
    target = os.path.join(folder, line[len("gitdir:"):].strip())   # a relative path is relative to the file
    return _place(target) if _is_git_dir(target) else UNSURE


def _place(git_dir: str) -> GitPlace:
    git_dir = os.path.realpath(git_dir)
    pointer = _first_line(os.path.join(git_dir, "commondir"))
    common = os.path.realpath(os.path.join(git_dir, pointer)) if pointer else git_dir
    return GitPlace(git_dir, common)


def _first_line(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.readline(4096).decode("utf-8", "surrogateescape").strip()
    except (OSError, ValueError):
        return ""


def cwd_neo_dir():
    """`.git/neo` of the directory the agent started us in (where the log belongs when the
    payload itself was unreadable); None outside a repository."""
    try:
        from neo_git.identity import open_repository, repository_paths

        return repository_paths(open_repository()).neo_dir
    except BaseException:  # noqa: BLE001 - only choosing where to log
        return None
