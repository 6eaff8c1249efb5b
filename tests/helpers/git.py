"""Running the real git in a test repository, and committing files there."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(cwd: Path | str, *args: str, check: bool = True, env: dict | None = None) -> str:
    """Run the real git command in *cwd*; return stdout."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60,
        stdin=subprocess.DEVNULL, env=full_env,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def stage_files(repo: Path, files: dict[str, str | bytes | None]) -> None:
    """Write (or delete, for None) files in *repo* and `git add` them, without committing."""
    for name, content in files.items():
        path = repo / name
        if content is None:
            git(repo, "rm", "-q", "--", name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        git(repo, "add", "--", name)


def commit_files(repo: Path, files: dict[str, str | bytes | None], message: str = "change",
                 env: dict | None = None) -> str:
    """Write (or delete, for None) files in *repo*, commit them (with *env*: e.g. fixed dates),
    return the commit id."""
    stage_files(repo, files)
    git(repo, "commit", "-q", "--allow-empty", "-m", message, env=env)
    return git(repo, "rev-parse", "HEAD").strip()
