"""The outcome loop for new commits (docs/architecture.md §7): classify pending suggestions against
what shipped, measure health, move facts, write the note, remember the commit.

    process_commits(repo, [commit_hex, ...], trigger="post-commit")

All of it runs under `.git/neo/outcomes.lock`, so overlapping background workers (20
commits made back to back) take turns; fact writes go through `FactStore.transact`
(compare-and-swap), notes through `notes.add_records` (compare-and-swap). A commit
already in the ledger is skipped, and REVIEW facts have ids derived from (commit,
suggestion), so a repeat after a crash changes nothing.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import cast

import pygit2

from neo_git.fact_schema import Citation
from neo_git.facts import FactScope, now_iso
from neo_git.fileio import locked
from neo_git.identity import RepositoryPaths, repository_paths
from neo_git.outcomes.changes import FileChange
from neo_git.outcomes.confidence import (
    MOVING,
    REVERTED,
    Outcome,
    project_plan,
    relied_on,
    review_fact,
    scope_plan,
)
from neo_git.outcomes.ledger import Ledger, author_key
from neo_git.outcomes.matching import ACCEPTED, MODIFIED, PENDING, match_suggestion, unshipped_verdict
from neo_git.outcomes.records import (
    commit_record,
    health_deltas,
    outcome_record,
    record_id,
    revert_record,
    set_statuses,
)
from neo_git.outcomes.suggestions import Suggestion, update_suggestions
from neo_git.store import notes

log = logging.getLogger("neo_git.outcomes")

MAX_INDEPENDENT = 5           # unsuggested code files recorded per processed commit
MAX_TEXT_BYTES = 1 << 20      # larger blobs are not line-matched
MAX_WALK = 20                 # unprocessed ancestors a worker catches up on
LOCK_TIMEOUT = 300.0          # a worker waits this long for the one before it
SUGGESTION_DAYS = 14          # pending suggestions older than this expire
CLOCK_SLACK = 5               # seconds: a suggestion made "after" a commit can still be in it


@dataclass
class CommitResult:
    """What processing one commit did."""

    commit: str
    skipped: str | None = None            # why nothing was done ("already processed", ...)
    records: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    changes: list[FileChange] | None = None   # what it changed (citations are re-verified from it)


def changed_files(repo: pygit2.Repository, commit: pygit2.Commit) -> list[FileChange]:
    """Files *commit* changed against its first parent, with renames detected."""
    if commit.parents:
        diff = repo.diff(commit.parents[0].tree, commit.tree)  # type: ignore[call-overload]  # pygit2 stub: no trees
    else:
        diff = commit.tree.diff_to_tree(swap=True)
    diff.find_similar()
    out = []
    for delta in diff.deltas:
        zero = "0" * 40
        old_id = str(delta.old_file.id) if str(delta.old_file.id) != zero else None
        new_id = str(delta.new_file.id) if str(delta.new_file.id) != zero else None
        if new_id is None:  # deleted
            out.append(FileChange(delta.old_file.path, delta.old_file.path, old_id, None))
        else:
            old_path = delta.old_file.path if old_id else None
            out.append(FileChange(delta.new_file.path, old_path, old_id, new_id))
    return out


def _text(repo: pygit2.Repository, blob_id: str | None) -> str:
    if not blob_id:
        return ""
    blob = cast(pygit2.Blob, repo[blob_id])
    if blob.size > MAX_TEXT_BYTES or blob.is_binary:
        return ""
    return blob.data.decode("utf-8", "replace")


def process_commits(repo: pygit2.Repository, commits: Sequence[str], *, trigger: str = "post-commit",
                    paths: RepositoryPaths | None = None, catch_up: bool = True,
                    hold_lock: bool = True) -> list[CommitResult]:
    """Process *commits* (oldest first) under the processing lock (*hold_lock* False: the
    caller holds it); with *catch_up*, first what failed before and any unprocessed
    first-parent ancestors a missing worker left behind."""
    paths = paths or repository_paths(repo)
    paths.neo_dir.mkdir(parents=True, exist_ok=True)
    with locked(paths.neo_dir / "outcomes.lock", timeout=LOCK_TIMEOUT) if hold_lock else nullcontext():
        results = _process_commits(repo, commits, trigger, paths, catch_up)
    _after_processing(repo, results)
    return results


def _process_commits(repo, commits, trigger, paths, catch_up) -> list[CommitResult]:
    expire_old_suggestions(paths)
    ledger = Ledger(paths.neo_dir)
    todo: list[str] = list(ledger.retry) if catch_up else []
    for commit in commits:
        for hexid in (_unprocessed_ancestors(repo, commit, ledger) if catch_up else []) + [commit]:
            if hexid not in todo:
                todo.append(hexid)
    results = [_process_isolated(repo, paths, ledger, hexid, trigger) for hexid in todo]
    recheck_citations(repo, results, ledger)
    ledger.save()
    return results


def _process_isolated(repo, paths: RepositoryPaths, ledger: Ledger, hexid: str, trigger: str) -> CommitResult:
    """`process_one`, where a bug on one commit is recorded against that commit (failed, once)
    instead of stopping the commits after it."""
    try:
        return process_one(repo, paths, ledger, hexid, trigger)
    except Exception as exc:  # noqa: BLE001 - one commit's trouble must not stop the loop
        result = CommitResult(hexid)
        reason = f"{type(exc).__name__}: {exc}"
        ledger.failed(hexid, "", reason, transient=False)
        result.errors.append(f"{reason}; recorded as failed, it will not be tried again")
        return result


def _transient(reason: str) -> bool:
    """Failures that may pass by themselves (a held lock, a ref that kept moving)."""
    return any(word in reason for word in ("is locked", "lock", "timed out", "kept moving"))


def recheck_citations(repo: pygit2.Repository, results: list[CommitResult], ledger: Ledger) -> None:
    """Re-verify the facts citing files the processed commits changed (one write for the run,
    `neo_git.citations.recording`); if that write fails, the commits are retried as a whole."""
    done = [r for r in results if r.changes is not None and not r.errors]
    if not done:
        return
    from neo_git.citations.recording import recheck_commits

    try:
        _transitions, error = recheck_commits(repo, [(r.commit, r.changes) for r in done if r.changes is not None])
    except Exception as exc:  # noqa: BLE001 - retried by the next worker, like a failed fact write
        error = f"citations: {type(exc).__name__}: {exc}"
    if error:
        for r in done:
            r.errors.append(error)
            ledger.retry_later(r.commit)


def expire_old_suggestions(paths: RepositoryPaths) -> int:
    """Mark pending suggestions older than SUGGESTION_DAYS (14) expired: advice nobody shipped
    in two weeks should not match some unrelated change much later."""
    from datetime import datetime, timedelta, timezone

    cutoff = (datetime.now(timezone.utc) - timedelta(days=SUGGESTION_DAYS)).isoformat(timespec="seconds")
    expired: list[str] = []

    def change(current: list[Suggestion]) -> list[Suggestion] | None:
        out = []
        for s in current:
            if s.status == "pending" and s.created_at and s.created_at < cutoff:
                s = replace(s, status="expired", outcome={"verdict": "expired", "processed_at": now_iso()})
                expired.append(s.id)
            out.append(s)
        return out if expired else None

    if any(s.created_at and s.created_at < cutoff for s in _pending(paths)):
        update_suggestions(paths, change)
    return len(expired)


def _unprocessed_ancestors(repo: pygit2.Repository, commit: str, ledger: Ledger) -> list[str]:
    """First-parent ancestors of *commit* not yet processed, oldest first, but only when a
    processed one is found within MAX_WALK steps (a fresh install never digs into history)."""
    found: list[str] = []
    try:
        current = repo[commit].peel(pygit2.Commit)
    except (KeyError, ValueError):
        return []
    for _ in range(MAX_WALK):
        if not current.parents:
            return []
        current = current.parents[0]
        hexid = str(current.id)
        if hexid in ledger:
            return list(reversed(found))
        found.append(hexid)
    return []


def process_one(repo: pygit2.Repository, paths: RepositoryPaths, ledger: Ledger, hexid: str,
                trigger: str) -> CommitResult:
    """Process one commit (the caller holds the processing lock and saves the ledger)."""
    result = CommitResult(hexid)
    try:
        commit = repo[hexid].peel(pygit2.Commit)
    except (KeyError, ValueError) as exc:
        result.skipped = f"not a commit ({exc})"
        return result
    hexid = result.commit = str(commit.id)
    if hexid in ledger:
        result.skipped = "already processed"
        return result
    key = author_key(commit)
    if any(r.get("type") == "commit" and r.get("commit") == hexid for r in _note(repo, hexid)):
        ledger.mark(hexid, key, "note found")   # processed before the ledger was lost
        result.skipped = "already processed (note)"
        # ... or by a worker killed before it saved the ledger: citations are checked again
        # (a no-op when it had recorded them), so a kill never loses their states.
        result.changes = changed_files(repo, commit)
        return result
    rewrite_of = amended_from(repo, hexid, ledger)
    changes = result.changes = changed_files(repo, commit)
    by_path = {c.path: c for c in changes}
    by_old = {c.old_path: c for c in changes if c.old_path}
    pending = [s for s in _pending(paths) if _made_before(repo, s, commit)]
    classified: list[tuple[Suggestion, FileChange, dict]] = []
    added = [c for c in changes if c.old_id is None and c.new_id is not None]
    for suggestion in pending:
        change = by_path.get(suggestion.file) or by_old.get(suggestion.file)
        if change is None:
            continue
        # A file moved *and* rewritten is a delete plus an add to git's rename detection
        # (under 50% similar); then the advice may have landed in any added file.
        candidates = [change] if change.new_id is not None else added
        best = None
        for candidate in candidates:
            match = match_suggestion(suggestion.code, suggestion.diff, _text(repo, candidate.old_id),
                                     _text(repo, candidate.new_id))
            if match.verdict in (ACCEPTED, MODIFIED) and (best is None or _rank(match) > _rank(best[1])):
                best = (candidate, match)
        if best is not None:
            classified.append((suggestion, best[0], best[1].to_dict()))
        elif len(commit.parents) <= 1 and _built_on(repo, suggestion, commit):
            # The commit changed the suggestion's file without it: an outcome all the same, never
            # silence (a merge brings others' work: its changes were judged on their own commits).
            # Only for a commit certainly made on top of the advice: a worker lagging behind a
            # burst of commits must not close a suggestion on an older commit.
            deleted = change.new_id is None
            match = unshipped_verdict(suggestion.code, suggestion.diff, _text(repo, change.old_id),
                                      "" if deleted else _text(repo, change.new_id), deleted)
            if match.verdict != PENDING:
                classified.append((suggestion, change, match.to_dict()))
    suggested_paths = {c.path for _, c, _ in classified} | {s.file for s in pending}
    independent: list[str] = []
    if rewrite_of is None and len(commit.parents) <= 1:  # merges and amended copies add no new work
        independent = _independent_files(changes, suggested_paths)
    shipped = [(s, c, m) for s, c, m in classified if m["verdict"] in (ACCEPTED, MODIFIED)]
    # Health is measured whenever code changed: an amended copy records no new work, but its
    # note still says whether the commit as it stands made the code healthier.
    health = health_deltas(repo, commit, shipped, independent) if (shipped or _code_changed(changes)) else {}
    # Advice that shipped (as written or changed) is evidence about the facts it relied on, and
    # so is advice the commit left out (abandoned), unless its own author revised it: a later
    # edit of the same file, by the same agent session or person, shipped in its place.
    revised = revised_drafts(classified)
    subject = commit.message.splitlines()[0] if commit.message else ""
    outcomes = [Outcome(commit=hexid, suggestion_id=s.id, file=c.path, verdict=m["verdict"],
                        health=health.get(s.id, {}).get("verdict"), fact_ids=reliance(s)[0],
                        description=s.description, commit_subject=subject,
                        health_reasons=tuple(health.get(s.id, {}).get("reasons", ())),
                        citations=_shipped_code(repo, commit, s, c) if m["verdict"] == ACCEPTED else (),
                        context_ids=reliance(s)[1], suggested_file=s.file)
                for s, c, m in classified if m["verdict"] in MOVING and s.id not in revised]
    outcomes += reverted_outcomes(repo, hexid, commit, subject)
    moved = _apply(repo, paths, outcomes, result)
    if result.errors:
        reason = "; ".join(result.errors)
        if not ledger.failed(hexid, key, reason, transient=_transient(reason)):
            result.errors.append("recorded as failed; it will not be tried again")
        return result
    ts = now_iso()
    records = [commit_record(hexid, trigger, ts, health.get("", {}), rewrite_of)]
    for suggestion, change, matched in classified:
        records.append(outcome_record(hexid, ts, suggestion, change, matched, health.get(suggestion.id),
                                       moved.get(suggestion.id, []), revised.get(suggestion.id)))
    for outcome in outcomes:
        if outcome.verdict == REVERTED:
            records.append(revert_record(hexid, ts, outcome, moved.get(outcome.suggestion_id, [])))
    for path in independent:
        records.append({"v": notes.NOTE_VERSION, "id": record_id(hexid, "independent", path), "ts": ts,
                        "type": "outcome", "verdict": "independent", "commit": hexid, "file": path,
                        "health": health.get("", {}).get("verdict")})
    try:
        notes.add_records(repo, hexid, records)
    except Exception as exc:  # noqa: BLE001 - a note is a record; the facts already moved
        result.errors.append(f"note: {exc}")
    set_statuses(paths, classified, records)
    ledger.mark(hexid, key, trigger if rewrite_of is None else f"{trigger}, amended copy of {rewrite_of}")
    result.records = records
    return result


def _shipped_code(repo: pygit2.Repository, commit: pygit2.Commit, suggestion: Suggestion,
                  change: FileChange) -> tuple[Citation, ...]:
    """Citations of the code an accepted suggestion shipped (the function around it, or its
    lines): the outcome record is then checked against later commits like any cited fact."""
    try:
        from neo_git.citations.resolve import cite_lines
        from neo_git.outcomes.matching import shipped_lines

        lines = shipped_lines(suggestion.code, suggestion.diff, _text(repo, change.old_id), _text(repo, change.new_id))
        new_id = change.new_id
        assert new_id is not None   # a shipped change has a new blob
        return tuple(cite_lines(change.path, cast(pygit2.Blob, repo[new_id]).data, new_id, commit, lines))
    except Exception as exc:  # noqa: BLE001 - a citation is evidence, never a reason to fail the outcome
        log.warning("no citation for the outcome of %s: %s", suggestion.id, exc)
        return ()


def amended_from(repo: pygit2.Repository, hexid: str, ledger: Ledger, depth: int = 100) -> str | None:
    """The processed commit *hexid* replaced by `git commit --amend`, if any.

    post-commit runs for an amended commit before post-rewrite says what it replaced, so
    the worker asks HEAD's reflog, where git wrote "commit (amend): …" with the old id."""
    try:
        entries = repo.lookup_reference("HEAD").log()
        for count, entry in enumerate(entries):
            if count >= depth:
                break
            if str(entry.oid_new) == hexid and (entry.message or "").startswith("commit (amend)"):
                old = str(entry.oid_old)
                return old if old in ledger else None
    except (KeyError, ValueError, pygit2.GitError):
        pass
    return None


