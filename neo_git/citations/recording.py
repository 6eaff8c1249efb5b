"""Recording citation states on the facts: the worker after each commit, and `git neo verify`.

    run = Recheck(store)                            # the cited facts of the project and session scopes
    run.commit(commit, changes)                     # re-verify only what cites a file *commit* changed
    run.write()                                     # one commit on refs/neo/facts for the whole run
    run.note_records(commit)                        # the commit's note lines

States change in memory commit by commit (a run may process several commits, oldest first)
and are written once at the end, through `FactStore.transact`: a worker killed before that
wrote nothing, and the next one re-processes the same commits. Each change names the commit
that caused it (`since`, with its date). What is recorded:

- changed / gone: the citation's state (its fingerprint stays the one cited, so code put
  back as it was reads as verified again);
- moved: the citation follows the code (path, symbol or span, blob) and reads verified,
  with `moved_from`; no review is asked for;
- verified after changed or gone: the code was put back;
- unknown: nothing (a missing blob says nothing about the code).

A fact whose citations are then all changed or gone is stale (`states.is_stale`): the review
queue's `stale` source lists it and recall marks it. This module writes; it sits with the
features (layer 6) while the rest of the package sits with health (layer 3).
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from neo_git.citation_states import BROKEN, CHANGED, GONE, MOVED, UNKNOWN, VERIFIED
from neo_git.citations.code import CodeReader
from neo_git.citations.resolve import commit_date
from neo_git.citations.verify import Change as FileChange, Check, Verifier
from neo_git.fact_schema import Citation
from neo_git.facts import Fact, FactScope
from neo_git.store.base import Change

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.store import FactStore

log = logging.getLogger("neo_git.citations")
SCOPES = (FactScope.PROJECT, FactScope.SESSION)   # citations name files of this repository
# (citation, the state found, the commit checked) -> the commit that brought that state, or None
SinceFinder = Callable[[Citation, str, "pygit2.Commit"], "pygit2.Commit | None"]


@dataclass
class Transition:
    """One citation whose recorded state changed."""

    fact: str
    scope: FactScope
    cited: str
    citation: str        # label after the change
    before: str
    after: str
    commit: str
    moved_from: str | None = None

    def to_dict(self) -> dict:
        """JSON form (notes, --json)."""
        out = {"fact": self.fact, "citation": self.citation, "from": self.before, "state": self.after,
               "commit": self.commit}
        if self.moved_from:
            out["moved_from"] = self.moved_from
        return out


@dataclass
class Recheck:
    """Citation states of the cited facts, updated commit by commit in memory."""

    store: FactStore
    reader: CodeReader | None = None
    facts: dict[str, Fact] = field(default_factory=dict)          # id -> fact as loaded
    current: dict[str, tuple[Citation, ...]] = field(default_factory=dict)   # id -> citations now
    transitions: list[Transition] = field(default_factory=list)
    checked: int = 0

    def __post_init__(self) -> None:
        for scope in SCOPES:
            try:
                loaded = self.store.backends[scope].load()
            except Exception as exc:  # noqa: BLE001 - an unreadable scope (a corrupt session file) is
                log.warning("citations of %s facts not checked: %s", scope.value, exc)   # skipped, not retried
                continue
            for fact in loaded.facts.values():
                if fact.scope is scope and fact.is_valid and fact.metadata.citations:
                    self.facts[fact.id] = fact
                    self.current[fact.id] = fact.metadata.citations
        if self.reader is None:
            assert self.store.repo is not None   # citations are checked in a repository
            self.reader = CodeReader(self.store.repo, self.store.paths.neo_dir if self.store.paths else None)

    def by_path(self) -> dict[str, list[str]]:
        """path -> ids of facts citing it (now)."""
        index: dict[str, list[str]] = {}
        for fact_id, citations in self.current.items():
            for citation in citations:
                index.setdefault(citation.path, []).append(fact_id)
        return index

    def commit(self, commit: pygit2.Commit, changes: Sequence[FileChange]) -> list[Transition]:
        """Re-verify the facts citing a file *commit* changed (renames: old and new path)."""
        touched = {c.path for c in changes} | {c.old_path for c in changes if c.old_path}
        index = self.by_path()
        wanted = sorted({fact_id for path in touched for fact_id in index.get(path, ())})
        if not wanted:
            return []
        assert self.store.repo is not None and self.reader is not None   # set up by __post_init__
        verifier = Verifier(self.store.repo, commit, self.reader, changes=[FileChange(*c) for c in changes])
        found: list[Transition] = []
        for fact_id in wanted:
            found += self._apply(fact_id, verifier, touched)
        return found

    def verify_all(self, commit: pygit2.Commit, since: SinceFinder | None = None
                   ) -> dict[str, list[tuple[Check, Citation]]]:
        """Check every citation of every cited fact against *commit* (what `git neo verify` does),
        updating the citations in memory as a commit would. *since* finds the commit that caused
        a state this check discovered (default: *commit* itself). Returns {fact id: [(check, the
        citation as now recorded)]} in citation order, facts oldest first."""
        assert self.store.repo is not None and self.reader is not None   # set up by __post_init__
        verifier = Verifier(self.store.repo, commit, self.reader)
        out: dict[str, list[tuple[Check, Citation]]] = {}
        for fact_id in sorted(self.current, key=lambda i: (self.facts[i].metadata.created_at, i)):
            checks: list[Check] = []
            self._apply(fact_id, verifier, None, checks, since)
            out[fact_id] = list(zip(checks, self.current[fact_id]))
        return out

    def _apply(self, fact_id: str, verifier: Verifier, touched: set[str] | None,
               checks: list[Check] | None = None, since: SinceFinder | None = None) -> list[Transition]:
        fact = self.facts[fact_id]
        citations = list(self.current[fact_id])
        found: list[Transition] = []
        for i, citation in enumerate(citations):
            if touched is not None and citation.path not in touched:
                continue
            check = verifier.check(citation)
            self.checked += 1
            if checks is not None:
                checks.append(check)
            updated = self._updated(citation, check)
            if updated is None:
                continue
            cause = verifier.commit
            if since is not None and check.state != MOVED:
                cause = since(citation, check.state, verifier.commit) or cause
            before, after = citation.state, updated.state
            updated = replace(updated, since=str(cause.id), since_date=commit_date(cause))
            if check.state == MOVED:
                updated = replace(updated, moved_from=citation.label)
            citations[i] = updated
            if before != after or check.state == MOVED:
                found.append(Transition(fact_id, fact.scope, citation.key, updated.label, before,
                                        MOVED if check.state == MOVED else after, str(cause.id),
                                        citation.label if check.state == MOVED else None))
        self.current[fact_id] = tuple(citations)
        self.transitions += found
        return found

    @staticmethod
    def _updated(citation: Citation, check: Check) -> Citation | None:
        """The citation to record after *check*, or None when nothing is to be recorded."""
        stored = citation.state
        if check.state == UNKNOWN:
            return None
        if check.state == MOVED:
            return replace(check.citation, state=VERIFIED)
        if check.state == VERIFIED:
            if stored in BROKEN:
                return replace(citation, state=VERIFIED)       # put back as it was cited
            return None
        # changed or gone: the citation keeps what it cited; it follows a renamed file
        if stored == check.state and check.citation.path == citation.path:
            return None
        return replace(citation, path=check.citation.path, state=check.state)

    # --- writing -----------------------------------------------------------------

    def changed_facts(self) -> dict[str, tuple[Citation, ...]]:
        """Facts whose citations differ from what was loaded."""
        return {i: c for i, c in self.current.items() if c != self.facts[i].metadata.citations}

    def write(self, message: str) -> int:
        """Write every changed citation (one commit per scope); returns the facts written.

        A fact whose citations someone else changed meanwhile gets only the updates of the
        citations that are still as they were loaded (matched by how they were cited)."""
        changed = self.changed_facts()
        written = 0
        for scope in SCOPES:
            ids = [i for i in changed if self.facts[i].scope is scope]
            if not ids:
                continue
            details = tuple(_detail(t) for t in self.transitions if t.scope is scope)[:200]
            count = [0]

            def plan(facts: Mapping[str, Fact], ids=ids, details=details, count=count) -> Change | None:
                out = []
                for fact_id in ids:
                    now = facts.get(fact_id)
                    if now is None or not now.is_valid:
                        continue
                    merged = _merge(self.facts[fact_id].metadata.citations, now.metadata.citations,
                                    self.current[fact_id])
                    if merged != now.metadata.citations:
                        out.append(now.evolve(metadata={"citations": merged}))
                count[0] = len(out)
                return Change(tuple(out), message[:120], details) if out else None

            self.store.transact(scope, plan)
            written += count[0]
        return written

    def note_records(self, commit: str, ts: str) -> list[dict]:
        """The note lines for *commit*: every citation whose recorded state it caused. Read from
        the citations themselves (`since`), so a run that repeats a commit whose states a killed
        worker already wrote still writes its lines (same ids: a note never doubles them)."""
        from neo_git.store.notes import NOTE_VERSION

        before = {(t.fact, t.cited): t.before for t in self.transitions if t.commit == commit}
        records = []
        for fact_id, citations in sorted(self.current.items()):
            for citation in citations:
                if citation.since != commit:
                    continue
                state = citation.state
                if state == VERIFIED and citation.moved_from:
                    state = MOVED
                key = citation.key
                if state == VERIFIED and (fact_id, key) not in before:
                    continue   # cited at this commit, nothing happened to it
                record = {"v": NOTE_VERSION, "ts": ts, "type": "citation", "commit": commit, "fact": fact_id,
                          "citation": citation.label, "state": state,
                          "id": hashlib.sha1(f"{commit}:citation:{fact_id}:{key}:{state}".encode()).hexdigest()[:16]}
                if state == MOVED:
                    record["moved_from"] = citation.moved_from
                if (fact_id, key) in before:
                    record["from"] = before[(fact_id, key)]
                records.append(record)
        return records

    def close(self) -> None:
        """Write the blob cache."""
        if self.reader is not None:
            self.reader.close()


def _merge(base: tuple[Citation, ...], now: tuple[Citation, ...], ours: tuple[Citation, ...]
           ) -> tuple[Citation, ...]:
    """Our citations laid over *now*: each one still as in *base* takes ours."""
    if now == base:
        return ours
    base_by = {c.key: c for c in base}
    ours_by = {c.key: c for c in ours}
    out = []
    for citation in now:
        key = citation.key
        out.append(ours_by[key] if key in ours_by and base_by.get(key) == citation else citation)
    return tuple(out)


def _detail(t: Transition) -> str:
    if t.after == MOVED:
        return f"fact {t.fact} {t.moved_from}: moved to {t.citation} in {t.commit[:12]}"
    return f"fact {t.fact} {t.citation}: {t.before} -> {t.after} in {t.commit[:12]}"


def recheck_commits(repo: pygit2.Repository, items: Sequence[tuple[str, Sequence]]) -> tuple[list[Transition], str | None]:
    """The worker's step: re-verify, commit by commit (oldest first), the facts citing files each
    commit changed (*items*: (commit id, its changed files)); write the state changes in one
    commit on the facts ref and a line per change in each commit's note. Returns the
    transitions and an error (nothing was written then: the caller retries the commits)."""
    import pygit2

    from neo_git.store import FactStore
    from neo_git.store.refstore import FACTS_REF

    store = FactStore(repo)
    assert store.paths is not None   # opened from a repository
    lock = store.paths.common_dir / f"{FACTS_REF}.lock"
    run = Recheck(store)
    try:
        if not run.current:
            return [], None
        for hexid, changes in items:
            commit = repo[hexid].peel(pygit2.Commit)
            run.commit(commit, [FileChange(c.path, c.old_path, c.old_id, c.new_id) for c in changes])
        if not run.changed_facts():
            _notes(repo, run, [hexid for hexid, _ in items])   # what a killed worker wrote but did not note
            return run.transitions, None
        if lock.exists():   # a stale lock would fail every attempt; the next worker retries
            return [], f"citations: {FACTS_REF} is locked ({lock})"
        causes = list(dict.fromkeys(t.commit for t in run.transitions))
        noted = [hexid for hexid, _ in items]
        broken = sum(t.after in (CHANGED, GONE) for t in run.transitions)
        moved = sum(t.after == MOVED for t in run.transitions)
        message = (f"citations in {', '.join(c[:12] for c in causes[:3])}{' …' if len(causes) > 3 else ''}: "
                   f"{broken} changed or gone, {moved} moved, {len(run.transitions) - broken - moved} verified again")
        try:
            run.write(message)
        except Exception as exc:  # noqa: BLE001 - nothing was written (compare-and-swap); retried
            return [], f"citations: {exc}"
        _notes(repo, run, noted)
        return run.transitions, None
    finally:
        run.close()


def _notes(repo: pygit2.Repository, run: Recheck, commits: Sequence[str]) -> None:
    from neo_git.facts import now_iso
    from neo_git.store import notes

    ts = now_iso()
    for hexid in commits:
        records = run.note_records(hexid, ts)
        if records:
            try:
                notes.add_records(repo, hexid, records)
            except Exception:  # noqa: BLE001 - the facts hold the states; a note is a record
                pass
