"""The 3-way merge of two facts trees, in memory (the work tree and index are never touched).

Only what the other side changed since the merge base is looked at: 2-hex folders
whose tree id theirs left as in the base (or made equal to ours) are skipped
whole, so merging 100 new facts into 5,000 reads about 100 blobs. Per fact:

| base | ours | theirs | result |
|---|---|---|---|
| - | - | added | theirs (validated) |
| any | unchanged | changed | theirs (validated) |
| x | changed | changed | `merge_fact(base, ours, theirs)` |
| x | removed | changed | theirs: an edit beats a removal, nothing is lost |
| x | unchanged | removed | removed |
| x | changed | removed | ours |

Then the chains are repaired (`repair_chains`): a fact whose predecessor ended up
superseded by another fact (both sides replaced the same fact) is flagged for
review, and a supersession cycle (only forged input can make one) is broken at
its smallest id.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pygit2

from neo_git.errors import InvalidFact
from neo_git.facts import Fact, FactScope
from neo_git.store.base import Change
from neo_git.sync.fieldmerge import merge_fact
from neo_git.sync.trees import (
    Entry,
    fact_id_of,
    facts_subtrees,
    foreign_entries,
    kind_of,
    read_fact,
    read_fact_or_none,
    subtree_entries,
)

MAX_DETAIL_LINES = 200


@dataclass
class MergePlan:
    """What merging theirs into ours does to ours, fact by fact."""

    puts: dict[str, Fact] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)        # new facts from theirs
    updated: list[str] = field(default_factory=list)      # theirs' edit taken whole
    merged: list[str] = field(default_factory=list)       # changed on both sides: field merge
    repaired: list[str] = field(default_factory=list)     # chain repairs
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (path, reason)
    held: list[dict] = field(default_factory=list)        # untrusted changes to trusted facts (sync/gate.py)
    ignored: list[str] = field(default_factory=list)      # untrusted counter-only changes, dropped

    @property
    def clean(self) -> bool:
        """True when theirs can be taken as it is (a fast-forward): nothing skipped, held or repaired."""
        return not (self.skipped or self.repaired or self.held or self.ignored)

    @property
    def is_empty(self) -> bool:
        """True when ours already holds everything theirs has."""
        return not (self.puts or self.removed)

    def summary(self, label: str) -> str:
        """One line for the commit message and the terminal."""
        parts = [f"{len(self.added)} added", f"{len(self.updated)} updated", f"{len(self.merged)} merged"]
        if self.removed:
            parts.append(f"{len(self.removed)} removed")
        if self.skipped:
            parts.append(f"{len(self.skipped)} invalid skipped")
        if self.held:
            parts.append(f"{len(self.held)} held for review")
        return f"from {label}: " + ", ".join(parts)

    def change(self, label: str, theirs: pygit2.Oid, facts: Mapping[str, Fact]) -> Change:
        """The merge commit: every put and removal, its second parent, and an audit trail."""
        details = [f"{self.summary(label)} (their tip {theirs})"]
        lines = []
        for title, ids in (("added from", self.added), ("updated from", self.updated),
                           ("merged field by field with", self.merged)):
            lines += [f"{title} {label}: {i} {self.puts[i].subject[:80]}" for i in ids]
        lines += [f"removed (as on {label}): {i}" for i in self.removed]
        lines += [f"chain repaired: {i} {self.puts[i].subject[:80]}" for i in self.repaired]
        lines += [f"skipped invalid from {label}: {path}: {reason}" for path, reason in self.skipped]
        lines += [f"held for review (unverified change to a trusted fact): {h['id']}" for h in self.held]
        lines += [f"ignored unverified counter update: {i}" for i in self.ignored]
        if len(lines) > MAX_DETAIL_LINES:
            lines = lines[:MAX_DETAIL_LINES] + [f"... and {len(lines) - MAX_DETAIL_LINES} more lines"]
        return Change(facts=tuple(self.puts[i] for i in sorted(self.puts)),
                      message=f"merge {label} into refs/neo/facts: " + self.summary(label).split(": ", 1)[1],
                      details=tuple(details + lines), removed=tuple(sorted(self.removed)),
                      parents=(str(theirs),))


def plan_merge(repo: pygit2.Repository, base: pygit2.Oid | None, ours: pygit2.Oid | None,
               theirs: pygit2.Oid, ours_facts: Mapping[str, Fact], describe=None,
               scope: FactScope = FactScope.PROJECT, gate=None) -> MergePlan:
    """Merge *theirs* into *ours* (commits; *base* their merge base or None).

    *ours_facts* are the valid facts at *ours* (the store's view; only the ids the diff names
    are looked up, so a lazy `TreeFacts` serves); *describe(path)* names the commit that brought
    an invalid blob, for the warning; *scope* is the one scope the ref holds; *gate* (a
    `sync.gate.TrustGate`) takes out what an untrusted commit may not change, before chains are
    repaired."""
    plan = MergePlan()
    for path, reason in foreign_entries(repo, theirs, ours):
        plan.skipped.append((path, _where(reason, describe, path)))
    b_sub, o_sub, t_sub = (facts_subtrees(repo, c) for c in (base, ours, theirs))
    b_sub, o_sub = b_sub or {}, o_sub or {}
    if t_sub is None:   # theirs' `facts` is a link or submodule (reported above): take nothing from it
        t_sub = dict(o_sub)
    for prefix in sorted(b_sub.keys() | o_sub.keys() | t_sub.keys()):
        b_entry, o_entry, t_entry = b_sub.get(prefix), o_sub.get(prefix), t_sub.get(prefix)
        if t_entry == o_entry or t_entry == b_entry:
            continue  # theirs changed nothing here, or holds exactly what we hold
        if t_entry is not None and not t_entry.is_tree:
            # A file, link or submodule where a folder belongs: ignore theirs here (reading it
            # as empty would remove every fact of the folder).
            plan.skipped.append((f"facts/{prefix}", _where(f"{kind_of(t_entry.mode)} where a folder belongs",
                                                           describe, f"facts/{prefix}")))
            continue
        b_blobs, o_blobs, t_blobs = (subtree_entries(repo, e) for e in (b_entry, o_entry, t_entry))
        for name in sorted(b_blobs.keys() | o_blobs.keys() | t_blobs.keys()):
            _merge_entry(repo, plan, prefix, name, b_blobs.get(name), o_blobs.get(name), t_blobs.get(name),
                         ours_facts, describe, scope)
    if gate is not None:
        result = gate.apply(plan, ours_facts)
        plan.held, plan.ignored = result.held, result.ignored + result.kept
    plan.repaired = repair_chains(plan, ours_facts)
    # A teammate's tree may name an entry with bytes that are not UTF-8 (pygit2 hands them over
    # as surrogate escapes, which no commit message or terminal can encode): shown as \xe9.
    plan.skipped = [(_printable(path), _printable(why)) for path, why in plan.skipped]
    return plan


def _printable(text: str) -> str:
    """*text* with undecodable bytes (surrogate escapes) written as `\\xNN`."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _where(reason: str, describe, path: str) -> str:
    commit = describe(path) if describe is not None else None
    return f"{reason} (commit {commit})" if commit else reason


