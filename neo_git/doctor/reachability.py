"""The doctor's check that the hooks can find `git-neo`.

git runs hooks with the PATH of whoever runs git: a terminal where the virtualenv is not
active, an IDE or a GUI client often lacks it. The shims then only record the run in
`.git/neo/missed.tsv` (with the PATH they saw); this check reports those records (`--fix`
processes them now) and, while the hooks are installed, a PATH here that finds git-neo only
through the active virtualenv. Each finding names the one command that makes git-neo
reachable: a link in a folder of that PATH."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from neo_git.doctor.findings import Context, Finding

CHECK = "path"
NOUNS = {"post-commit": "commit", "post-merge": "merge", "post-rewrite": "rebase/amend"}


def check_reachable(ctx: Context) -> list[Finding]:
    """Missed hook runs waiting to be processed, and git-neo reachable only through a virtualenv."""
    from neo_git.doctor.githooks import installed_state
    from neo_git.githooks.missed import pending_missed

    findings = []
    missed = pending_missed(ctx.paths.neo_dir)
    if missed:
        hooks_path = missed[-1].path
        counts = {noun: sum(1 for run in missed if NOUNS[run.hook] == noun) for noun in NOUNS.values()}
        what = _join([f"{n} {noun}{'s' if n != 1 else ''}" for noun, n in counts.items() if n])
        verb = "was" if len(missed) == 1 else "were"
        reachable = shutil.which("git-neo", path=hooks_path) is not None
        findings.append(Finding(
            CHECK, f"{what} {verb} made while git-neo was not on the hooks' PATH (PATH={hooks_path}); "
                   "not processed yet" + (" (git-neo is on that PATH now)" if reachable else ""),
            fix=f"process the {len(missed)} missed hook run{'s' if len(missed) != 1 else ''} now",
            hint=None if reachable else link_hint(hooks_path), action="catch-up"))
    if installed_state(ctx):
        here = shutil.which("git-neo")
        venv = os.environ.get("VIRTUAL_ENV")
        if here is None:
            findings.append(Finding(CHECK, "git-neo is not on PATH here: commits made from this shell skip "
                                           "git-neo's hooks (they only record the commit for later)",
                                    hint=link_hint(os.environ.get("PATH", ""))))
        elif venv and _inside(here, Path(venv)) and shutil.which("git-neo", path=_without(venv)) is None:
            findings.append(Finding(CHECK, f"git-neo is on PATH only while the virtualenv {venv} is active: "
                                           "commits from another terminal, an IDE or a GUI client run the hooks "
                                           "without it (they only record the commit for later)",
                                    hint=link_hint(_without(venv))))
    return findings


def catch_up(finding: Finding, ctx: Context | None, held) -> bool:
    """The "catch-up" repair: process the recorded missed hook runs now, in this process."""
    if ctx is None:
        return False
    from neo_git.githooks.runner import catch_up as process_missed

    process_missed(ctx.paths.neo_dir)
    return True


def git_neo_executable() -> Path:
    """The git-neo program running now (the console script beside this interpreter, else PATH's)."""
    beside = Path(sys.executable).parent / "git-neo"
    if beside.is_file():
        return beside
    found = shutil.which("git-neo")
    return Path(found) if found else beside


def link_hint(path: str) -> str:
    """The command that puts git-neo on *path*: a link in its first folder under HOME (else
    ~/.local/bin, which must then join PATH)."""
    home = Path.home()
    folders = [Path(p) for p in path.split(os.pathsep) if p]
    target = next((f for f in folders if _inside(f, home) and os.access(f, os.W_OK)), None)
    exe = git_neo_executable()
    if target is not None:
        return f"`ln -s {exe} {target / 'git-neo'}` makes it reachable there"
    local = home / ".local" / "bin"
    if _runs(local / "git-neo"):   # the link the advice below makes is there: only PATH is missing
        return f"{local / 'git-neo'} is in place: add {local} to the PATH your shell, IDE and git client start with"
    return (f"`mkdir -p {local} && ln -s {exe} {local / 'git-neo'}`, and add {local} to the PATH your "
            "shell, IDE and git client start with")


def _runs(program: Path) -> bool:
    """Is *program* there and executable (a link followed to its target)?"""
    return program.is_file() and os.access(program, os.X_OK)


def _inside(path: str | Path, folder: Path) -> bool:
    """Is *path* under *folder*, as written (a link in a venv's bin/ is in the venv wherever it points)?"""
    try:
        Path(os.path.abspath(path)).relative_to(os.path.abspath(folder))
        return True
    except ValueError:
        return False


def _without(venv: str) -> str:
    """PATH minus the virtualenv's folders: what a shell without it would have."""
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and not _inside(p, Path(venv)))


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