def _note(repo: pygit2.Repository, hexid: str) -> list[dict]:
    try:
        return notes.read_note(repo, hexid)
    except Exception:  # noqa: BLE001 - an unreadable note only means "not known to be processed"
        return []


def _rank(match) -> tuple:
    return (match.verdict == ACCEPTED, match.shipped, match.similar)


def _pending(paths: RepositoryPaths) -> list[Suggestion]:
    from neo_git.outcomes.suggestions import load_suggestions

    return load_suggestions(paths, status="pending")


def _made_before(repo: pygit2.Repository, suggestion: Suggestion, commit: pygit2.Commit) -> bool:
    """Could *commit* contain *suggestion*? Not when the suggestion was recorded on top of
    it (its HEAD is the commit or a descendant): a worker that lags behind a burst of
    commits must not match advice given after the commit it is looking at."""
    if suggestion.head:
        try:
            head = pygit2.Oid(hex=suggestion.head)
            if head == commit.id or repo.descendant_of(head, commit.id):
                return False
            return True
        except (ValueError, KeyError, pygit2.GitError):
            pass
    from datetime import datetime

    try:
        made = datetime.fromisoformat(suggestion.created_at.replace("Z", "+00:00")).timestamp()
    except (ValueError, AttributeError):
        return True
    return made <= commit.commit_time + CLOCK_SLACK


