"""The public library API (docs/architecture.md §11) and its errors on bad input: each is clear
and changes nothing on the ref or in ~/.neo."""
from __future__ import annotations

import pytest

import neo_git
from neo_git.errors import FactNotFound, InvalidFact, NeoError, NotARepository
from tests.helpers.store import neo_home, open_store, snapshot_tree


def test_public_names_import_from_the_package():
    from neo_git import ContextResult, Fact, FactStore  # noqa: F401

    assert set(neo_git.__all__) >= {"FactStore", "Fact", "ContextResult", "NeoError", "FactNotFound", "InvalidFact"}


def test_open_outside_a_repository_raises_not_a_repository(tmp_path):
    from neo_git import FactStore

    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotARepository) as info:
        FactStore.open(plain)
    assert str(plain) in info.value.message and info.value.hint
    assert not (plain / ".git").exists()


def test_open_from_a_subdirectory(repo_with_commit):
    from neo_git import FactStore

    sub = repo_with_commit / "src" / "pkg"
    sub.mkdir(parents=True)
    fact = FactStore.open(sub, embedder="hash").add("Layout", "Code lives under src/.")
    assert [f.id for f in FactStore.open(repo_with_commit, embedder="hash").list()] == [fact.id]


def test_add_returns_a_fact_with_the_documented_fields(repo_with_commit):
    store = open_store(repo_with_commit)
    fact = store.add("HTTP client", "All outbound HTTP goes through httpx.", kind="decision", scope="project",
                     depends_on=(), supersedes=None, tags=("http",), confidence=0.6)
    assert len(fact.id) == 16 and fact.supersedes is None and fact.tags == ("http",)
    assert fact.kind.value == "decision" and fact.scope.value == "project"
    assert fact.metadata.author == "Ada Tester <ada@example.com>"
    assert fact.metadata.confidence == 0.6 and fact.is_valid
    assert fact.project_id == store.project_id and fact.org_id == "unknown"
    assert store.get(fact.id) == fact and store.get(fact.id[:5]) == fact
    assert store.list(kind="decision") == [fact] and store.list(kind="pattern") == []


@pytest.fixture
def populated(repo_with_commit):
    store = open_store(repo_with_commit)
    store.add("Docker layer caching order", "Copy the lock file before the sources.")
    store.add("Formatter", "ruff format, line length 100.", scope="global")
    return store


def _state(repo):
    return snapshot_tree(repo / ".git" / "refs"), snapshot_tree(repo / ".git" / "logs"), snapshot_tree(neo_home())


@pytest.mark.parametrize("kwargs, error, fragment", [
    ({"kind": "opinion"}, InvalidFact, "invalid kind"),
    ({"scope": "team"}, InvalidFact, "invalid scope"),
    ({"subject": ""}, InvalidFact, "subject is empty"),
    ({"subject": " \n\t "}, InvalidFact, "subject is empty"),
    ({"body": "x" * 1_000_000}, InvalidFact, "body is too long"),
    ({"subject": "caf\udce9"}, InvalidFact, "not valid UTF-8"),
    ({"body": "caf\udce9 au lait"}, InvalidFact, "not valid UTF-8"),
    ({"confidence": 1.5}, InvalidFact, "confidence"),
    ({"confidence": True}, InvalidFact, "confidence"),
    ({"tags": ["two words"]}, InvalidFact, "invalid tag"),
    ({"supersedes": "ffffffffffffffff"}, NeoError, "no fact"),
    ({"depends_on": ["zz"]}, NeoError, "no fact"),
])
def test_bad_input_is_a_clear_error_and_changes_nothing(populated, repo_with_commit, kwargs, error, fragment):
    before = _state(repo_with_commit)
    args = {"subject": "Valid subject", "body": "valid body", **kwargs}
    for scope in ("project", "global"):
        call = {**args, "scope": args.get("scope", scope)}
        with pytest.raises(error) as info:
            populated.add(call.pop("subject"), call.pop("body"), **call)
        assert fragment in info.value.message
    assert _state(repo_with_commit) == before


