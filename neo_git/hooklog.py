"""`.git/neo/hook.log`: where hooks (git's and agents') write what went wrong, since
they must never print errors into a commit or an agent session."""
from __future__ import annotations

import os
import time
from pathlib import Path

MAX_BYTES = 1024 * 1024  # rotated to hook.log.1 past this size


def rotate_hook_log(path: Path, limit: int = MAX_BYTES) -> None:
    """Keep hook.log small: past *limit* it becomes hook.log.1 (the previous .1 is dropped).
    A process still appending through its open descriptor simply finishes in the old file."""
    try:
        if path.stat().st_size > limit:
            os.replace(path, path.with_name(path.name + ".1"))
    except OSError:
        pass


def append_hook_log(neo_dir: Path | None, line: str) -> None:
    """Append one timestamped line; never raises (a hook's log must not break the hook)."""
    try:
        if neo_dir is None:
            from neo_git.identity import neo_home

            neo_dir = neo_home() / "logs"
        neo_dir.mkdir(parents=True, exist_ok=True)
        path = neo_dir / "hook.log"
        rotate_hook_log(path)
        from neo_git.redact import redact

        text = redact(" ".join(line.split("\n")))[:2000]
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} [{os.getpid()}] {text}\n")
    except Exception:  # noqa: BLE001 - logging is best effort by design
        pass
