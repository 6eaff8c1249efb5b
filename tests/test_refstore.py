"""Project scope on refs/neo/facts: commits, reflog, never the user's index or work tree,
empty repos, worktrees, detached HEAD, and a teammate's malformed fact."""
from __future__ import annotations

import json

import pytest

from tests.helpers.git import commit_files, git
from tests.helpers.store import (
    HTTP_NEW,
    HTTP_OLD,
    REF,
    commit_messages,
    open_store,
    plant_blob,
    ref_fact_ids,
    ref_paths,
    show_blob,
)


def test_one_commit_per_change_with_a_message_saying_what_happened(repo_with_commit):
    store = open_store(repo_with_commit)
    store.init()
    old = store.add("HTTP client", HTTP_OLD, kind="decision")
    new = store.add("HTTP client", HTTP_NEW, kind="decision")
    store.invalidate(new.id, "we dropped httpx")
    store.restore(new.id)
    messages = commit_messages(repo_with_commit)
    assert messages == [
        f"restore {new.id}: HTTP client",
        f"invalidate {new.id}: HTTP client",
        f"supersede {old.id} by {new.id}: HTTP client",
        f"add decision {old.id}: HTTP client",
        "init git-neo facts",
    ]
    # History is a single line of commits, each with the previous tip as parent.
    assert git(repo_with_commit, "rev-list", "--merges", REF) == ""


def test_reflog_without_log_all_ref_updates(repo_with_commit):
    git(repo_with_commit, "config", "--unset-all", "core.logAllRefUpdates", check=False)
    before_config = (repo_with_commit / ".git" / "config").read_text()
    store = open_store(repo_with_commit)
    first = store.add("Docker layer caching order", "Copy the lock file before the sources.")
    second = store.add("Database migrations", "Alembic revisions are squashed per release.")
    reflog = git(repo_with_commit, "reflog", "show", "--format=%gs", REF).splitlines()
    assert reflog[:2] == [f"neo: add pattern {second.id}: Database migrations",
                          f"neo: add pattern {first.id}: Docker layer caching order"]
    assert (repo_with_commit / ".git" / "config").read_text() == before_config
    assert "logallrefupdates" not in before_config.lower()


def test_writing_facts_never_touches_index_work_tree_or_head(repo_with_commit):
    repo = repo_with_commit
    commit_files(repo, {"app.py": "print(1)\n", "lib.py": "x = 1\n"}, "code")
    (repo / "app.py").write_text("print(2)\n")          # unstaged change
    (repo / "lib.py").write_text("x = 2\n")
    git(repo, "add", "lib.py")                          # staged change
    (repo / "new.txt").write_text("untracked\n")        # untracked file
    status = git(repo, "status", "--porcelain")
    cached = git(repo, "diff", "--cached")
    unstaged = git(repo, "diff")
    head = git(repo, "rev-parse", "HEAD")
    index_bytes = (repo / ".git" / "index").read_bytes()
    store = open_store(repo)
    store.init()
    for _i, (subject, body) in enumerate([("HTTP client", HTTP_OLD), ("HTTP client", HTTP_NEW),
                                         ("Logging", "structlog everywhere, JSON in production")]):
        store.add(subject, body, kind="decision")
    assert git(repo, "status", "--porcelain") == status
    assert git(repo, "diff", "--cached") == cached
    assert git(repo, "diff") == unstaged
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / ".git" / "index").read_bytes() == index_bytes
    assert len(ref_fact_ids(repo)) == 3


def test_works_in_an_empty_repository(git_repo):
    store = open_store(git_repo)
    fact = store.add("Build tool", "We build with hatch.", kind="decision")
    assert ref_fact_ids(git_repo) == {fact.id}
    assert git(git_repo, "rev-parse", "--verify", "-q", "HEAD", check=False) == ""  # still unborn
    meta = json.loads(git(git_repo, "show", f"{REF}:meta.json"))
    assert meta["schema_version"] == 1 and meta["project_id"] == fact.project_id
    assert open_store(git_repo).list() == [fact]
    assert git(git_repo, "status", "--porcelain") == ""