def _merge_entry(repo, plan: MergePlan, prefix: str, name: str, b: Entry | None, o: Entry | None,
                 t: Entry | None, ours_facts: Mapping[str, Fact], describe, scope: FactScope) -> None:
    if t == o or t == b:
        return
    path = f"facts/{prefix}/{name}"
    fact_id = fact_id_of(prefix, name)
    if fact_id is None:
        plan.skipped.append((path, _where("not a fact path (facts/<2 hex>/<16 hex>.json)", describe, path)))
        return
    if t is None:  # theirs removed it
        if o is not None and o == b:
            plan.removed.append(fact_id)
        return
    try:
        incoming = read_fact(repo, prefix, name, t, scope)
    except InvalidFact as exc:
        plan.skipped.append((path, _where(exc.message.removeprefix(path + ": "), describe, path)))
        return
    mine = ours_facts.get(fact_id) if o is not None else None
    if mine is None and o is not None:
        mine = read_fact_or_none(repo, prefix, name, o, scope)
    if mine is None or o == b:
        plan.puts[fact_id] = incoming
        (plan.added if b is None and o is None else plan.updated).append(fact_id)
        return
    result = merge_fact(read_fact_or_none(repo, prefix, name, b, scope), mine, incoming)
    if result != mine:
        plan.puts[fact_id] = result
        plan.merged.append(fact_id)


def repair_chains(plan: MergePlan, ours_facts: Mapping[str, Fact]) -> list[str]:
    """Flag facts whose predecessor now points at another successor; break supersession cycles.
    Works on the merged state (ours + the plan) around the facts the plan changes (a new cycle
    or competing successor must involve one of them); returns the ids it changed."""
    removed = set(plan.removed)

    def current(fact_id: str | None) -> Fact | None:
        if fact_id is None or fact_id in removed:
            return None
        return plan.puts.get(fact_id) or ours_facts.get(fact_id)

    repaired: list[str] = []
    touched = sorted(plan.puts)
    # Cycles: follow superseded_by from each changed fact; coming back to a fact on the path is a cycle.
    for start in touched:
        path: list[str] = []
        node: str | None = start
        while node is not None and node not in path and (at := current(node)) is not None:
            path.append(node)
            node = at.superseded_by
        if node is not None and node in path:
            keep = min(path[path.index(node):])
            fact = current(keep)
            assert fact is not None   # on the path: present
            if not fact.is_valid or fact.superseded_by is not None:
                plan.puts[keep] = fact.evolve(is_valid=True, superseded_by=None, needs_review=True,
                                              metadata={"invalidation": None})
                repaired.append(keep)
    # Competing successors: both sides superseded the same fact with different new facts.
    changed = set(plan.puts)
    candidates = set(changed)
    # A fact of ours that the plan leaves alone is flagged only when its predecessor (a changed
    # fact) now names another successor, so the walk over all of ours (every stored fact) is
    # needed only when some changed fact has a successor at all: most syncs bring none.
    if any((now := current(fact_id)) is not None and now.superseded_by is not None for fact_id in changed):
        candidates.update(f.id for f in ours_facts.values() if f.supersedes in changed)
    for fact_id in sorted(candidates):
        fact = current(fact_id)
        predecessor = current(fact.supersedes) if fact is not None else None
        if (fact is not None and predecessor is not None and fact.is_valid and not fact.needs_review
                and predecessor.superseded_by not in (None, fact_id)):
            plan.puts[fact_id] = fact.evolve(needs_review=True)
            repaired.append(fact_id)
    return sorted(set(repaired))