def _built_on(repo: pygit2.Repository, suggestion: Suggestion, commit: pygit2.Commit) -> bool:
    """Was *commit* made on top of the HEAD the suggestion was recorded at (a strict descendant)?
    False whenever that cannot be established (no HEAD then, an object missing)."""
    if not suggestion.head:
        return False
    try:
        return repo.descendant_of(commit.id, pygit2.Oid(hex=suggestion.head))
    except (ValueError, KeyError, pygit2.GitError):
        return False


def _code_changed(changes: list[FileChange]) -> bool:
    """Did the commit touch a file the health engine measures?"""
    from neo_git.health.metrics import language_for_path

    return any(language_for_path(c.path) or (c.old_path and language_for_path(c.old_path)) for c in changes)


def _independent_files(changes: list[FileChange], suggested: set[str]) -> list[str]:
    from neo_git.health.metrics import language_for_path

    out = []
    for change in changes:
        if change.new_id is None or change.path in suggested or change.old_path in suggested:
            continue
        if language_for_path(change.path):
            out.append(change.path)
        if len(out) >= MAX_INDEPENDENT:
            break
    return out


def _apply(repo: pygit2.Repository, paths: RepositoryPaths, outcomes: list[Outcome],
           result: CommitResult) -> dict[str, list[dict]]:
    """Write fact updates and REVIEW facts; {suggestion id: [moved fact dicts]}."""
    if not outcomes:
        return {}
    from neo_git.store import FactStore
    from neo_git.store.refstore import FACTS_REF

    lock = paths.common_dir / f"{FACTS_REF}.lock"
    if lock.exists():
        # A stale lock (a killed git or git-neo) would make every CAS attempt fail; a
        # background worker should not spin on it. The next worker retries.
        result.errors.append(f"facts: {FACTS_REF} is locked ({lock})")
        return {}

    moved_by: dict[str, list[dict]] = {}
    try:
        store = FactStore(repo)
        project_id, org_id, author = store.project_id, store.org_id, store.author
        outcomes = resolve_reliance(outcomes, {f.id: f for f in store.list()})
        if not outcomes:
            return {}

        def make_review(outcome: Outcome, project_fact_ids: set[str]):
            return review_fact(outcome, org_id=org_id, project_id=project_id, author=author,
                               project_fact_ids=project_fact_ids)

        plan, found = project_plan(outcomes, make_review, outcomes[0].commit)
        store.transact(FactScope.PROJECT, plan)
        moved = list(found["moved"])
        applied = found["applied"]
        wanted = {f for o in outcomes for f in o.fact_ids} - found["project_ids"]
        for scope in (FactScope.SESSION, FactScope.ORG, FactScope.GLOBAL):
            if not wanted:
                break
            try:
                present = wanted & set(store.backends[scope].load().facts)
            except Exception as exc:  # noqa: BLE001 - a corrupt ~/.neo file must not stop the loop
                log.warning("%s facts unreadable: %s", scope.value, exc)
                continue
            if present:
                todo = [replace(o, fact_ids=tuple(f for f in o.fact_ids if f in present))
                        for o in outcomes if o.suggestion_id in applied]
                scoped, found = scope_plan(todo, outcomes[0].commit)
                store.transact(scope, scoped)
                moved += found["moved"]
                wanted -= present
    except Exception as exc:  # noqa: BLE001 - retried by the next worker
        result.errors.append(f"facts: {exc}")
        return {}
    for outcome in outcomes:
        moved_by[outcome.suggestion_id] = [m.to_dict() for m in moved if m.id in outcome.fact_ids]
    return moved_by