def test_init_is_idempotent_and_creates_the_ref(repo_with_commit):
    store = open_store(repo_with_commit)
    first = store.init()
    second = store.init()
    assert first["created"] is True and second["created"] is False
    assert ref_paths(repo_with_commit) == ["meta.json"]
    assert commit_messages(repo_with_commit) == ["init git-neo facts"]


def test_linked_worktree_shares_facts_but_not_session(repo_with_commit, tmp_path):
    main = repo_with_commit
    wt = tmp_path / "wt"
    git(main, "worktree", "add", "-q", "-b", "feature", str(wt))
    in_wt = open_store(wt)
    project_fact = in_wt.add("Feature flags", "Flags live in flags.toml, read at startup.")
    session_fact = in_wt.add("Current task", "Refactoring the flag loader.", scope="session")
    in_main = open_store(main)
    assert [f.id for f in in_main.list(scope="project")] == [project_fact.id]
    assert in_main.list(scope="session") == []
    assert [f.id for f in in_wt.list(scope="session")] == [session_fact.id]
    assert ref_fact_ids(main) == {project_fact.id}
    # and the other way round
    main_fact = in_main.add("Release cadence", "We release every second Tuesday.")
    assert {f.id for f in open_store(wt).list(scope="project")} == {project_fact.id, main_fact.id}
    assert (wt / ".git").is_file()  # really a linked worktree
    assert git(wt, "status", "--porcelain") == ""


def test_works_on_a_detached_head(repo_with_commit):
    repo = repo_with_commit
    commit_files(repo, {"a.txt": "a\n"}, "second")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    head = git(repo, "rev-parse", "HEAD")
    store = open_store(repo)
    fact = store.add("Detached", "Facts work without a branch.")
    assert ref_fact_ids(repo) == {fact.id}
    assert git(repo, "rev-parse", "HEAD") == head
    env = store.recall("facts without a branch").environment
    assert env["detached"] is True and env["branch"] is None and head.startswith(env["head"])


def test_malformed_teammate_fact_is_skipped_with_a_warning_and_kept(repo_with_commit, monkeypatch):
    repo = repo_with_commit
    store = open_store(repo)
    good = store.add("Docker layer caching order", "Copy the lock file before the sources.")
    bad_id = "abcdefabcdefabcd"
    bad_path = f"facts/ab/{bad_id}.json"
    bad_blob = plant_blob(repo, bad_path, b'{"id": "abcdefabcdefabcd", "subject": "", "kind": "nonsense"}\n')
    wrong_name = plant_blob(repo, "facts/12/1234123412341234.json", show_blob(repo, good.id).encode())
    not_json = plant_blob(repo, "facts/99/9999999999999999.json", b"\x00\xffgarbage")

    fresh = open_store(repo)
    facts = fresh.list(include_invalid=True)
    assert [f.id for f in facts] == [good.id]
    warnings = "\n".join(fresh.warnings)
    assert bad_path in warnings and "skipped" in warnings
    assert "1234123412341234.json" in warnings and "9999999999999999.json" in warnings

    other = fresh.add("Database migrations", "Alembic revisions are squashed per release.")
    import neo_git.store.writing as store_module  # the next fact lands in the bad blob's own folder facts/ab/

    monkeypatch.setattr(store_module, "new_fact_id", lambda: "ab00000000000001")
    neighbour = fresh.add("Release cadence", "We release every second Tuesday.")
    assert neighbour.id == "ab00000000000001"
    tree = git(repo, "ls-tree", "-r", REF)
    assert bad_blob in tree and wrong_name in tree and not_json in tree
    assert {f.id for f in open_store(repo).list()} == {good.id, other.id, neighbour.id}
    assert git(repo, "fsck", "--no-dangling").strip() == ""


def test_ref_pointing_at_a_non_commit_is_a_clear_error(repo_with_commit):
    from neo_git.errors import CorruptStore

    tree = git(repo_with_commit, "rev-parse", "HEAD^{tree}").strip()
    git(repo_with_commit, "update-ref", REF, tree)
    store = open_store(repo_with_commit)
    with pytest.raises(CorruptStore):
        store.list()
    assert git(repo_with_commit, "rev-parse", REF).strip() == tree  # left as found


