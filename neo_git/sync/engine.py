"""`pull`, `push` and `sync` of the facts and notes with one remote.

pull = fetch into tracking refs, merge the facts (fast-forward, or a merge commit
written through `store.transact` with the remote tip as second parent), merge the
notes. push = a non-forced push of what the remote does not have yet. sync = pull
then push, and when the push finds that the remote moved in between, pull and push
again, a bounded number of times.

Nothing reaches `refs/neo/facts` unvalidated: even a fast-forward is taken only when
every fact it brings passes `read_fact`, its tree holds nothing but fact blobs and
meta.json, and the trust gate (`sync/gate.py`) holds nothing back; otherwise the valid,
allowed changes are merged and the rest reported (with the commit that brought them).
Who made each incoming commit is what git verifies (`sync/signatures.py`), never the
e-mail the commit claims.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import pygit2

from neo_git.config import config_int, neo_config
from neo_git.errors import NeoError
from neo_git.identity import RepositoryPaths
from neo_git.store.base import SCOPE_CAPS, Change
from neo_git.store.refstore import RefStore, ensure_reflog
from neo_git.sync.gate import TrustGate
from neo_git.sync.notes import merge_notes
from neo_git.sync.signatures import judge_incoming, rejudge
from neo_git.sync.transport import (
    BRANCH_FACTS_REF,
    FACTS_REF,
    NOTES_REF,
    Git,
    RefNames,
    ensure_blobs,
    fetch,
    ls_remote,
    push,
    ref_names,
)
from neo_git.sync.treemerge import MergePlan, plan_merge

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store import FactStore

MAX_SYNC_ATTEMPTS = 8     # fetch-merge-push rounds when other clones keep pushing in between
MAX_LOCAL_ATTEMPTS = 20   # fast-forward CAS retries when local writers move the ref
DEFAULT_TIMEOUT = 120     # seconds per git network command (`neo.syncTimeout`)
MAX_DESCRIBED = 20        # invalid blobs whose commit is looked up by name


@dataclass
class SyncReport:
    """What one pull / push / sync did."""

    remote: str
    facts: str = "up to date"
    notes: str = "up to date"
    pushed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    summary: str = ""
    attempts: int = 0
    plan: MergePlan | None = None
    keys: list[str] = field(default_factory=list)   # signing keys pinned on first use by this pull

    def to_dict(self) -> dict:
        """The `--json` form."""
        plan = self.plan
        return {"remote": self.remote, "facts": self.facts, "notes": self.notes, "pushed": self.pushed,
                "summary": self.summary, "attempts": self.attempts, "warnings": self.warnings, "keys": self.keys,
                "added": plan.added if plan else [], "updated": plan.updated if plan else [],
                "merged": plan.merged if plan else [], "removed": plan.removed if plan else [],
                "skipped": [path for path, _ in plan.skipped] if plan else []}


def resolve_remote(repo: pygit2.Repository, name: str | None) -> str:
    """The remote to talk to: *name*, else `neo.remote`, else origin, else the only remote."""
    names = list(repo.remotes.names())
    if name is None:
        name = neo_config("remote", None, repo=repo)
        if name is None:
            name = "origin" if "origin" in names else names[0] if len(names) == 1 else None
    if name is None:
        raise NeoError("no remote to sync with" if not names else "several remotes and none chosen",
                       "`git remote add <name> <url>` first" if not names else
                       "name one (`git neo pull <remote>`), or choose the one facts are shared with: "
                       "`git neo sync --remote <remote>`")
    if name not in names:
        raise NeoError(f"no remote named '{name}'", "`git remote -v` lists them; `git remote add` adds one")
    return name


@dataclass(frozen=True)
class SyncTarget:
    """What a Syncer moves: the facts ref of one repository (a `RefStore` holding one scope),
    and whether the outcome notes go with it. The project facts of a clone are one target;
    a connected org memory (`neo_git/org/`: a bare repository under NEO_HOME) is another,
    moved by the same fetch, validation, merge and push."""

    repo: pygit2.Repository
    paths: RepositoryPaths
    backend: RefStore
    notes: bool = True
    # whose unsigned commits count as trusted changes; None: the store's (`trust.trusted_emails`).
    # An org memory's bare repository has no user of its own: the project store's are passed.
    trusted: frozenset[str] | None = None

    @classmethod
    def project(cls, store: FactStore) -> SyncTarget:
        """The project facts (and outcome notes) of *store*'s repository."""
        if store.repo is None:
            raise NeoError("an in-memory fact store has no remote to sync with")
        assert store.paths is not None   # a store with a repository: its project facts are on the ref
        return cls(store.repo, store.paths, cast(RefStore, store.project_store), notes=True)