def reliance(suggestion: Suggestion) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(facts the suggestion relied on, facts merely in the agent's context). An agent's
    suggestion recorded before the two were kept apart listed all its turn's facts: context."""
    if suggestion.context_ids is None and suggestion.origin == "agent":
        return (), suggestion.fact_ids
    return suggestion.fact_ids, suggestion.context_ids or ()


def resolve_reliance(outcomes: list[Outcome], facts) -> list[Outcome]:
    """Each outcome with the facts it moves (`confidence.relied_on`: the context facts about its
    file join the ones it relied on); an abandoned or reverted one that moves nothing is dropped."""
    out = []
    for outcome in outcomes:
        relied = relied_on(outcome.fact_ids, outcome.context_ids, (outcome.file, outcome.suggested_file), facts)
        if not relied and outcome.verdict not in (ACCEPTED, MODIFIED):
            continue
        out.append(replace(outcome, fact_ids=relied,
                           context_ids=tuple(i for i in outcome.context_ids if i not in relied)))
    return out


def revised_drafts(classified) -> dict[str, str]:
    """{abandoned suggestion id: the later suggestion that replaced it}: an agent (same session)
    or a person that edited the same file again, the later edit shipping in this commit. Its
    own author's second thought is not evidence against the facts the first draft relied on."""
    shipped = [(s, c) for s, c, m in classified if m["verdict"] in (ACCEPTED, MODIFIED)]
    out = {}
    for draft, change, match in classified:
        if match["verdict"] in (ACCEPTED, MODIFIED):
            continue
        for later, later_change in shipped:
            if (later_change.path == change.path and later.created_at >= draft.created_at
                    and later.origin == draft.origin and later.session_id == draft.session_id
                    and later.author == draft.author):
                out[draft.id] = later.id
                break
    return out


_REVERTS = re.compile(r"^This reverts commit ([0-9a-f]{40})\b", re.MULTILINE)


def reverted_outcomes(repo: pygit2.Repository, hexid: str, commit: pygit2.Commit, subject: str) -> list[Outcome]:
    """For a `git revert` commit ("This reverts commit <id>." in its message, as git writes it):
    a REVERTED outcome for each suggestion the reverted commit shipped as written, moving the
    facts that gained from it. (A modified suggestion gained little and is left alone.)"""
    out = []
    for reverted in dict.fromkeys(_REVERTS.findall(commit.message or "")):
        for record in _note(repo, reverted):
            if record.get("type") != "outcome" or record.get("verdict") != ACCEPTED or not record.get("suggestion"):
                continue
            gained = tuple(m["id"] for m in record.get("facts") or () if isinstance(m, dict)
                           and isinstance(m.get("id"), str) and _rose(m.get("confidence")))
            if gained:
                out.append(Outcome(commit=hexid, suggestion_id=str(record["suggestion"]),
                                   file=str(record.get("file", "")), verdict=REVERTED, health=None,
                                   fact_ids=gained, description=str(record.get("description", "")),
                                   commit_subject=subject, suggested_file=str(record.get("suggested_file", ""))))
    return out


def _rose(confidence) -> bool:
    """Did a recorded move ([before, after]) raise the fact?"""
    return (isinstance(confidence, list) and len(confidence) == 2
            and all(isinstance(v, (int, float)) for v in confidence) and confidence[1] > confidence[0])


def _after_processing(repo: pygit2.Repository, results: list[CommitResult]) -> None:
    # --- upkeep call site -----------------------------------------------------------
    # The daily upkeep run (caps, stale pruning, demotion; neo_git.upkeep, written by
    # the upkeep engineer) hangs off the outcome worker: it runs in the background,
    # after processing, outside the processing lock. Guarded so this works before
    # neo_git.upkeep exists, and so upkeep can never make outcome processing fail.
    if not any(r.records for r in results):
        return
    try:
        from neo_git import upkeep
    except ImportError:
        return
    try:
        from neo_git.store import FactStore

        upkeep.maybe_run_daily(FactStore(repo))
    except Exception as exc:  # noqa: BLE001 - upkeep trouble is logged, never raised from a hook
        log.warning("upkeep: %s", exc)
