"""Which commits on a facts ref this clone wrote itself: the only commits judged by the
e-mail they claim (every other commit needs a verdict: `store/received.py`).

Every git-neo write moves the ref from its tip to a new commit whose first parent is that
tip (compare-and-swap), and git or libgit2 appends that move to the ref's reflog
(`.git/logs/refs/neo/facts`, created at init). A commit that reached the ref any other way
is not a local write: `git neo sync`'s fast-forward ("neo: fast-forward to …"), a plain
`git fetch origin refs/neo/facts:refs/neo/facts` ("fetch …", or no reflog line at all when
the reflog is absent), a mirror clone (a bare repository keeps no reflog), the doctor's
restore of a lost tip. Such a commit without a verdict counts as unverified: trust fails
closed when its record is lost or the ref was moved by plain git.

The reflog expires (`gc.reflogExpire`, 90 days by default), so what it showed is kept in
`.git/neo/trust/written.json` (local, lock + atomic write). Losing both makes this clone's
own old facts claims until a person vouches for them again; it never promotes anyone else's.
"""
from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import pygit2

WRITTEN = Path("trust") / "written.json"
# Reflog messages of moves that bring someone else's commits (git's own words, and git-neo's).
NOT_WRITTEN_HERE = ("fetch", "pull", "clone", "push", "update by push", "neo: fast-forward", "neo: doctor")
_LINE = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) [^\t]*\t?(.*)$")
# (reflog path) -> (inode, bytes read, {commit: old tip}) ; (written.json path) -> (stamp, table)
_REFLOG: dict[str, tuple[int, int, dict[str, str]]] = {}
_RECORD: dict[str, tuple[tuple[int, int], Mapping[str, dict]]] = {}
_NONE: Mapping[str, dict] = MappingProxyType({})
_ANSWER: dict[str, tuple[Mapping[str, dict], dict[str, str]]] = {}   # common dir -> (record, moves) seen


def record_path(common_dir: Path) -> Path:
    """Where one repository's list of commits written here is kept."""
    return Path(common_dir) / "neo" / WRITTEN


def written_here(repo: pygit2.Repository, common_dir: Path, ref: str = "refs/neo/facts") -> Mapping[str, dict]:
    """{commit id: {"parent": the tip it replaced}} of the commits this clone wrote on *ref*:
    the record, plus what the reflog shows since (recorded when it adds anything). The same
    object while nothing changed (trust memoizes on it)."""
    record = _read_record(record_path(common_dir))
    moves = _reflog_moves(Path(common_dir) / "logs" / ref)
    key = str(common_dir)
    memo = _ANSWER.get(key)
    if memo is not None and memo[0] is record and memo[1] is moves:
        return record   # nothing new in the record or the reflog since the last look (per recall)
    new = {commit: {"parent": old} for commit, old in moves.items()
           if commit not in record and _is_own_move(repo, commit, old)}
    if not new:
        _ANSWER[key] = (record, moves)
        return record
    try:
        from neo_git.fileio import add_to_table

        add_to_table(record_path(common_dir), "commits", new, keep_first=True)
    except Exception:   # noqa: BLE001 - a read-only .git/neo: answer from the reflog alone
        pass
    merged = {**record, **new}
    _RECORD[str(record_path(common_dir))] = (_stamp(record_path(common_dir)), merged)
    return merged


def forget(common_dir: Path) -> None:
    """Forget what this process read (tests that rewrite the files within one mtime tick)."""
    _REFLOG.pop(str(Path(common_dir) / "logs" / "refs/neo/facts"), None)
    _RECORD.pop(str(record_path(common_dir)), None)
    _ANSWER.pop(str(common_dir), None)


def _is_own_move(repo: pygit2.Repository, commit: str, old: str) -> bool:
    """A local write: the new commit's first parent is the tip it replaced (a root replaces nothing)."""
    try:
        obj = repo.get(commit)
    except (ValueError, pygit2.GitError):
        return False
    if not isinstance(obj, pygit2.Commit):
        return False
    parents = obj.parent_ids
    if not parents:
        return set(old) == {"0"}
    return str(parents[0]) == old


def _reflog_moves(path: Path) -> dict[str, str]:
    """{new tip: old tip} of the reflog's moves that may be local writes (read incrementally:
    the reflog only grows, until it is expired or rewritten)."""
    key = str(path)
    try:
        stat = path.stat()
    except OSError:
        _REFLOG.pop(key, None)
        return {}
    memo = _REFLOG.get(key)
    start, moves = (memo[1], memo[2]) if memo is not None and memo[0] == stat.st_ino and memo[1] <= stat.st_size \
        else (0, {})
    if memo is not None and start == stat.st_size:
        return moves
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read()
    except OSError:
        return moves
    end = data.rfind(b"\n") + 1   # a line being appended right now is read next time
    moves = dict(moves)
    for raw in data[:end].decode("utf-8", "replace").splitlines():
        match = _LINE.match(raw)
        if match is None:
            continue
        old, new, message = match.groups()
        if set(new) == {"0"} or message.lower().startswith(NOT_WRITTEN_HERE):
            continue
        moves.setdefault(new, old)
    _REFLOG[key] = (stat.st_ino, start + end, moves)
    return moves


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
        return (stat.st_mtime_ns, stat.st_size)
    except OSError:
        return (0, -1)


def _read_record(path: Path) -> Mapping[str, dict]:
    stamp = _stamp(path)
    if stamp[1] < 0:
        return _NONE
    memo = _RECORD.get(str(path))
    if memo is not None and memo[0] == stamp:
        return memo[1]
    from neo_git.fileio import read_table

    table = read_table(path, "commits")   # unreadable: nothing counts as written here (closed)
    _RECORD[str(path)] = (stamp, table)
    return table
