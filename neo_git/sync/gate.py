"""The trust gate of a sync: what an incoming change may do to the facts we already trust.

`plan_merge` says what theirs would change; this gate takes out, before anything is
written, every change that nobody trusted could have made:

- a change (edit, retraction, supersession, removal) to a fact we trust, made by a
  commit that is not trusted (`store/received.py`: a good signature by a trusted
  address, or a remote in `neo.trustUnsigned`), is *held*: our fact stays as it is and
  the proposal becomes an `incoming` review item (accept applies it as our own change,
  reject drops it). A change that only moves counters (access and success counts,
  confidence) is dropped without an item;
- a change to a claim (a fact whose author is not trusted) goes through when every commit
  that made it claims the same author (it stays a claim); someone else's change to it is held
  like a change to a trusted fact (issue 36: a change to someone else's fact needs a person's
  acceptance or a verified signature);
- a fact of ours that no commit of theirs changed, but their merge left out (claims over
  their cap), is *kept* as it is, with no review item;
- new facts never push ours out: claims arriving beyond the project cap are *clipped*
  (the oldest are kept) and reported; facts from trusted commits always arrive (the write
  policy evicts claims first when the scope is over its cap).

A path's change counts as trusted only when every commit of theirs that touched it is
trusted: a trusted teammate's later edit does not launder an unverified one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

import pygit2

from neo_git.errors import InvalidFact
from neo_git.facts import Fact, FactScope
from neo_git.store.ref_facts import fact_from_blob, fact_path

# Keys whose change alone is bookkeeping, not a claim about the code.
COUNTERS = frozenset({"access_count", "last_accessed", "success_count", "confidence"})


@dataclass
class GateResult:
    """What the gate took out of a merge plan."""

    held: list[dict] = field(default_factory=list)       # proposals for the `incoming` review source
    ignored: list[str] = field(default_factory=list)     # counter-only changes to trusted facts, dropped
    clipped: list[str] = field(default_factory=list)     # new facts over the cap, not taken
    kept: list[str] = field(default_factory=list)        # ours, left out by a merge of theirs: kept

    @property
    def is_empty(self) -> bool:
        """True when the gate changed nothing."""
        return not (self.held or self.ignored or self.clipped or self.kept)


@dataclass
class TrustGate:
    """Everything the gate needs, decided before the merge is planned.

    *claims*: our facts that are claims, with the author each claims (every other fact of ours is
    trusted); *commit_trusted(commit id)*:
    the verdict of one incoming commit; *cap*: the project scope's cap of valid facts."""

    repo: pygit2.Repository
    theirs: pygit2.Oid
    ours: pygit2.Oid | None
    claims: "Mapping[str, str] | frozenset[str]"   # our claims: {id: claimed author}
    commit_trusted: Callable[[str], bool]
    claimed: Callable[[str], str]
    cap: int | None
    remote: str = ""
    scope: FactScope = FactScope.PROJECT   # the one scope the ref holds (org: a connected org memory)

    def apply(self, plan, ours_facts: Mapping[str, Fact]) -> GateResult:
        """Take held and clipped changes out of *plan* (a `MergePlan`), in place."""
        result = GateResult()
        # Updated, merged and removed facts are all ours already: trusted facts, or claims (whose
        # claimed author may change them; anyone else needs a signature or a person's acceptance).
        touched = list(dict.fromkeys([*plan.updated, *plan.merged, *plan.removed]))
        if touched:
            authors = changes_by_path(self.repo, self.theirs, self.ours, {fact_path(i) for i in touched})
            for fact_id in touched:
                commits = authors.get(fact_path(fact_id), [])
                if not commits:
                    # No commit of theirs changed it: a merge of theirs left our version out (claims
                    # over their cap). Ours stays; there is nothing for a person to decide.
                    self._keep(plan, fact_id, result)
                    continue
                if isinstance(self.claims, Mapping):
                    owner = self.claims.get(fact_id)    # None: a trusted fact
                elif fact_id in self.claims:
                    continue                            # a claim whose author was not given: anyone's
                else:
                    owner = None
                if all(self.commit_trusted(c) or (owner is not None and self.claimed(c) == owner) for c in commits):
                    continue
                self._hold(plan, fact_id, ours_facts.get(fact_id), commits, result)
        self._clip(plan, ours_facts, result)
        return result

    def _keep(self, plan, fact_id: str, result: GateResult) -> None:
        for name in ("updated", "merged", "removed"):
            values = getattr(plan, name)
            if fact_id in values:
                values.remove(fact_id)
        plan.puts.pop(fact_id, None)
        result.kept.append(fact_id)

    def _hold(self, plan, fact_id: str, mine: Fact | None, commits: list[str], result: GateResult) -> None:
        proposed = None if fact_id in plan.removed else self._theirs_version(fact_id)
        for name in ("updated", "merged", "removed"):
            values = getattr(plan, name)
            if fact_id in values:
                values.remove(fact_id)
        plan.puts.pop(fact_id, None)
        if mine is not None and proposed is not None and _counters_only(mine, proposed):
            result.ignored.append(fact_id)
            return
        untrusted = [c for c in commits if not self.commit_trusted(c)] or commits
        result.held.append({
            "id": fact_id, "proposed": proposed.to_dict() if proposed is not None else None,
            "current": mine.to_dict() if mine is not None else None,
            "by": sorted({self.claimed(c) for c in untrusted}),
            "commits": [c[:12] for c in untrusted[:5]], "remote": self.remote, "theirs": str(self.theirs),
        })

    def _theirs_version(self, fact_id: str) -> Fact | None:
        path = fact_path(fact_id)
        try:
            entry = self.repo[self.theirs].peel(pygit2.Tree)[path]
            return fact_from_blob(self.repo[entry.id].data, path, scope=self.scope)
        except (KeyError, ValueError, InvalidFact, pygit2.GitError):
            return None

    def _clip(self, plan, ours_facts: Mapping[str, Fact], result: GateResult) -> None:
        """Claims arriving beyond the cap are not taken; facts from trusted commits always are
        (they are knowledge, and a store over its cap, e.g. bulk-written, must still sync)."""
        if self.cap is None:
            return
        arriving = [i for i in plan.added if plan.puts[i].is_valid]
        if not arriving:
            return
        authors = changes_by_path(self.repo, self.theirs, self.ours, {fact_path(i) for i in arriving})

        def trusted(fact_id: str) -> bool:
            commits = authors.get(fact_path(fact_id), [])
            return bool(commits) and all(self.commit_trusted(c) for c in commits)

        claims = [i for i in arriving if not trusted(i)]
        if not claims:
            return
        # Counting our valid facts reads them all (a lazy `TreeFacts` loads the ref): only here.
        valid_ours = sum(1 for f in ours_facts.values() if f.is_valid)
        room = max(0, self.cap - valid_ours - (len(arriving) - len(claims)))
        claims.sort(key=lambda i: (plan.puts[i].metadata.created_at, i))
        for fact_id in claims[room:]:
            plan.added.remove(fact_id)
            plan.puts.pop(fact_id)
            result.clipped.append(fact_id)


