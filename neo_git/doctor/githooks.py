"""The doctor's check of the git hooks `git neo install` put in place: each shim still there,
git-neo's own and up to date, executable, in the folder git runs hooks from, and each hook it
chained (the one that was there before) still able to run. Missing or stale shims are a
`--fix` (install again: idempotent, chains nothing twice); anything someone else changed is
reported with the command to run."""
from __future__ import annotations

import os
from pathlib import Path

from neo_git.doctor.findings import Context, Finding
from neo_git.errors import NeoError

CHECK = "hooks"


def installed_state(ctx: Context) -> dict:
    """What `git neo install` recorded ({} when it never ran or uninstall ran last)."""
    from neo_git.githooks.install import _read_state

    state = _read_state(ctx.paths)
    return state if state.get("hooks") else {}


def check_hooks(ctx: Context) -> list[Finding]:
    """The installed shims: present, ours, current, executable, where git looks, chained hooks runnable."""
    from neo_git.githooks.install import CHAINED_SUFFIX, hooks_dir, is_ours, shim_text

    state = installed_state(ctx)
    if not state:
        return []
    try:
        folder = hooks_dir(ctx.paths)
    except NeoError as exc:
        return [Finding(CHECK, f"git-neo's hooks cannot run: {exc.message}", hint=exc.hint)]
    recorded = Path(state.get("hooks_dir") or folder)
    # A repository moved or copied keeps its shims in the folder git runs hooks from, while
    # install.json still names the old absolute path: that is not a moved core.hooksPath.
    moved_with_repo = all(is_ours(folder / name) for name in state.get("hooks", []))
    if recorded.resolve() != folder.resolve() and not moved_with_repo:
        return [Finding(CHECK, f"git runs hooks from {folder} now (core.hooksPath), but git-neo's shims are in "
                               f"{recorded}: none of them runs", fix=f"install the shims in {folder}",
                        action="reinstall-hooks")]
    findings = []
    for name in state.get("hooks", []):
        target, chained = folder / name, folder / (name + CHAINED_SUFFIX)
        if not (target.exists() or target.is_symlink()):
            findings.append(Finding(CHECK, f"the {name} hook is gone from {folder}: git-neo's {name} work does "
                                           "not run", fix=f"install the {name} shim again", action="reinstall-hooks"))
        elif not is_ours(target):
            hint = (f"both {target.name} and {chained.name} exist: merge them by hand, keep one, then run "
                    "`git neo install`" if chained.exists() else
                    f"`git neo install` keeps it (as {chained.name}) and runs it before git-neo's work")
            findings.append(Finding(CHECK, f"{target} is no longer git-neo's shim (something replaced it): "
                                           f"git-neo's {name} work does not run", hint=hint, path=str(target)))
        else:
            if target.read_bytes() != shim_text(name):
                findings.append(Finding(CHECK, f"the {name} shim in {folder} is not the one this git-neo ships",
                                        fix=f"install the current {name} shim", action="reinstall-hooks"))
            elif not os.access(target, os.X_OK):
                findings.append(Finding(CHECK, f"{target} is not executable, so git skips it",
                                        fix=f"install the {name} shim again", action="reinstall-hooks"))
        if chained.exists() and not os.access(chained, os.X_OK):
            findings.append(Finding(CHECK, f"your own {name} hook ({chained}) is not executable, so it does not "
                                           "run (git-neo runs it only when git would)",
                                    hint=f"`chmod +x {chained}` if it should run"))
    return findings


def reinstall_hooks(finding: Finding, ctx: Context | None, held) -> bool:
    """The "reinstall-hooks" repair: `git neo install` again (idempotent)."""
    if ctx is None:
        return False
    from neo_git.githooks.install import install

    report = install(ctx.repo)
    return not report.skipped
