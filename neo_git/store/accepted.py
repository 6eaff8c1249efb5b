"""A person's decisions about teammates' unverified constraints: the local record trust reads.

A constraint from a commit nobody trusted (an unsigned push, a signature by an unknown key)
arrives as team knowledge but is not a rule: it applies to this clone's agents only once a
person accepts it (`git neo review accept <id>`, the `unverified_constraint` items). The
decision is recorded per fact *and* per the commit that gave it its text
(`.git/neo/trust/accepted.json`, local, lock + atomic write): a later rewrite of the text by
anyone untrusted makes it a claim again. Losing the record makes the accepted constraints
claims again (closed); nothing in it can promote a fact whose text changed since.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

RECORD = Path("trust") / "accepted.json"
_MEMO: dict[str, tuple[tuple[int, int], Mapping[str, dict]]] = {}
_NONE: Mapping[str, dict] = MappingProxyType({})


def record_path(neo_dir: Path) -> Path:
    """Where one repository's decisions live."""
    return Path(neo_dir) / RECORD


def decisions(neo_dir: Path) -> Mapping[str, dict]:
    """{fact id: {"commit", "decision": "accepted"|"rejected", "by", "at"}} (the same object while
    the file is unchanged: trust memoizes on it)."""
    path = record_path(neo_dir)
    try:
        stat = path.stat()
    except OSError:
        return _NONE
    stamp = (stat.st_mtime_ns, stat.st_size)
    memo = _MEMO.get(str(path))
    if memo is not None and memo[0] == stamp:
        return memo[1]
    from neo_git.fileio import read_table

    table = read_table(path, "facts")
    _MEMO[str(path)] = (stamp, table)
    return table


def is_accepted(table: Mapping[str, dict], fact_id: str, commit: str) -> bool:
    """Whether a person accepted *fact_id* as the text *commit* gave it."""
    row = table.get(fact_id)
    return row is not None and row.get("decision") == "accepted" and row.get("commit") == commit


def decide(neo_dir: Path, fact_id: str, commit: str, decision: str, by: str) -> None:
    """Record a person's *decision* ("accepted" or "rejected") about *fact_id* as of *commit*."""
    from neo_git.facts import now_iso
    from neo_git.fileio import add_to_table

    path = record_path(neo_dir)
    add_to_table(path, "facts", {fact_id: {"commit": commit, "decision": decision, "by": by, "at": now_iso()}})
    _MEMO.pop(str(path), None)
