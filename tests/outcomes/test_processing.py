"""Outcome processing on real commits: verdicts, fact updates, REVIEW facts, notes, idempotence."""
from __future__ import annotations

from neo_git.outcomes.confidence import MAX_OUTCOME_FACTS, confidence_change
from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import BASE, RETRY, fact, note, process_head, setup_repo, suggest


def adopt_verbatim(repo) -> str:
    """A fact, a suggestion relying on it, a commit that ships it verbatim, processed."""
    fact_id = setup_repo(repo)
    suggest(repo, RETRY, [fact_id])
    commit_files(repo, {"src/db.py": BASE + RETRY}, "adopt")
    process_head(repo)
    return fact_id


def _load(repo):
    from neo_git.identity import open_repository, repository_paths
    from neo_git.outcomes.suggestions import load_suggestions

    return {s.id: s for s in load_suggestions(repository_paths(open_repository(repo)))}


def test_verbatim_commit_is_accepted_and_its_fact_gains(repo_with_commit):
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    s = suggest(repo, RETRY, [fact_id], description="extract the retry loop")
    commit = commit_files(repo, {"src/db.py": BASE + "\n\n" + RETRY}, "extract retry loop")
    [result] = process_head(repo)
    assert not result.errors
    updated = fact(repo, fact_id)
    assert updated.metadata.success_count == 1
    assert updated.metadata.confidence > 0.5
    assert _load(repo)[s.id].status == "accepted"
    records = note(repo)
    assert all({"v", "id", "ts"} <= set(r) for r in records)
    [outcome] = [r for r in records if r["type"] == "outcome"]
    assert outcome["verdict"] == "accepted" and outcome["commit"] == commit and outcome["suggestion"] == s.id
    assert outcome["facts"][0]["id"] == fact_id
    # the REVIEW fact links to the advice's fact
    from neo_git.store import FactStore

    reviews = [f for f in FactStore.open(repo).list(kind="review") if "outcome" in f.tags]
    assert len(reviews) == 1 and reviews[0].depends_on == (fact_id,)


def test_a_different_edit_is_modified_and_moves_confidence_a_little(repo_with_commit):
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    s = suggest(repo, RETRY, [fact_id])
    mine = RETRY.replace("attempts=3", "attempts=5").replace("except OSError:", "except (OSError, ValueError):")
    mine = mine.replace("if attempt == attempts - 1:", "if attempt + 1 == attempts:")
    commit_files(repo, {"src/db.py": BASE + "\n\n" + mine}, "my own retry")
    process_head(repo)
    assert _load(repo)[s.id].status == "modified"
    # Issue 32: a restyled suggestion was used; it is no evidence against its fact (+0.05, no success).
    assert abs(fact(repo, fact_id).metadata.confidence - 0.55) < 1e-9
    assert fact(repo, fact_id).metadata.success_count == 0


def test_a_closing_brace_overlap_is_not_accepted(repo_with_commit):
    repo = repo_with_commit
    commit_files(repo, {"web/app.js": "function main() {\n  run();\n"}, "js")
    s = suggest(repo, "function retry(fn) {\n  return fn();\n}\n", file="web/app.js")
    commit_files(repo, {"web/app.js": "function main() {\n  run();\n}\n"}, "close brace")
    process_head(repo)
    # not accepted: the file was committed without the suggested function (an outcome, not silence)
    assert _load(repo)[s.id].status == "abandoned"


def test_a_renamed_and_reindented_file_still_matches(repo_with_commit):
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    s = suggest(repo, RETRY, [fact_id])
    git(repo, "mv", "src/db.py", "src/database.py")
    indented = "class Client:\n" + "".join("    " + line + "\n" for line in RETRY.splitlines())
    commit_files(repo, {"src/database.py": BASE + "\n\n" + indented}, "move and adopt")
    process_head(repo)
    got = _load(repo)[s.id]
    assert got.status == "accepted" and got.outcome["file"] == "src/database.py"


def test_processing_twice_changes_nothing(repo_with_commit):
    repo = repo_with_commit
    fact_id = adopt_verbatim(repo)
    facts_tip = git(repo, "rev-parse", "refs/neo/facts")
    notes_tip = git(repo, "rev-parse", "refs/notes/neo")
    [again] = process_head(repo)
    assert again.skipped == "already processed"
    # even with the ledger gone, the REVIEW fact id and note record ids make it a no-op
    from neo_git.identity import find_repository_paths

    (find_repository_paths(repo).neo_dir / "processed.json").unlink()
    process_head(repo)
    assert git(repo, "rev-parse", "refs/neo/facts") == facts_tip
    assert git(repo, "rev-parse", "refs/notes/neo") == notes_tip
    assert fact(repo, fact_id).metadata.success_count == 1


