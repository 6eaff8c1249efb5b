"""The doctor's check of leftovers (ref locks whose owner is gone, temp files nobody writes),
and the repair that removes a file."""
from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.doctor.findings import STALE_SECONDS, Context, Finding
from neo_git.errors import NeoError

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.identity import RepositoryPaths

# "Owner is gone" is decided by asking the kernel: a git process updating a ref keeps its
# `.lock` open, as an interrupted `atomic_write` keeps its temp file, so a file no process has
# open and that is older than any live update is stale. git closes a ref lock just before
# renaming it into place (refs/files-backend.c), so a lock nobody has open is given a couple
# of seconds, as `RefStore` does, not a minute: a lock orphaned 10 s ago blocks every write.
LOCK_GRACE_SECONDS = 2.0


def open_files() -> set[str] | None:
    """Paths some process has open (from /proc); None where the system does not say."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    found: set[str] = set()
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir(proc / pid / "fd"):
                try:
                    found.add(os.readlink(proc / pid / "fd" / fd))
                except OSError:
                    continue
        except OSError:
            continue
    return found


def check_leftovers(paths: RepositoryPaths, home: Path, now: float | None = None) -> list[Finding]:
    """Ref locks whose owner is gone and temp files nobody is writing."""
    now = time.time() if now is None else now
    held = open_files()
    common = paths.common_dir
    locks = [*glob_paths(common / "refs" / "neo", "**/*.lock"), *glob_paths(common / "refs" / "notes", "**/*.lock"),
             *(p for p in (common / "packed-refs.lock",) if p.exists())]
    temps = [p for folder in (paths.neo_dir, paths.neo_dir / "cache", paths.git_dir / "neo", home / "facts",
                              *glob_paths(home / "cache" / "vectors", "*/"))
             for p in glob_paths(folder, "*.tmp")]
    findings = []
    for kind, files in (("lock", locks), ("temp file", temps)):
        for path in sorted(set(files)):
            try:
                age = now - path.stat().st_mtime
            except OSError:
                continue
            if held is not None and str(path) in held:
                continue  # someone is using it right now
            grace = LOCK_GRACE_SECONDS if kind == "lock" and held is not None else STALE_SECONDS
            if age < grace:
                continue
            owner = "no process has it open" if held is not None else "no way to ask who holds it"
            findings.append(Finding("leftovers", f"{path}: a {kind} left behind {int(age)} s ago ({owner})",
                                    fix=f"remove {path}", path=str(path)))
    return findings


def glob_paths(folder: Path, pattern: str) -> Iterable[Path]:
    """Matches of *pattern* under *folder* ([] when it is not a folder or cannot be read)."""
    try:
        return [p for p in folder.glob(pattern)] if folder.is_dir() else []
    except OSError:
        return []


def remove_file(finding: Finding, ctx: Context | None, held: set[str] | None) -> bool:
    """The "remove" repair: delete the file at `finding.path` unless someone has it open now
    or it became a folder (a folder in the way is the user's to look at, never deleted)."""
    if finding.path is None:
        return False
    path = Path(finding.path)
    if held is not None and str(path) in held:
        return False
    try:
        if path.is_dir():
            return False
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise NeoError(f"cannot remove {path}: {exc.strerror}", "check its permissions") from None
    return True