def test_a_stale_ref_lock_is_named_in_the_error(repo_with_commit, monkeypatch):
    from neo_git.errors import NeoError
    from neo_git.store import refstore

    monkeypatch.setattr(refstore, "MAX_ATTEMPTS", 3)
    store = open_store(repo_with_commit)
    store.init()
    tip = git(repo_with_commit, "rev-parse", REF)
    lock = repo_with_commit / ".git" / "refs" / "neo" / "facts.lock"
    lock.write_text("")  # left behind by a process killed inside a ref update
    with pytest.raises(NeoError) as info:
        store.add("Layout", "Code lives under src/.")
    assert "facts.lock" in info.value.message and "remove the file manually" in info.value.hint
    assert git(repo_with_commit, "rev-parse", REF) == tip
    lock.unlink()
    store.add("Layout", "Code lives under src/.")


def test_teammate_fact_with_wrong_types_is_skipped_not_a_crash(repo_with_commit, monkeypatch, capsys):
    from neo_git.cli import main

    store = open_store(repo_with_commit)
    good = store.add("Docker layer caching order", "Copy the lock file before the sources.")
    raw = json.loads(show_blob(repo_with_commit, good.id))
    bad = {**raw, "id": "cdcdcdcdcdcdcdcd", "is_valid": "false", "superseded_by": good.id,
           "metadata": {**raw["metadata"], "invalidation": {"reason": "superseded", "similarity": "high"}}}
    plant_blob(repo_with_commit, "facts/cd/cdcdcdcdcdcdcdcd.json", json.dumps(bad).encode())
    monkeypatch.chdir(repo_with_commit)
    assert main(["why", "cdcdcdcdcdcdcdcd"]) == 1  # not loadable: unknown id, not a crash (exit 3)
    assert main(["list", "--all"]) == 0
    err = capsys.readouterr().err
    assert "warning: " in err and "cdcdcdcdcdcdcdcd.json" in err and "is_valid must be true or false" in err


def test_packed_ref_and_gc_keep_working(repo_with_commit):
    store = open_store(repo_with_commit)
    first = store.add("Docker layer caching order", "Copy the lock file before the sources.")
    git(repo_with_commit, "pack-refs", "--all")
    git(repo_with_commit, "gc", "-q", "--prune=now")
    assert not (repo_with_commit / ".git" / "refs" / "neo" / "facts").exists()  # now only in packed-refs
    second = open_store(repo_with_commit).add("Database migrations", "Alembic revisions are squashed.")
    assert ref_fact_ids(repo_with_commit) == {first.id, second.id}
    assert commit_messages(repo_with_commit)[0].startswith(f"add pattern {second.id}")
    assert git(repo_with_commit, "fsck", "--no-dangling").strip() == ""
    reflog = git(repo_with_commit, "reflog", "show", "--format=%gs", REF).splitlines()
    assert reflog[0] == f"neo: add pattern {second.id}: Database migrations"


def test_a_writer_losing_to_progressing_writers_retries_past_max_attempts_within_retry_seconds(
        repo_with_commit, monkeypatch):
    """Lost rounds in which another writer moved the ref are progress: they do not count toward
    MAX_ATTEMPTS (losses in a row with the ref standing still), only toward RETRY_SECONDS."""
    from neo_git.errors import NeoError
    from neo_git.store import refstore

    monkeypatch.setattr(refstore, "MAX_ATTEMPTS", 3)
    store = open_store(repo_with_commit)
    store.init()
    real = refstore.RefStore._compare_and_swap
    lost = []

    def others_win(self, expected, new, message, rounds=8):
        if len(lost) < rounds:  # another writer publishes first: the ref moves on
            lost.append(message)
            repo = self.repo
            tip = repo.references[self.ref].target
            other = repo.create_commit(None, self.signature, self.signature, "other\n", repo[tip].tree.id, [tip])
            repo.references[self.ref].set_target(other, "other writer")
            return False
        return real(self, expected, new, message)

    monkeypatch.setattr(refstore.RefStore, "_compare_and_swap", others_win)
    fact = store.add("Layout", "Code lives under src/.")
    assert len(lost) == 8 and fact.id in {f.id for f in open_store(repo_with_commit).list()}
    monkeypatch.setattr(refstore, "RETRY_SECONDS", 0.0)   # a bound on time whatever the progress
    lost.clear()
    with pytest.raises(NeoError, match="kept moving"):
        store.add("Build", "make builds the wheel.")
    assert len(lost) == 1