class Syncer:
    """Pull, push and sync the project facts and outcome notes of *store* with one remote
    (or, given a *target*, another facts ref such as a connected org memory)."""

    def __init__(self, store: FactStore | None, remote: str | None = None, *,
                 target: SyncTarget | None = None) -> None:
        if target is None:
            assert store is not None   # without a target: the store's project facts
            target = SyncTarget.project(store)
        self.store = store
        self.target = target
        self.backend = target.backend
        self.repo = target.repo
        self.paths = target.paths
        self.remote = resolve_remote(self.repo, remote)
        facts_remote = neo_config("refName", FACTS_REF, repo=self.repo)
        self.names: RefNames = ref_names(self.remote, str(facts_remote),
                                         neo_config("notesRefName", None, repo=self.repo))
        self.git = Git(target.paths, config_int("syncTimeout", DEFAULT_TIMEOUT, repo=self.repo))
        self.label = f"{self.remote}/neo/facts"
        self._described = 0
        self._first_contact = False   # no tracking ref of the remote's facts before this pull
        self._key_news: list = []     # what this pull's judging pinned, and which keys did not match (KeyNews)

    # --- pull -------------------------------------------------------------------------

    def pull(self, report: SyncReport | None = None) -> SyncReport:
        """Fetch the remote's facts and notes into tracking refs and merge them into ours."""
        report = report or SyncReport(self.remote)
        names = self.names
        refs = [(names.facts_remote, names.facts_tracking)]
        if self.target.notes:
            refs.append((names.notes_remote, names.notes_tracking))
        remote_tips = ls_remote(self.git, self.remote, [src for src, _ in refs])
        wanted = [(src, dst) for src, dst in refs if src in remote_tips and self._local(dst) != remote_tips[src]]
        self._first_contact = self._local(names.facts_tracking) is None
        fetch(self.git, self.remote, wanted)
        theirs = remote_tips.get(names.facts_remote)
        if theirs is None:
            report.facts = "none on the remote"
        else:
            if self._is_partial():
                ours = self._local(FACTS_REF)
                ensure_blobs(self.git, self.remote, names.facts_tracking, [ours] if ours else [])
            tracking = pygit2.Oid(hex=self._local(names.facts_tracking) or theirs)
            if not isinstance(self.repo.get(tracking), pygit2.Commit):
                raise NeoError(f"{self.remote}'s {names.facts_remote} is not a commit; nothing was merged",
                               f"inspect it with `git cat-file -t {tracking}`")
            # Commits on ours with no verdict (a lost record, a plain `git fetch`) are judged
            # again from git data before anything is merged (issue 36: trust fails closed).
            rejudge(self.git, self.repo, self.paths.common_dir, self.backend.ref)
            self._key_news = []
            self.merge_facts(tracking, report)
            for news in self._key_news:
                report.keys += [n for n in news.notes if n not in report.keys]
                report.warnings += [w for w in news.warnings if w not in report.warnings]
        if not self.target.notes:
            report.notes = "not shared here"
        elif names.notes_remote in remote_tips:
            report.notes = merge_notes(self.git, names.notes_tracking)
        else:
            report.notes = "none on the remote"
        return report

    def merge_facts(self, theirs: pygit2.Oid, report: SyncReport) -> None:
        """Bring *theirs* into `refs/neo/facts`: fast-forward when possible, else a merge commit."""
        ensure_reflog(self.paths.common_dir, FACTS_REF)
        backend = self.backend
        for _ in range(MAX_LOCAL_ATTEMPTS):
            ours = backend.tip()
            if ours is not None and (ours == theirs or self.repo.descendant_of(ours, theirs)):
                report.facts = "up to date"
                return
            base = self.merge_base(ours, theirs)
            gate = self._trust_gate(theirs, ours)
            if base == ours:
                # Only the facts the tree diff names are looked at: read on demand, not all loaded.
                plan = plan_merge(self.repo, ours, ours, theirs, backend.facts_at(ours), self._describe(theirs),
                                  backend.scope, gate)
                if plan.clean:
                    if not self._fast_forward(ours, theirs):
                        continue  # a local writer moved the ref: look again
                    report.facts, report.plan = ("fast-forward" if ours else "created"), plan
                    report.summary = plan.summary(self.label)
                    return
            merged = self._merge_commit(theirs, gate, ours)
            if merged is None:
                report.facts = "up to date"
                return
            report.facts, report.plan, report.summary = "merged", merged, merged.summary(self.label)
            report.warnings += [f"skipped {path} from {self.label}: {why}" for path, why in merged.skipped]
            self._report_gate(merged, report)
            return
        raise NeoError(f"could not update {FACTS_REF}: it kept moving", "try again")

    def merge_base(self, ours: pygit2.Oid | None, theirs: pygit2.Oid) -> pygit2.Oid | None:
        """The merge base (None without one); through `git merge-base` in a shallow clone,
        where libgit2 may stop at the shallow boundary."""
        if ours is None:
            return None
        if self.repo.is_shallow:
            proc = self.git.run(["merge-base", str(ours), str(theirs)], check=False)
            text = proc.stdout.strip()
            return pygit2.Oid(hex=text) if proc.returncode == 0 and text else None
        try:
            return self.repo.merge_base(ours, theirs)
        except (KeyError, pygit2.GitError):
            return None

    # --- trust ------------------------------------------------------------------------

    def _trust_gate(self, theirs: pygit2.Oid, ours: pygit2.Oid | None) -> TrustGate | None:
        """Judge theirs' new commits (recorded) and say which of our facts they may not change
        (None when every one of them is trusted)."""
        from neo_git.store import received
        from neo_git.store.signers import signers_for
        from neo_git.store.trust import local_email, ref_claims, trusted_emails, trusted_remotes
        from neo_git.sync.keynews import key_news

        verdicts, brought, pinned = judge_incoming(self.git, self.paths.neo_dir, self.remote, theirs, ours)
        if self.target.trusted is not None:
            trusted = self.target.trusted
        else:
            assert self.store is not None   # a target without its own list syncs a store's project
            trusted = trusted_emails(self.store)
        remotes = trusted_remotes(self.repo)
        store = self.store
        keys = signers_for(self.paths.neo_dir, local_email(store) if store is not None else "",
                           store.home if store is not None else None)
        self._key_news.append(key_news(keys, pinned, [verdicts[c] for c in brought if c in verdicts], trusted,
                                       self.remote))

        def commit_trusted(commit: str) -> bool:
            verdict = verdicts.get(commit)
            return verdict is not None and received.is_trusted(verdict, trusted, remotes, keys)

        def claimed(commit: str) -> str:
            return (verdicts.get(commit) or {}).get("claimed", "?")

        if all(commit_trusted(c) for c in brought):
            return None   # every change theirs brings is trusted: nothing for the gate to hold or clip
        memo: list[dict[str, str]] = []

        def claims() -> dict[str, str]:
            # Every fact's origin ({id: claimed author}): read only when theirs changes facts of ours
            # (`TrustGate.apply`).
            if not memo:
                memo.append(dict(ref_claims(self.repo, self.paths.common_dir, trusted, keys.me,
                                            store.home if store is not None else None))
                            if ours is not None else {})
            return memo[0]

        return TrustGate(self.repo, theirs, ours, claims, commit_trusted, claimed, self._cap(), self.remote,
                         self.backend.scope, first_contact=self._first_contact)

    def _cap(self) -> int | None:
        """The cap of the scope this ref holds (the store's, which tests and callers may change)."""
        scope = self.backend.scope
        return self.store.caps.get(scope) if self.store is not None else SCOPE_CAPS.get(scope)

    def _report_gate(self, plan: MergePlan, report: SyncReport) -> None:
        """File held changes for review and say what the gate did."""
        from neo_git.store.review import incoming

        if plan.held:
            incoming.file_proposals(self.paths.neo_dir, plan.held)
            report.warnings.append(
                f"held {len(plan.held)} change(s) to trusted facts from unverified commits of {self.label} "
                f"(your facts are unchanged): `git neo review` lists them")
        if plan.ignored:
            report.warnings.append(f"kept {len(plan.ignored)} of your facts as they are: unverified commits of "
                                   f"{self.label} only moved their counters, or left them out of a merge")

    def _merge_commit(self, theirs: pygit2.Oid, gate: TrustGate | None = None,
                      gate_for: pygit2.Oid | None = None) -> MergePlan | None:
        """Write the merge commit through the store's transaction (re-planned if the tip moves)."""
        backend = self.backend
        plans: dict = {}
        describe = self._describe(theirs)

        def plan_(facts) -> Change | None:
            ours = backend.tip()
            if ours is not None and (ours == theirs or self.repo.descendant_of(ours, theirs)):
                plans["last"] = None
                return None
            if ours not in plans:
                plan = plan_merge(self.repo, self.merge_base(ours, theirs), ours, theirs, facts, describe,
                                  backend.scope, gate if ours == gate_for else self._trust_gate(theirs, ours))
                plans[ours] = (plan, plan.change(self.label, theirs, facts))
            plans["last"] = plans[ours][0]
            return plans[ours][1]

        # Every fact the plan puts was read through `read_fact` (validated, of the ref's scope).
        backend.transact(plan_, lazy=True)
        return plans.get("last")

    def _fast_forward(self, ours: pygit2.Oid | None, theirs: pygit2.Oid) -> bool:
        """Move `refs/neo/facts` from *ours* to *theirs* by compare-and-swap (`git update-ref`
        checks the old value under the ref's lock); False when another writer got there first."""
        proc = self.git.run(["update-ref", "-m", f"neo: fast-forward to {self.label}", FACTS_REF,
                             str(theirs), str(ours) if ours is not None else ""], check=False)
        return proc.returncode == 0

    def _describe(self, theirs: pygit2.Oid):
        def describe(path: str) -> str | None:
            if self._described >= MAX_DESCRIBED:
                return str(theirs)[:12]
            self._described += 1
            proc = self.git.run(["log", "-1", "--format=%h by %an <%ae>", str(theirs), "--", path], check=False)
            return proc.stdout.strip() or str(theirs)[:12]
        return describe

    # --- push -------------------------------------------------------------------------

    def push(self, report: SyncReport | None = None) -> SyncReport:
        """Push our facts and notes where they are ahead of what we last saw of the remote.
        Raises NeoError naming the remote's message when it refuses; `RemoteMoved` when it
        has commits we have not merged."""
        report = report or SyncReport(self.remote)
        names = self.names
        self.backend.tip()   # a damaged local ref (CorruptStore) is never pushed over the remote's good one
        pairs = []
        refs = [(FACTS_REF, names.facts_remote, names.facts_tracking)]
        if self.target.notes:
            refs.append((NOTES_REF, names.notes_remote, names.notes_tracking))
        for local, remote_ref, tracking in refs:
            tip = self._local(local)
            if tip is not None and tip != self._local(tracking):
                pairs.append((local, remote_ref, tracking, tip))
        if not pairs:
            return report
        result = push(self.git, self.remote, [(local, remote_ref) for local, remote_ref, _, _ in pairs])
        if result.remote_moved:
            raise RemoteMoved(self.remote)
        if not result.ok:
            raise NeoError(f"{self.remote} refused the push: {result.refusal()}", self._refusal_hint())
        for _local, remote_ref, tracking, tip in pairs:
            # What we pushed is now what the remote has: record it as git does for branches.
            self.repo.references.create(tracking, pygit2.Oid(hex=tip), force=True)
            report.pushed.append(remote_ref)
        return report

    def _refusal_hint(self) -> str:
        if not self.names.facts_remote.startswith("refs/heads/"):
            return (f"if {self.remote} accepts only branches, keep the facts on one: "
                    f"`git config neo.refName {BRANCH_FACTS_REF}`, then `git neo sync`")
        return f"check your permissions on {self.remote}; local facts are unchanged"

    # --- sync -------------------------------------------------------------------------

    def sync(self) -> SyncReport:
        """Pull and push until the remote holds our merge (bounded retries when it moves)."""
        report = SyncReport(self.remote)
        delay = 0.05
        for attempt in range(1, MAX_SYNC_ATTEMPTS + 1):
            report.attempts = attempt
            self.pull(report)
            try:
                self.push(report)
                return report
            except RemoteMoved:
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 1.0)
        raise NeoError(f"{self.remote} kept moving: gave up after {MAX_SYNC_ATTEMPTS} fetch-merge-push rounds",
                       "others are pushing right now; run `git neo sync` again in a moment")

    # --- helpers ----------------------------------------------------------------------

    def _local(self, ref: str) -> str | None:
        try:
            return str(self.repo.references[ref].resolve().target)
        except (KeyError, pygit2.GitError):
            return None

    def _is_partial(self) -> bool:
        config = self.repo.config
        for key in ("extensions.partialclone", f"remote.{self.remote}.promisor"):
            try:
                if config[key]:
                    return True
            except KeyError:
                continue
        return False


class RemoteMoved(NeoError):
    """The remote has facts or notes we have not merged yet."""

    def __init__(self, remote: str) -> None:
        super().__init__(f"{remote} has facts or notes you do not have yet; nothing was pushed",
                         f"run `git neo sync {remote}` to merge them and push")
