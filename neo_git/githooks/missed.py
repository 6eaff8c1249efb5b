"""Hook runs that happened while `git-neo` was not on the hooks' PATH.

A commit made without the virtualenv active (another terminal, an IDE, a GUI client) runs
the shims with a PATH where `git-neo` is missing. The shims cannot do the work then, but
they can remember it from shell, cheaply: one tab-separated line appended to
`.git/neo/missed.tsv`

    post-commit   <HEAD id>                      <PATH>
    post-merge    <squash flag> <HEAD id> <ORIG_HEAD id>  <PATH>
    post-rewrite  <amend|rebase> <saved map file>   <PATH>

(always five fields: hook, three arguments, and the PATH the hook saw). The next worker
(`take_missed`, before it queues its own work) turns the lines into queue items, oldest
first; `git neo doctor` reports lines nobody has taken yet and which PATH lacked git-neo.

The file is taken by renaming it first, so a shim appending at the same moment writes
either to the old name (read now) or to a new file (read next time); only an append that
opened the old name before the rename and wrote after the read is lost, a window of
microseconds between two hook runs of which one has git-neo and one has not.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MISSED_FILE = "missed.tsv"
MAX_LINES = 1000          # a runaway file (a loop of commits) is cut to its newest lines
MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class MissedRun:
    """One hook run recorded by a shim that could not find git-neo."""

    hook: str
    args: tuple[str, str, str]
    path: str                 # the PATH the hook saw

    def queue_item(self, neo_dir: Path) -> dict | None:
        """The work item the hook would have queued (None when there is nothing to do)."""
        a, b, c = self.args
        if self.hook == "post-commit" and _is_hex(a):
            return {"op": "commits", "trigger": "post-commit", "commits": [a], "catch_up": True}
        if self.hook == "post-merge" and a != "1" and _is_hex(b):
            return {"op": "range", "trigger": "post-merge", "head": b, "orig": c if _is_hex(c) else None}
        map_file = self.map_file(neo_dir)
        if map_file is not None:
            from neo_git.outcomes.rewrites import parse_rewrite_map

            try:
                text = map_file.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
            pairs = parse_rewrite_map(text)
            return {"op": "rewrite", "kind": a or "rebase", "pairs": [list(p) for p in pairs]} if pairs else None
        return None

    def map_file(self, neo_dir: Path) -> Path | None:
        """A rewrite's saved "old new" map: only a `rewrite-*.map` file the shim put in *neo_dir*."""
        if self.hook != "post-rewrite" or not self.args[1]:
            return None
        path = Path(self.args[1])
        if path.name.startswith("rewrite-") and path.suffix == ".map" and \
                os.path.realpath(path.parent) == os.path.realpath(neo_dir):
            return path
        return None


def _is_hex(text: str) -> bool:
    return len(text) in (40, 64) and all(ch in "0123456789abcdef" for ch in text)


def parse_missed(text: str) -> list[MissedRun]:
    """The runs in *text* (lines that are not five tab-separated fields are skipped)."""
    runs = []
    for line in text.splitlines()[-MAX_LINES:]:
        fields = line.split("\t")
        if len(fields) != 5 or fields[0] not in ("post-commit", "post-merge", "post-rewrite"):
            continue
        runs.append(MissedRun(fields[0], (fields[1], fields[2], fields[3]), fields[4]))
    return runs


def pending_missed(neo_dir: Path) -> list[MissedRun]:
    """The recorded runs no worker has taken yet (read only)."""
    try:
        with open(neo_dir / MISSED_FILE, "rb") as handle:
            data = handle.read(MAX_BYTES)
    except OSError:
        return []
    return parse_missed(data.decode("utf-8", "replace"))


def take_missed(neo_dir: Path) -> list[MissedRun]:
    """Take every recorded run (the file is renamed away first, then read and deleted); the
    map files of rewrites stay until their queue item is built (`queue_item` reads them)."""
    source = neo_dir / MISSED_FILE
    taken = neo_dir / f"{MISSED_FILE}.{os.getpid()}.taking"
    try:
        os.replace(source, taken)
    except OSError:
        return []
    try:
        with open(taken, "rb") as handle:
            text = handle.read(MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return []
    finally:
        try:
            taken.unlink()
        except OSError:
            pass
    return parse_missed(text)


def catch_up_items(neo_dir: Path, runs: list[MissedRun]) -> list[dict]:
    """Queue items for *runs*, oldest first; a rewrite's saved map file is deleted once read."""
    items = []
    for run in runs:
        item = run.queue_item(neo_dir)
        map_file = run.map_file(neo_dir)
        if map_file is not None:
            try:
                map_file.unlink()
            except OSError:
                pass
        if item is not None:
            items.append(item)
    return items
