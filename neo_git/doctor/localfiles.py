"""The doctor's check of the local facts files, and the repair that starts one anew.

The global and org scopes (`$NEO_HOME/facts/facts_global.json`, `facts_org_*.json`) and the
session scope (`.git/neo/session.json`) are files of this person. One replaced by a folder, a
symbolic link loop or another non-regular file cannot be read: every command says so
(`FileStore`, a `fatal:` pointing here) and nothing writes to it. `--fix` moves the thing aside
(`<name>.corrupt-<time>-<pid>`, kept for inspection: a folder may hold the old file) and writes
an empty facts file in its place, under the file's lock.
"""
from __future__ import annotations

from pathlib import Path

from neo_git.doctor.findings import Context, Finding
from neo_git.doctor.leftovers import glob_paths

CHECK = "local-file"
ACTION = "rebuild-file"


def local_facts_files(ctx: Context) -> list[Path]:
    """The session file of this worktree and every global and org facts file under NEO_HOME."""
    facts = ctx.home / "facts"
    return [ctx.paths.session_file, facts / "facts_global.json",
            *sorted(p for p in glob_paths(facts, "facts_org_*.json"))]


def check_local_files(ctx: Context) -> list[Finding]:
    """Local facts files that are folders, link loops or not regular files."""
    from neo_git.store.filestore import file_problem

    findings = []
    for path in local_facts_files(ctx):
        problem = file_problem(path)
        if problem is not None:
            findings.append(Finding(CHECK, f"{path} {problem}: its scope cannot be read or written",
                                    fix=f"move {path} aside and start it anew (empty)", path=str(path),
                                    action=ACTION))
    return findings


def rebuild_file(finding: Finding, ctx: Context | None, held: set[str] | None) -> bool:
    """The "rebuild-file" repair: move the unreadable thing aside, write an empty facts file."""
    from neo_git.fileio import locked, move_aside
    from neo_git.store.filestore import FileStore, file_problem

    if finding.path is None:
        return False
    path = Path(finding.path)
    with locked(path.with_name(path.name + ".lock")):
        if file_problem(path) is None:
            return False   # repaired meanwhile
        move_aside(path)
        FileStore(path)._write({}, [])
    return True
