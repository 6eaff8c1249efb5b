"""`git neo` run from inside a real git hook answers about the repository the hook runs in.

git runs hooks with its own environment (GIT_DIR, in linked worktrees a per-worktree git
dir, during `git commit -a` a temporary GIT_INDEX_FILE). A post-commit hook in a linked
worktree runs `git neo list --json` and `git neo health --json` through the installed
`git-neo` executable; they must see this worktree's commit and session facts, and the
shared project facts, not the main worktree's.
"""
from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from tests.helpers.git import commit_files, git
from tests.helpers.store import run_cli

HOOK = """#!/bin/sh
out="$NEO_HOOK_OUT"
env | grep '^GIT_' > "$out/env.txt"
git neo list --json > "$out/list.json" 2> "$out/list.err"; echo $? > "$out/list.rc"
git neo health --json > "$out/health.json" 2> "$out/health.err"; echo $? > "$out/health.rc"
exit 0
"""


def _add(cwd: Path, *args: str) -> str:
    proc = run_cli(["add", "--json", *args], cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["id"]


def test_hook_in_a_linked_worktree_during_commit_a_sees_this_worktree(repo_with_commit, tmp_path):
    main = repo_with_commit
    commit_files(main, {"app.py": "print('main')\n"}, "main app")
    assert run_cli(["init"], cwd=main).returncode == 0
    shared = _add(main, "--kind", "decision", "HTTP client", "All outbound HTTP goes through httpx.")
    main_session = _add(main, "--scope", "session", "Main worktree note", "Only the main worktree knows this.")

    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "feature", str(linked))
    commit_files(linked, {"pkg/__init__.py": "", "pkg/a.py": "from pkg import b\n",
                          "pkg/b.py": "X = 1\n"}, "feature package")
    linked_session = _add(linked, "--scope", "session", "Feature worktree note", "Only the feature worktree knows this.")

    out = tmp_path / "out"
    out.mkdir()
    hook = Path(git(main, "rev-parse", "--git-common-dir").strip())
    hook = (main / hook if not hook.is_absolute() else hook) / "hooks" / "post-commit"
    hook.write_text(HOOK, encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    # `commit -a` from a subfolder of the linked worktree: the edit closes an import cycle.
    (linked / "pkg" / "b.py").write_text("from pkg import a\n", encoding="utf-8")
    bin_dir = str(Path(sys.executable).parent)  # the venv's git-neo
    git(linked / "pkg", "commit", "-q", "-a", "-m", "close the cycle",
        env={"NEO_HOOK_OUT": str(out), "PATH": bin_dir + os.pathsep + os.environ["PATH"]})
    head = git(linked, "rev-parse", "HEAD").strip()

    env = (out / "env.txt").read_text(encoding="utf-8")
    # git's hook environment was in effect: GIT_DIR names the linked worktree's git dir
    assert f"GIT_DIR={main / '.git' / 'worktrees' / 'linked'}" in env.splitlines(), env
    for name in ("list", "health"):
        assert (out / f"{name}.rc").read_text().strip() == "0", (out / f"{name}.err").read_text()

    listed = {fact["id"] for fact in json.loads((out / "list.json").read_text(encoding="utf-8"))}
    assert shared in listed and linked_session in listed  # the shared ref, this worktree's session
    assert main_session not in listed

    health = json.loads((out / "health.json").read_text(encoding="utf-8"))
    assert health["rev"].startswith(head[:12]) or head.startswith(health["rev"])
    assert health["cycles"] == 1 and health["modules_in_cycles"] == ["pkg/a.py", "pkg/b.py"]  # just made
    assert git(main, "rev-parse", "HEAD").strip() != head  # the main worktree never saw it