def test_unknown_id_and_ambiguous_prefix(populated, repo_with_commit):
    with pytest.raises(FactNotFound):
        populated.get("0000000000000000")
    with pytest.raises(FactNotFound):
        populated.get("xyz!")
    with pytest.raises(FactNotFound):
        populated.get("ab")  # too short to be a prefix
    # make two ids share a prefix
    from neo_git.facts import FactScope
    from neo_git.store.base import Change

    base = populated.list(scope="project")[0]
    twins = [base.evolve(id="abcd" + "0" * 11 + str(i), subject=f"Twin {i} zebra") for i in (1, 2)]
    populated.backends[FactScope.PROJECT].transact(lambda facts: Change(tuple(twins), "twins"))
    before = _state(repo_with_commit)
    with pytest.raises(NeoError) as info:
        populated.get("abcd")
    assert "ambiguous" in info.value.message and info.value.hint
    for action in (populated.why, populated.history, populated.restore, populated.invalidate):
        with pytest.raises(NeoError):
            action("abcd")
        with pytest.raises(FactNotFound):
            action("0000000000000000")
    assert populated.get("abcd" + "0" * 11 + "2").subject == "Twin 2 zebra"
    assert _state(repo_with_commit) == before


def test_recall_rejects_bad_arguments(populated):
    for query in ("", "caf\udce9"):
        with pytest.raises(InvalidFact):
            populated.recall(query)
    with pytest.raises(NeoError):
        populated.recall("docker", max_tokens=0)
    with pytest.raises(NeoError):
        populated.recall("docker", k=-1)


def test_invalidate_keeps_the_text_and_restore_undoes_it(populated):
    fact = populated.list(scope="project")[0]
    gone = populated.invalidate(fact.id, "we moved to buildpacks")
    assert not gone.is_valid and gone.body == fact.body
    assert populated.why(fact.id)["state"] == "invalidated"
    assert "buildpacks" in populated.why(fact.id)["explanation"]
    assert populated.restore(fact.id).is_valid


def test_source_prompt_is_cut_to_200_characters(repo_with_commit):
    store = open_store(repo_with_commit)
    fact = store.add("Layout", "Code lives under src/.", source_prompt="why " * 200, source_file="src/app.py",
                     provenance="inferred")
    assert len(fact.metadata.source_prompt) == 200
    assert fact.metadata.source_file == "src/app.py" and fact.metadata.provenance == "inferred"
    with pytest.raises(InvalidFact):
        store.add("Layout 2", "x", provenance="gossip")


def test_recall_appends_its_counts_instead_of_rewriting_a_file(repo_with_commit):
    """Each recall adds one line to .git/neo/access.log; access.json is rewritten only when the
    log is folded into it, and every process sees the counts either way."""
    from neo_git.store import access

    store = open_store(repo_with_commit)
    fact = store.add("Retries", "Retry idempotent requests three times with backoff.", kind="decision")
    neo = repo_with_commit / ".git" / "neo"
    for _ in range(3):
        store.recall("how do we retry requests")
    assert not (neo / "access.json").exists()
    assert len((neo / "access.log").read_text().splitlines()) == 3
    assert open_store(repo_with_commit).get(fact.id).metadata.access_count == 3
    open_store(repo_with_commit).access.fold()
    assert not (neo / "access.log").exists()
    assert open_store(repo_with_commit).get(fact.id).metadata.access_count == 3
    store.recall("how do we retry requests")
    assert open_store(repo_with_commit).get(fact.id).metadata.access_count == 4
    assert access.FOLD_BYTES > 1000


def test_concurrent_recalls_and_folds_lose_no_count(repo_with_commit):
    import subprocess
    import sys as _sys

    store = open_store(repo_with_commit)
    fact = store.add("Retries", "Retry idempotent requests three times with backoff.", kind="decision")
    code = ("import neo_git.store.access as a; a.FOLD_BYTES = 300; "
            "from neo_git.store import FactStore; s = FactStore.open('.', embedder='hash'); "
            f"[s.access.record(['{fact.id}']) for _ in range(40)]")
    procs = [subprocess.Popen([_sys.executable, "-c", code], cwd=repo_with_commit, stdin=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    assert open_store(repo_with_commit).get(fact.id).metadata.access_count == 120
