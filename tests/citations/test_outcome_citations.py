"""The outcome record of an accepted suggestion cites the code that shipped, and that citation is
checked by later commits like any other."""
from __future__ import annotations

from neo_git.store import FactStore
from tests.helpers.git import commit_files
from tests.helpers.outcomes import BASE, RETRY, process_head, setup_repo, suggest


def test_an_accepted_outcome_cites_the_function_that_shipped(repo_with_commit):
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    suggest(repo, RETRY, [fact_id], description="extract the retry loop")
    shipped = commit_files(repo, {"src/db.py": BASE + "\n\n" + RETRY}, "extract retry loop")
    process_head(repo)
    [review] = [f for f in FactStore.open(repo).list(kind="review") if "outcome" in f.tags]
    [citation] = review.metadata.citations
    assert citation["path"] == "src/db.py" and citation["symbol"] == "retry"
    assert citation["state"] == "verified" and citation["commit"] == shipped
    commit_files(repo, {"src/db.py": BASE + "\n\n" + RETRY.replace("attempts=3", "attempts=4")}, "4 attempts")
    process_head(repo)
    assert FactStore.open(repo).get(review.id).metadata.citations[0]["state"] == "changed"
    assert FactStore.open(repo).review(types=("stale",)) == []   # a record of what shipped: not reviewed
