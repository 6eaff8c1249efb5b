"""What a fact blob on `refs/neo/facts` must be before anyone believes it.

A teammate's push (or a hand-built tree) can put anything on the ref. A blob is
a fact only if it parses, passes `Fact.from_dict`, sits at the one path its id
names (`facts/<id[:2]>/<id>.json`, so a second copy elsewhere cannot override
it) and has the ref's one scope: project on a repository's ref (other scopes live in
`~/.neo` and `.git/neo`), org on a connected org memory's. The ref reader and sync call `fact_from_blob`; anything else
is skipped with a warning naming the path, and left on the ref untouched.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from neo_git.errors import InvalidFact
from neo_git.facts import Fact, FactScope, fact_from_json

_PREFIX = re.compile(r"^[0-9a-f]{2}$")
_NAME = re.compile(r"^([0-9a-f]{16})\.json$")


def fact_id_of(prefix: str, name: str) -> str | None:
    """The fact id a `facts/<prefix>/<name>` path stands for, or None if the path is not a fact's."""
    match = _NAME.match(name)
    if not _PREFIX.match(prefix) or match is None or match.group(1)[:2] != prefix:
        return None
    return match.group(1)


def fact_path(fact_id: str) -> str:
    """Path of a fact's blob inside the facts tree."""
    return f"facts/{fact_id[:2]}/{fact_id}.json"


def fact_from_blob(data: bytes, path: str, ref: str = "refs/neo/facts",
                   scope: FactScope = FactScope.PROJECT) -> Fact:
    """The fact in the blob at *path* on *ref*, validated; InvalidFact naming `<ref>:<path>` otherwise.
    *scope* is the one scope the ref holds: project facts on a repository's ref, org facts on the
    org memory's (`neo_git/org/`)."""
    origin = f"{ref}:{path}"
    fact = fact_from_json(data, origin)
    if fact_path(fact.id) != path:
        raise InvalidFact(f"{origin}: holds fact {fact.id}, which belongs at {fact_path(fact.id)}")
    if fact.scope is not scope:
        raise InvalidFact(f"{origin}: a {fact.scope.value}-scoped fact on a shared ref "
                          f"(only {scope.value} facts belong there)")
    return fact


POINTERS = ("superseded_by", "supersedes", "depends_on")


def pointer_problems(facts: Mapping[str, Fact], ref: str = "refs/neo/facts") -> list[str]:
    """Warnings for pointers that lead nowhere: a superseded_by/supersedes/depends_on id that is
    not on the ref. The fact is kept (its target may have been purged); readers ignore the pointer."""
    problems = []
    for fact in facts.values():
        if fact.superseded_by is None and fact.supersedes is None and not fact.depends_on:
            continue  # most facts point nowhere: one test, not three
        for name in POINTERS:
            value = getattr(fact, name)
            for target in (value if isinstance(value, tuple) else (value,)):
                if target is not None and target not in facts:
                    problems.append(f"{ref}:{fact_path(fact.id)}: {name} points at {target}, "
                                    "which is not on the ref; ignored")
    return problems


class LookupMapping(Mapping[str, Fact]):
    """A read-only mapping of facts whose subclasses define `get` (a lookup that may read the
    object database lazily): `[]` and `in` are that lookup."""

    def get(self, fact_id, default=None):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __getitem__(self, fact_id: str) -> Fact:
        fact = self.get(fact_id)
        if fact is None:
            raise KeyError(fact_id)
        return fact

    def __contains__(self, fact_id: object) -> bool:
        return self.get(fact_id) is not None
