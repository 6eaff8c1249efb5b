"""Exit 3 for our own bugs: save the traceback where the user can send it to us."""
from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path


def crash_dir() -> Path:
    """`.git/neo/` of the current repository, else `$NEO_HOME/logs`."""
    try:
        from neo_git.identity import find_repository_paths

        return find_repository_paths(os.getcwd()).neo_dir
    except Exception:  # noqa: BLE001 - we are already handling a crash
        from neo_git.identity import neo_home

        try:
            return neo_home() / "logs"
        except Exception:  # noqa: BLE001 - a broken NEO_HOME: the traceback goes to stderr
            return Path(os.devnull) / "unwritable"


def _redacted(text: str) -> str:
    """*text* with secrets replaced: argv and exception messages quote what the user typed."""
    try:
        from neo_git.redact import redact

        return redact(text)
    except Exception:  # noqa: BLE001 - a crash report must still be written
        return text


def _command(argv: list[str]) -> str:
    """`git neo <command>` from *argv*, without any argument or option value."""
    words = [a for a in argv if not a.startswith("-")][:1]
    name = words[0] if words and words[0].replace("-", "").isalnum() and len(words[0]) <= 30 else "?"
    return f"git neo {name}"


def report_bug(argv: list[str]) -> int:
    """Print a short notice, write the traceback to a log file, return 3."""
    text = _redacted("".join(traceback.format_exc()))
    path = None
    try:
        directory = crash_dir()
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
        # The command's name only: its arguments are what the user typed (subjects, bodies, keys).
        path.write_text(f"command: {_command(argv)}\n\n{text}", encoding="utf-8")
    except OSError:
        pass
    last = text.strip().splitlines()[-1] if text.strip() else "unknown error"
    print(f"error: git-neo hit a bug: {last}", file=sys.stderr)
    if path:
        print(f"hint: the traceback is in {path}; please report it", file=sys.stderr)
    else:
        sys.stderr.write(text)
    return 3
