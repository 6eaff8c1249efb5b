"""What issue 18 says must hold: reformatting keeps a citation verified, a renamed file keeps it
verified under the new path, one changed statement makes it changed, a deleted function gone;
a clone without the blob says unknown, never gone."""
from __future__ import annotations

from tests.helpers.citations import CONFIG, REFORMATTED, citations, cited_repo, facts_log, process, state, verify
from tests.helpers.git import commit_files, git


def test_reformatting_the_cited_function_leaves_it_verified(repo_with_commit):
    repo = repo_with_commit
    fact_id = cited_repo(repo)
    commit_files(repo, {"src/app/config.py": REFORMATTED}, "black, a narrower indent, new comments")
    [result] = process(repo)
    assert not result.errors
    assert state(repo, fact_id) == "verified"
    [row] = verify(repo)["facts"][0]["citations"]
    assert row["state"] == "verified" and row["symbol"] == "load_config"


def test_renaming_the_file_keeps_it_verified_under_the_new_path(repo_with_commit):
    repo = repo_with_commit
    fact_id = cited_repo(repo)
    git(repo, "mv", "src/app/config.py", "src/app/settings.py")
    moved = commit_files(repo, {}, "rename config to settings")
    process(repo)
    [citation] = citations(repo, fact_id)
    assert citation["path"] == "src/app/settings.py" and citation["state"] == "verified"
    assert citation["moved_from"] == "src/app/config.py:load_config" and citation["since"] == moved
    [row] = verify(repo)["facts"][0]["citations"]
    assert row == {"path": "src/app/settings.py", "symbol": "load_config", "state": "verified",
                   "since": moved}
    # the commit's note says what happened to the citation
    note = [r for r in _note(repo) if r["type"] == "citation"]
    assert note and note[0]["state"] == "moved" and note[0]["fact"] == fact_id


def test_changing_one_statement_makes_it_changed_and_the_fact_stale(repo_with_commit):
    repo = repo_with_commit
    fact_id = cited_repo(repo)
    changed = commit_files(repo, {"src/app/config.py": CONFIG.replace("attempts=3", "attempts=5")}, "retry 5 times")
    process(repo)
    assert state(repo, fact_id) == "changed"
    assert citations(repo, fact_id)[0]["since"] == changed
    [row] = verify(repo)["facts"][0]["citations"]
    assert row["state"] == "changed" and row["since"] == changed
    from neo_git.store import FactStore

    [item] = FactStore.open(repo).review(types=("stale",))
    assert item["id"] == fact_id and changed[:7] in item["why"]
    assert set(item["actions"]) == {"keep", "retire", "update"}


def test_deleting_the_function_makes_it_gone_and_deleting_the_file_too(repo_with_commit):
    repo = repo_with_commit
    fact_id = cited_repo(repo, "src/app/config.py:load_config", "src/app/config.py:Settings.merge")
    without = CONFIG[:CONFIG.index("def load_config")] + CONFIG[CONFIG.index("class Settings"):]
    commit_files(repo, {"src/app/config.py": without}, "drop load_config")
    process(repo)
    assert [c["state"] for c in citations(repo, fact_id)] == ["gone", "verified"]
    commit_files(repo, {"src/app/config.py": None}, "drop the module")
    process(repo)
    assert [c["state"] for c in citations(repo, fact_id)] == ["gone", "gone"]
    assert [r["state"] for r in verify(repo)["facts"][0]["citations"]] == ["gone", "gone"]


def test_one_facts_commit_per_worker_run_naming_the_commit(repo_with_commit):
    repo = repo_with_commit
    fact_id = cited_repo(repo)
    before = len(facts_log(repo))
    changed = commit_files(repo, {"src/app/config.py": CONFIG.replace("raise", "raise RuntimeError(path)")}, "wrap")
    process(repo)
    log = facts_log(repo)
    assert len(log) == before + 1 and changed[:12] in log[0]
    body = git(repo, "log", "-1", "--format=%b", "refs/neo/facts")
    assert f"fact {fact_id} src/app/config.py:load_config: verified -> changed in {changed[:12]}" in body
    # processing the same commit again changes nothing
    process(repo)
    assert len(facts_log(repo)) == before + 1


def test_only_facts_citing_touched_files_are_checked(repo_with_commit):
    repo = repo_with_commit
    fact_id = cited_repo(repo)
    from neo_git.citations.recording import Recheck
    from neo_git.identity import open_repository
    from neo_git.outcomes.processing import changed_files
    from neo_git.store import FactStore

    commit_files(repo, {"README.md": "other\n"}, "docs only")
    r = open_repository(repo)
    run = Recheck(FactStore.open(repo))
    head = r.head.peel(__import__("pygit2").Commit)
    assert run.commit(head, changed_files(r, head)) == [] and run.checked == 0
    assert state(repo, fact_id) == "verified"


def test_put_back_code_reads_verified_again(repo_with_commit):
    repo = repo_with_commit
    fact_id = cited_repo(repo)
    commit_files(repo, {"src/app/config.py": CONFIG.replace("attempts=3", "attempts=5")}, "5")
    process(repo)
    assert state(repo, fact_id) == "changed"
    commit_files(repo, {"src/app/config.py": CONFIG}, "revert")
    process(repo)
    assert state(repo, fact_id) == "verified"


def test_a_partial_clone_without_the_blob_reports_unknown_not_gone(repo_with_commit, tmp_path):
    origin = repo_with_commit
    fact_id = cited_repo(origin)
    commit_files(origin, {"src/app/config.py": CONFIG.replace("attempts=3", "attempts=4")}, "4")
    git(origin, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "partial"
    git(tmp_path, "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{origin}", str(clone))
    git(clone, "fetch", "-q", "--no-filter", "origin", "refs/neo/facts:refs/neo/facts")   # as `git neo sync` does
    git(clone, "remote", "remove", "origin")   # nothing can be fetched lazily now
    [row] = verify(clone)["facts"][0]["citations"]
    assert row["state"] == "unknown"
    assert citations(clone, fact_id)[0]["state"] == "verified"   # unknown is never recorded


def test_a_shallow_clone_without_the_old_commit_reports_unknown_for_a_missing_path(repo_with_commit, tmp_path):
    origin = repo_with_commit
    fact_id = cited_repo(origin)
    git(origin, "mv", "src/app/config.py", "src/app/settings.py")
    commit_files(origin, {}, "rename, no worker ran here")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(clone))
    git(clone, "fetch", "-q", "origin", "refs/neo/facts:refs/neo/facts")
    [row] = verify(clone)["facts"][0]["citations"]
    assert row["state"] == "unknown" and row["path"] == "src/app/config.py"
    assert citations(clone, fact_id)[0]["state"] == "verified"
    # the full repository follows the rename
    [row] = verify(origin)["facts"][0]["citations"]
    assert row["state"] == "moved" and row["path"] == "src/app/settings.py"


def _note(repo):
    import json

    text = git(repo, "notes", "--ref=neo", "show", "HEAD", check=False)
    return [json.loads(line) for line in text.splitlines() if line.strip()]
