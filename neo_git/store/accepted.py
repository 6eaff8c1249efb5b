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

from neo_git.store.file_memo import FileMemo

RECORD = Path("trust") / "accepted.json"
_MEMO: FileMemo[Mapping[str, dict]] = FileMemo(MappingProxyType({}))


def record_path(neo_dir: Path) -> Path:
    """Where one repository's decisions live."""
    return Path(neo_dir) / RECORD


def decisions(neo_dir: Path) -> Mapping[str, dict]:
    """{fact id: {"commit", "decision": "accepted"|"rejected", "by", "at"}} (the same object while
    the file is unchanged: trust memoizes on it)."""
    from neo_git.fileio import read_table

    return _MEMO.get(record_path(neo_dir), lambda path: read_table(path, "facts"))


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
    _MEMO.forget(path)
