"""Which remote the project's facts are shared with: chosen once per repository, in `neo.remote`.

Sharing is opt-in per remote. A clone of an open-source project has an `origin` that belongs to
someone else; pushing the team's memory there because it is the default would be a surprise.
So `sync` and `push` go only to the remote recorded in `neo.remote`, which only
`git neo sync --remote R` and `git neo install --remote R` record; anything else is refused
with a message that says what would have been pushed where. Pulling needs no choice: it
writes nothing remote.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from neo_git.config import neo_config
from neo_git.errors import NeoError
from neo_git.gitrun import GitCommandError, git_dir_args, run_git
from neo_git.identity import repository_paths

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.sync.transport import RefNames

REMOTE_KEY = "neo.remote"


def chosen_remote(repo: pygit2.Repository) -> str | None:
    """The remote chosen for sharing facts (`neo.remote`), or None."""
    value = neo_config(REMOTE_KEY, None, repo=repo)
    return value.strip() if isinstance(value, str) and value.strip() else None


def choose_remote(repo: pygit2.Repository, remote: str) -> bool:
    """Record *remote* as the one facts are shared with (`git config --local neo.remote`);
    False when it already was."""
    if remote not in list(repo.remotes.names()):
        raise NeoError(f"no remote named '{remote}'", "`git remote -v` lists them; `git remote add` adds one")
    if chosen_remote(repo) == remote:
        return False
    _git_config(repo, [REMOTE_KEY, remote])
    return True


def forget_remote(repo: pygit2.Repository, remote: str) -> bool:
    """Take back the choice of *remote* (only when it is the chosen one); True when it was."""
    if chosen_remote(repo) != remote:
        return False
    _git_config(repo, ["--unset", REMOTE_KEY])
    return True


def require_chosen(repo: pygit2.Repository, remote: str, names: RefNames) -> None:
    """NeoError unless *remote* is the chosen remote; the message says what a push would send where."""
    chosen = chosen_remote(repo)
    if chosen == remote:
        return
    what = push_preview(repo, names)
    where = f"{remote} ({remote_url(repo, remote)})"
    if chosen is None:
        raise NeoError(f"no remote is chosen for sharing facts yet: this would push {what} to {where}",
                       f"to share them there, run `git neo sync --remote {remote}` once (it records "
                       f"neo.remote); to only bring others' facts in, run `git neo pull {remote}`")
    raise NeoError(f"{remote} is not the remote chosen for sharing facts (neo.remote is {chosen}): "
                   f"this would push {what} to {where}",
                   f"`git neo sync {chosen}` shares with {chosen}; `git neo sync --remote {remote}` makes "
                   f"{remote} the one instead; `git neo pull {remote}` only fetches")


def push_preview(repo: pygit2.Repository, names: RefNames) -> str:
    """"refs/neo/facts (3 facts) and refs/notes/neo (2 notes)" for what this clone holds."""
    from neo_git.sync.transport import FACTS_REF, NOTES_REF

    parts = []
    for local, remote_ref, noun in ((FACTS_REF, names.facts_remote, "fact"), (NOTES_REF, names.notes_remote, "note")):
        count = _entries(repo, local, "facts" if noun == "fact" else None)
        if count is None:
            continue
        label = local if local == remote_ref else f"{local} (as {remote_ref})"
        parts.append(f"{label} ({count} {noun}{'' if count == 1 else 's'})")
    return " and ".join(parts) or "nothing yet (no facts or notes in this clone)"


def remote_url(repo: pygit2.Repository, remote: str) -> str:
    """Where a push to *remote* goes (its push URL when it has one)."""
    try:
        found = repo.remotes[remote]
    except (KeyError, ValueError):
        return "?"
    return found.push_url or found.url or "?"


def _entries(repo: pygit2.Repository, ref: str, folder: str | None) -> int | None:
    """Blobs in the tip tree of *ref* (under *folder*, one level of 2-hex subfolders), or None
    without the ref."""
    import pygit2

    try:
        commit = repo.references[ref].peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    tree: pygit2.Object | None = commit.tree
    if folder is not None:
        if folder not in commit.tree:
            return 0
        tree = repo.get(commit.tree[folder].id)
    count = 0
    for entry in tree if isinstance(tree, pygit2.Tree) else ():
        if entry.type_str == "tree":
            sub = repo.get(entry.id)
            count += sum(1 for _ in sub) if isinstance(sub, pygit2.Tree) else 0
        else:
            count += 1
    return count


def _git_config(repo: pygit2.Repository, args: list[str]) -> None:
    paths = repository_paths(repo)
    try:
        run_git([*git_dir_args(paths.git_dir), "config", "--local", *args], cwd=paths.git_dir, timeout=10)
    except GitCommandError as exc:
        raise NeoError(f"could not change {REMOTE_KEY}: {exc.message}") from None
