"""The doctor's check of a damaged facts ref file, and the repair that restores its last good tip.

A loose ref file that does not hold a commit id (`echo garbage > .git/refs/neo/facts`, a
disk that lost a write) makes git itself say "reference broken" and refuse to move the ref
(`git update-ref` cannot lock what it cannot resolve). The ref's reflog
(`.git/logs/refs/neo/facts`, which git-neo creates at init) still lists every tip it had:
the repair takes the newest one whose commit is in the repository and writes it back
with git's lock protocol (`<ref>.lock` created exclusively, written, renamed over the
ref), and says so in the reflog. It never writes a new, empty root: with no good tip in
the reflog, the finding says how to look for one and the file is left as it is.
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

from neo_git.doctor.findings import Context, Finding
from neo_git.errors import NeoError

REF = "refs/neo/facts"
_OID = re.compile(r"^[0-9a-f]{40}$")
ACTION = "restore-ref"


def ref_file_problem(common_dir: Path, ref: str = REF) -> str | None:
    """What is wrong with the loose file of *ref* (None when it is absent, an id or a symref)."""
    path = Path(common_dir) / ref
    try:
        text = path.read_bytes()[:200].decode("utf-8", "replace").strip()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return f"{path} is a folder, not a ref file"
    except OSError as exc:
        return f"{path} cannot be read: {exc.strerror}"
    if _OID.match(text) or text.startswith("ref: "):
        return None
    return f"{path} does not hold a commit id (it starts {text[:20]!r})"


def last_good_tip(repo, common_dir: Path, ref: str = REF) -> str | None:
    """The newest tip in *ref*'s reflog whose commit is in the repository."""
    import pygit2

    try:
        lines = (Path(common_dir) / "logs" / ref).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        parts = line.split(" ", 2)
        if len(parts) < 2 or not _OID.match(parts[1]) or set(parts[1]) == {"0"}:
            continue
        try:
            if isinstance(repo.get(parts[1]), pygit2.Commit):
                return parts[1]
        except (ValueError, pygit2.GitError):
            continue
    return None


def check_ref_file(ctx: Context) -> list[Finding]:
    """A facts ref file that does not hold a commit id, with the tip `--fix` would restore."""
    problem = ref_file_problem(ctx.paths.common_dir)
    if problem is None:
        return []
    tip = last_good_tip(ctx.repo, ctx.paths.common_dir)
    if tip is None:
        return [Finding("ref-file", problem, hint=(
            f"its reflog names no commit that is here; `git fsck --lost-found` lists unreachable commits "
            f"(a facts commit's message starts with add/merge/supersede): `git update-ref {REF} <commit>` "
            f"after removing the broken file"), path=str(Path(ctx.paths.common_dir) / REF))]
    return [Finding("ref-file", problem, fix=f"restore {REF} to {tip[:12]}, its last good tip in the reflog",
                    path=str(Path(ctx.paths.common_dir) / REF), action=ACTION)]


def restore_ref(finding: Finding, ctx: "Context | None", held: "set[str] | None") -> bool:
    """The "restore-ref" repair: write the reflog's last good tip back with git's lock protocol."""
    if ctx is None or ref_file_problem(ctx.paths.common_dir) is None:
        return False
    tip = last_good_tip(ctx.repo, ctx.paths.common_dir)
    if tip is None:
        return False
    path = Path(ctx.paths.common_dir) / REF
    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise NeoError(f"{lock} exists: another process is updating the ref",
                       "run `git neo doctor --fix` again once it is done (the doctor clears it if it is stale)") \
            from None
    try:
        os.write(fd, (tip + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(lock, path)
    _log(ctx, tip)
    return True


def _log(ctx: Context, tip: str) -> None:
    """Say in the reflog what happened (git appends the same way: `old new who when\tmessage`)."""
    from neo_git.identity import author_identity

    who = author_identity(ctx.repo)
    stamp = time.strftime("%z")
    line = f"{'0' * 40} {tip} {who} {int(time.time())} {stamp}\tneo: doctor restored the last good tip\n"
    try:
        with open(Path(ctx.paths.common_dir) / "logs" / REF, "a", encoding="utf-8") as log:
            log.write(line)
    except OSError:
        pass   # the ref is restored; a reflog line is a courtesy
