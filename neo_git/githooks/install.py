"""`git neo install [--uninstall]`: put the shims from the shipped `hooks/` folder in place.

- The hooks folder is the one git uses: `git rev-parse --git-path hooks` (honours
  `core.hooksPath`; a linked worktree gets the common `.git/hooks`). A `core.hooksPath`
  inside the work tree is refused: those hooks are tracked files shared with the team.
- A hook already there is kept: it is renamed to `<hook>.neo-chained` (same inode, so
  bytes, mode and symlinks survive) and our shim runs it first, with the same arguments
  and stdin; its exit status is the hook's status.
- Our shims carry MARKER; `--uninstall` removes only files that carry it and renames the
  chained hook back, so the folder is exactly as it was.
- `notes.rewriteRef=refs/notes/neo` is added (multi-valued key: other values are kept) so
  notes follow amend and rebase; uninstall removes only the value install added.
- What install did is recorded in `.git/neo/install.json`.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from neo_git import safejson
from neo_git.errors import NeoError
from neo_git.fileio import atomic_write, locked
from neo_git.gitrun import run_git
from neo_git.identity import RepositoryPaths, repository_paths

HOOK_NAMES = ("post-commit", "post-merge", "post-rewrite", "pre-commit")
MARKER = "# git-neo hook shim"
CHAINED_SUFFIX = ".neo-chained"
NOTES_REF = "refs/notes/neo"
STATE_FILE = "install.json"


@dataclass
class InstallReport:
    """What install or uninstall did, for the CLI to print."""

    hooks_dir: Path
    installed: list[str] = field(default_factory=list)     # shims written
    chained: list[str] = field(default_factory=list)       # existing hooks kept and chained
    restored: list[str] = field(default_factory=list)      # uninstall: original hooks back in place
    removed: list[str] = field(default_factory=list)       # uninstall: shims deleted
    skipped: list[str] = field(default_factory=list)       # "hook: reason"
    rewrite_ref: str = ""                                  # what happened to notes.rewriteRef

    def to_dict(self) -> dict:
        """JSON form."""
        return {"hooks_dir": str(self.hooks_dir), "installed": self.installed, "chained": self.chained,
                "restored": self.restored, "removed": self.removed, "skipped": self.skipped,
                "rewrite_ref": self.rewrite_ref}


def _git(paths: RepositoryPaths, *args: str, check: bool = True):
    cwd = paths.workdir or paths.git_dir
    return run_git(list(args), cwd=cwd, check=check, timeout=30)


def hooks_dir(paths: RepositoryPaths) -> Path:
    """The folder git runs hooks from; NeoError when core.hooksPath points into the work tree."""
    where = _git(paths, "rev-parse", "--git-path", "hooks").stdout.strip()
    base = paths.workdir or paths.git_dir
    folder = (Path(base) / where).resolve() if not os.path.isabs(where) else Path(where).resolve()
    configured = _git(paths, "config", "--get", "core.hooksPath", check=False).stdout.strip()
    if configured and paths.workdir is not None:
        workdir = paths.workdir.resolve()
        if folder == workdir or workdir in folder.parents:
            raise NeoError(f"core.hooksPath points into the work tree ({configured}): those hooks are files "
                           "of the repository, shared with everyone",
                           "add `git-neo hook <name>` calls to them yourself, use the pre-commit framework "
                           "(see README), or unset core.hooksPath and run `git neo install` again")
    return folder


def is_ours(path: Path) -> bool:
    """True when *path* is a shim we wrote."""
    try:
        if path.is_symlink():
            return False
        with open(path, "rb") as handle:
            return MARKER.encode() in handle.read(512)
    except OSError:
        return False


def _exists(path: Path) -> bool:
    return path.is_symlink() or path.exists()


def shim_text(name: str) -> bytes:
    """The shipped shim for hook *name*."""
    from neo_git.resources import shipped_dir

    return (shipped_dir("hooks") / name).read_bytes()


def install(repo, names: tuple[str, ...] = HOOK_NAMES) -> InstallReport:
    """Install the shims (idempotent: a second run refreshes our shims, chains nothing twice)."""
    paths = repository_paths(repo)
    folder = hooks_dir(paths)
    report = InstallReport(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths.neo_dir.mkdir(parents=True, exist_ok=True)
    with locked(paths.neo_dir / "install.lock"):
        state = _read_state(paths)
        for name in names:
            target = folder / name
            chained = folder / (name + CHAINED_SUFFIX)
            if _exists(target) and not is_ours(target):
                if _exists(chained):
                    report.skipped.append(f"{name}: both {target.name} and {chained.name} exist and neither is "
                                          "ours; move one away and run install again")
                    continue
                os.replace(target, chained)   # a rename keeps the bytes, the mode, even a symlink
                report.chained.append(name)
            atomic_write(target, shim_text(name), durable=False)
            target.chmod(0o755)
            report.installed.append(name)
        state["hooks_dir"] = str(folder)
        state["hooks"] = sorted(set(state.get("hooks", [])) | set(report.installed))
        values = _git(paths, "config", "--get-all", "notes.rewriteRef", check=False).stdout.split()
        if NOTES_REF in values:
            report.rewrite_ref = "already set"
        else:
            _git(paths, "config", "--add", "notes.rewriteRef", NOTES_REF)
            state["rewrite_ref_added"] = True
            report.rewrite_ref = "added"
        _write_state(paths, state)
    return report


def uninstall(repo, names: tuple[str, ...] = HOOK_NAMES) -> InstallReport:
    """Remove our shims and put back whatever was there before install."""
    paths = repository_paths(repo)
    state = _read_state(paths)
    folder = Path(state["hooks_dir"]) if state.get("hooks_dir") else hooks_dir(paths)
    report = InstallReport(folder)
    with locked(paths.neo_dir / "install.lock"):
        for name in names:
            target = folder / name
            chained = folder / (name + CHAINED_SUFFIX)
            if _exists(target) and not is_ours(target):
                report.skipped.append(f"{name}: not our shim any more (left as it is)")
                continue
            if _exists(chained):
                os.replace(chained, target)
                report.restored.append(name)
            elif _exists(target):
                target.unlink()
                report.removed.append(name)
        if state.pop("rewrite_ref_added", False):
            _git(paths, "config", "--unset", "notes.rewriteRef", "^refs/notes/neo$", check=False)
            report.rewrite_ref = "removed"
        state["hooks"] = []
        _write_state(paths, state)
    return report


def hooks_installed(paths: RepositoryPaths) -> bool:
    """Whether `git neo install` put the hooks in (its record says so)."""
    return bool(_read_state(paths).get("hooks"))


def _read_state(paths: RepositoryPaths) -> dict:
    try:
        data = safejson.loads((paths.neo_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_state(paths: RepositoryPaths, state: dict) -> None:
    paths.neo_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(paths.neo_dir / STATE_FILE, (json.dumps(state, indent=2, sort_keys=True) + "\n").encode())
