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

The reflog expires (`gc.reflogExpire`, 90 days by default), so a write older than a month is
kept in `.git/neo/trust/written.json` (local, lock + atomic write; newer ones are read from the
reflog, which saves rewriting the record after every write). Losing both makes this clone's
own old facts claims until a person vouches for them again; it never promotes anyone else's.
"""
from __future__ import annotations

import re
import time
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import pygit2

WRITTEN = Path("trust") / "written.json"
# Reflog messages of moves that bring someone else's commits (git's own words, and git-neo's).
NOT_WRITTEN_HERE = ("fetch", "pull", "clone", "push", "update by push", "neo: fast-forward", "neo: doctor")
_LINE = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) [^\t]*?(\d+) [+-]\d{4}\t?(.*)$")
# (reflog path) -> (inode, bytes read, {commit: (old tip, when)}) ; (written.json path) -> (stamp, table)
_REFLOG: dict[str, tuple[int, int, dict[str, tuple[str, int]]]] = {}
_RECORD: dict[str, tuple[tuple[int, int], Mapping[str, dict]]] = {}
_NONE: Mapping[str, dict] = MappingProxyType({})
_ANSWER: dict[str, tuple] = {}   # common dir + ref -> (record, moves, the answer built from them)


def record_path(common_dir: Path) -> Path:
    """Where one repository's list of commits written here is kept."""
    return Path(common_dir) / "neo" / WRITTEN


def written_here(repo: pygit2.Repository, common_dir: Path, ref: str = "refs/neo/facts") -> Mapping[str, dict]:
    """{commit id: {"parent": the tip it replaced}} of the commits this clone wrote on *ref*:
    the record, plus what the reflog shows. The same object while neither changed (trust
    memoizes on it); each reflog line is checked once per process."""
    path = record_path(common_dir)
    record = _read_record(path)
    moves = _reflog_moves(Path(common_dir) / "logs" / ref)
    key = f"{common_dir}\0{ref}"
    memo = _ANSWER.get(key)
    if memo is not None and memo[0] is record and memo[1] is moves:
        return memo[2]
    own: dict[str, dict] = {}
    for commit, (old, when) in moves.items():
        if commit in record:
            continue
        verdict = _OWN.get(commit)
        if verdict is None:
            verdict = _OWN[commit] = _is_own_move(repo, commit, old)
        if verdict:
            own[commit] = {"parent": old, "when": when}
    # Kept in the record once older than a month: the reflog keeps its lines 90 days (gc.reflogExpire),
    # and rewriting the record after every write would cost more than reading the reflog.
    aged = {c: {"parent": v["parent"]} for c, v in own.items() if v["when"] < time.time() - PERSIST_AFTER_SECONDS}
    if aged:
        _remember(path, aged)
    answer = {**record, **own} if own else record
    _ANSWER[key] = (record, moves, answer)
    return answer


PERSIST_AFTER_SECONDS = 30 * 86400
_OWN: dict[str, bool] = {}   # commit -> whether its reflog move was a local write (commits never change)


def _remember(path: Path, new: Mapping[str, dict]) -> None:
    """Add *new* to the record, waiting at most 50 ms for its lock: this runs on recall's path
    (an agent hook has 1.5 s in all); a busy or read-only record is written by a later read.
    Not fsynced: the reflog still holds what a power cut would lose."""
    import json

    from neo_git.fileio import atomic_write, locked, read_table

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked(path.with_suffix(".lock"), timeout=0.05):
            table = {**new, **read_table(path, "commits")}
            atomic_write(path, json.dumps({"format": 1, "commits": table}, sort_keys=True).encode("utf-8"),
                         durable=False)
    except Exception:   # noqa: BLE001 - LockTimeout, a read-only .git/neo: answer from the reflog alone
        pass


def forget(common_dir: Path) -> None:
    """Forget what this process read (tests that rewrite the files within one mtime tick)."""
    _REFLOG.pop(str(Path(common_dir) / "logs" / "refs/neo/facts"), None)
    _RECORD.pop(str(record_path(common_dir)), None)
    _ANSWER.clear()


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


def _reflog_moves(path: Path) -> dict[str, tuple[str, int]]:
    """{new tip: (old tip, when)} of the reflog's moves that may be local writes (read incrementally:
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
        old, new, when, message = match.groups()
        if set(new) == {"0"} or message.lower().startswith(NOT_WRITTEN_HERE):
            continue
        moves.setdefault(new, (old, int(when)))
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