def test_unsuggested_code_files_are_independent_at_most_five(repo_with_commit):
    repo = repo_with_commit
    commit_files(repo, {f"pkg/m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(7)} | {"notes.txt": "x\n"},
                 "many files")
    [result] = process_head(repo)
    independent = [r for r in result.records if r.get("verdict") == "independent"]
    assert len(independent) == 5
    assert all(r["file"].endswith(".py") for r in independent)


def test_the_outcome_facts_are_capped(repo_with_commit):
    from neo_git.outcomes.confidence import Outcome, review_fact
    from neo_git.store import Change, FactStore

    repo = repo_with_commit
    git(repo, "config", "neo.autoGc", "false")   # upkeep would merge these look-alike review facts
    fact_id = setup_repo(repo)
    store = FactStore.open(repo)
    old = [review_fact(Outcome(f"{i:040x}", f"{i:016x}", "a.py", "accepted", None, ()), org_id=None,
                       project_id=store.project_id, author="t", project_fact_ids=set())
           for i in range(MAX_OUTCOME_FACTS)]
    store.transact("project", lambda facts: Change(facts=tuple(old), message="seed outcomes"))
    suggest(repo, RETRY, [fact_id])
    commit_files(repo, {"src/db.py": BASE + RETRY}, "adopt")
    process_head(repo)
    outcomes = [f for f in FactStore.open(repo).list(kind="review") if "outcome" in f.tags]
    assert len(outcomes) == MAX_OUTCOME_FACTS
    assert len({f.id for f in old} - {f.id for f in outcomes}) == 1   # the oldest one went


def test_confidence_rule():
    assert abs(confidence_change("accepted", "improvement")[0] - 0.3) < 1e-9
    assert abs(confidence_change("accepted", "regression")[0] - 0.1) < 1e-9
    assert confidence_change("accepted", "neutral") == (0.2, 1)
    # Issue 32: MODIFIED moves less than ACCEPTED or ABANDONED, whatever the health.
    for health in ("improvement", "neutral", "regression", None):
        assert confidence_change("modified", health) == (0.05, 0)
    assert confidence_change("abandoned", None) == (-0.1, 0)
    assert confidence_change("reverted", None) == (-0.2, -1)
    assert confidence_change("superseded", None) == (0.0, 0)
    modified = abs(confidence_change("modified", None)[0])
    assert all(modified < abs(confidence_change(v, h)[0])
               for v, h in (("accepted", None), ("accepted", "regression"), ("abandoned", None)))


def test_losses_never_go_below_the_floor(repo_with_commit):
    from neo_git.outcomes.confidence import Outcome, plan_fact_updates
    from neo_git.store import FactStore

    repo = repo_with_commit
    fact_id = setup_repo(repo)
    facts = {f.id: f.evolve(metadata={"confidence": 0.15}) for f in FactStore.open(repo).list()}
    updated, moved = plan_fact_updates(facts, [Outcome("c" * 40, "s" * 16, "a.py", "abandoned", None, (fact_id,)),
                                               Outcome("d" * 40, "t" * 16, "a.py", "reverted", None, (fact_id,))])
    assert updated[0].metadata.confidence == 0.1 and updated[0].metadata.success_count == 0


def test_amend_moves_the_note_and_counts_once(repo_with_commit):
    from neo_git.identity import open_repository
    from neo_git.outcomes.rewrites import apply_rewrites

    repo = repo_with_commit
    fact_id = setup_repo(repo)
    suggest(repo, RETRY, [fact_id])
    old = commit_files(repo, {"src/db.py": BASE + RETRY}, "adopt")
    process_head(repo)
    git(repo, "commit", "-q", "--amend", "-m", "adopt the retry helper")
    new = git(repo, "rev-parse", "HEAD").strip()
    process_head(repo)                                # post-commit runs for the amended commit too
    apply_rewrites(open_repository(repo), [(old, new)], kind="amend")
    records = note(repo, new)
    assert any(r.get("verdict") == "accepted" and r["commit"] == old for r in records)
    assert fact(repo, fact_id).metadata.success_count == 1
    assert sum(1 for r in records if r.get("verdict") == "accepted") == 1


def test_old_pending_suggestions_expire(repo_with_commit):
    from dataclasses import replace

    from neo_git.identity import find_repository_paths
    from neo_git.outcomes.suggestions import update_suggestions

    repo = repo_with_commit
    fact_id = setup_repo(repo)
    old = suggest(repo, RETRY, [fact_id])
    update_suggestions(find_repository_paths(repo), lambda current: [
        replace(s, created_at="2020-01-01T00:00:00+00:00") if s.id == old.id else s for s in current])
    commit_files(repo, {"src/db.py": BASE + RETRY}, "much later")
    process_head(repo)
    assert _load(repo)[old.id].status == "expired"
    assert fact(repo, fact_id).metadata.success_count == 0


def test_upkeep_runs_after_processing_once_a_day(repo_with_commit):
    from neo_git.identity import find_repository_paths

    repo = repo_with_commit
    adopt_verbatim(repo)
    from neo_git.upkeep.state import UpkeepState

    assert UpkeepState.read(find_repository_paths(repo).neo_dir).last_run is not None
