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
- a fact of ours that no commit of theirs changed, but their merge left out, is *kept* as it
  is, with no review item;
- new facts are the team's memory and are never clipped: a merge that left some of theirs
  out would read, on their side, as our removal of them, and the two clones would trade
  merge commits forever. What the cap bounds here is a *flood*: more new facts (valid or
  retired) from unverified commits in one sync than the scope's cap refuses the whole tip
  (`FloodRefused`; nothing merged, nothing pushed), except on first contact (ours empty, or
  no tracking ref yet: a fresh clone takes the team's memory as the remote holds it). The cap on
  what one clone keeps is the write policy's (`store/policy.py`: each author's own facts).

A path's change counts as trusted only when every commit of theirs that touched it is
trusted: a trusted teammate's later edit does not launder an unverified one.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import cast

import pygit2

from neo_git.errors import InvalidFact, NeoError
from neo_git.facts import Fact, FactScope
from neo_git.store.ref_facts import fact_from_blob, fact_path

# Keys whose change alone is bookkeeping, not a claim about the code.
COUNTERS = frozenset({"access_count", "last_accessed", "success_count", "confidence"})


@dataclass
class GateResult:
    """What the gate took out of a merge plan."""

    held: list[dict] = field(default_factory=list)       # proposals for the `incoming` review source
    ignored: list[str] = field(default_factory=list)     # counter-only changes to trusted facts, dropped
    kept: list[str] = field(default_factory=list)        # ours, left out by a merge of theirs: kept

    @property
    def is_empty(self) -> bool:
        """True when the gate changed nothing."""
        return not (self.held or self.ignored or self.kept)


class FloodRefused(NeoError):
    """Theirs brings more new facts from unverified commits than the scope's cap: nothing taken."""


@dataclass
class TrustGate:
    """Everything the gate needs, decided before the merge is planned.

    *claims*: our facts that are claims, with the author each claims (every other fact of ours is
    trusted), or a function giving them when first needed; *commit_trusted(commit id)*: the verdict
    of one incoming commit; *cap*: the scope's cap, here the most new facts unverified commits may
    bring in one sync."""

    repo: pygit2.Repository
    theirs: pygit2.Oid
    ours: pygit2.Oid | None
    claims: Mapping[str, str] | frozenset[str] | Callable[[], Mapping[str, str] | frozenset[str]]
    commit_trusted: Callable[[str], bool]
    claimed: Callable[[str], str]
    cap: int | None
    remote: str = ""
    scope: FactScope = FactScope.PROJECT   # the one scope the ref holds (org: a connected org memory)
    first_contact: bool = False            # no tracking ref before this fetch: the remote's memory is taken whole

    def apply(self, plan, ours_facts: Mapping[str, Fact]) -> GateResult:
        """Take held changes out of *plan* (a `MergePlan`), in place; raise `FloodRefused` when
        unverified commits bring more new facts than the cap."""
        self._refuse_flood(plan)
        result = GateResult()
        # Updated, merged and removed facts are all ours already: trusted facts, or claims (whose
        # claimed author may change them; anyone else needs a signature or a person's acceptance).
        # The claims (every fact's origin) are computed only when theirs changes a fact of ours:
        # a sync that only brings new facts never reads the provenance of the stored ones.
        touched = list(dict.fromkeys([*plan.updated, *plan.merged, *plan.removed]))
        claims = (self.claims() if callable(self.claims) else self.claims) if touched else frozenset()
        if touched:
            authors = changes_by_path(self.repo, self.theirs, self.ours, {fact_path(i) for i in touched})
            for fact_id in touched:
                commits = authors.get(fact_path(fact_id), [])
                if not commits:
                    # No commit of theirs changed it: a merge of theirs left our version out (claims
                    # over their cap). Ours stays; there is nothing for a person to decide.
                    self._keep(plan, fact_id, result)
                    continue
                if isinstance(claims, Mapping):
                    owner = claims.get(fact_id)         # None: a trusted fact
                elif fact_id in claims:
                    continue                            # a claim whose author was not given: anyone's
                else:
                    owner = None
                if all(self.commit_trusted(c) or (owner is not None and self.claimed(c) == owner) for c in commits):
                    continue
                self._hold(plan, fact_id, ours_facts.get(fact_id), commits, result)
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
            return fact_from_blob(cast(pygit2.Blob, self.repo[entry.id]).data, path, scope=self.scope)
        except (KeyError, ValueError, InvalidFact, pygit2.GitError):
            return None

    def _refuse_flood(self, plan) -> None:
        """More new facts (valid or retired) from unverified commits than the cap: refuse the tip
        whole. Taking part of it would leave the rest looking removed by us on their side."""
        if self.cap is None or self.ours is None or self.first_contact or len(plan.added) <= self.cap:
            return
        authors = changes_by_path(self.repo, self.theirs, self.ours, {fact_path(i) for i in plan.added})
        unverified = [i for i in plan.added
                      if not (authors.get(fact_path(i)) and all(self.commit_trusted(c) for c in authors[fact_path(i)]))]
        if len(unverified) <= self.cap:
            return
        who = sorted({self.claimed(c) for i in unverified for c in authors.get(fact_path(i), [])
                      if not self.commit_trusted(c)})
        shown = ", ".join(who[:3]) + (f" and {len(who) - 3} more" if len(who) > 3 else "")
        raise FloodRefused(
            f"{self.remote or 'the remote'}'s facts bring {len(unverified):,} new facts from unverified commits "
            f"(by {shown or 'unknown authors'}), more than the {self.scope.value} cap of {self.cap:,}: "
            "nothing was merged or pushed",
            f"if they are your team's, trust the remote's writers (`git config --add neo.trustUnsigned "
            f"{self.remote or '<remote>'}`) or their signing keys, then sync again; "
            f"`git log {self.theirs}` shows who wrote them")


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