def _counters_only(mine: Fact, theirs: Fact) -> bool:
    a, b = mine.to_dict(), theirs.to_dict()
    meta_a, meta_b = a.pop("metadata", {}), b.pop("metadata", {})
    if a != b:
        return False
    keys = (meta_a.keys() | meta_b.keys()) - COUNTERS
    return all(meta_a.get(k) == meta_b.get(k) for k in keys)


def changes_by_path(repo: pygit2.Repository, theirs: pygit2.Oid, ours: pygit2.Oid | None,
                    paths: Iterable[str]) -> dict[str, list[str]]:
    """{path: ids of the commits of theirs (not in ours) that changed it}, for *paths*.
    A merge commit counts for a path only where its result matches none of its parents
    (an "evil merge"); otherwise the parents' own commits are the authors."""
    wanted = set(paths)
    out: dict[str, list[str]] = {}
    walker = repo.walk(theirs, pygit2.enums.SortMode.TOPOLOGICAL)
    if ours is not None:
        walker.hide(ours)
    for commit in walker:
        parents = [repo[p] for p in commit.parent_ids if p in repo]
        if not parents:
            changed = {path for path in wanted if _blob_at(commit.tree, path) is not None}
        else:
            changed = None
            for parent in parents:   # a merge: only what differs from every parent is its own
                diff = commit.tree.diff_to_tree(parent.tree, swap=True)
                here = {d.new_file.path if d.new_file.path in wanted else d.old_file.path for d in diff.deltas}
                changed = here if changed is None else changed & here
        for path in (changed or set()) & wanted:
            out.setdefault(path, []).append(str(commit.id))
    return out


def _blob_at(tree: pygit2.Tree, path: str) -> pygit2.Oid | None:
    try:
        return tree[path].id
    except KeyError:
        return None
