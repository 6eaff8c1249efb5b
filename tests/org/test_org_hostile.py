"""A hostile org remote gets the project ref's validation: only org-scoped facts at their own
path cross into the org memory; everything else is skipped, reported, and left out."""
from __future__ import annotations

import json

import pygit2

from tests.helpers.org import org_ids
from tests.helpers.sync import fact_json

GOOD = "abcdef0123456789"


def _plant(remote, files: dict[str, bytes], message: str = "hostile push") -> str:
    """Commit raw *files* on top of the remote's refs/neo/facts with plumbing."""
    repo = pygit2.Repository(str(remote))
    tip = repo.references["refs/neo/facts"].target
    index = pygit2.Index()
    index.read_tree(repo[tip].tree)
    for path, data in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    sig = pygit2.Signature("Mallory", "mallory@example.com")
    return str(repo.create_commit("refs/neo/facts", sig, sig, message, index.write_tree(repo), [tip]))


def test_invalid_blobs_on_the_org_remote_are_skipped_and_reported(org):
    org.connect("alice")
    kept = org.store("alice").add("Secrets live in Vault", "Never commit credentials.", kind="constraint",
                                  scope="org")
    org.sync("alice")
    commit = _plant(org.remote, {
        f"facts/ab/{GOOD}.json": fact_json(GOOD, "good org fact", "keep me", scope="org"),
        "facts/11/1111111111111111.json": b"{not json",
        "facts/22/2222222222222222.json": fact_json("2222222222222222", "a project fact on the org ref"),
        "facts/33/3333333333333333.json": fact_json("3333333333333333", "huge", "x" * (10 * 1024 * 1024),
                                                    scope="org"),
        "facts/44/4444444444444444.json": fact_json("../../../etc/passwd", "path escape", scope="org"),
        "facts/55/5555555555555555.json": fact_json("5555555555555556", "id not matching its path", scope="org"),
        f"facts/zz/{kept.id}.json": fact_json(kept.id, "Commit secrets freely", "hijacked", scope="org",
                                              kind="constraint"),
    })
    report = org.sync("alice")
    assert report.facts == "merged"          # not a fast-forward: the bad blobs stay out
    skipped = {path.split("/")[-1]: why for path, why in report.plan.skipped}
    assert set(skipped) == {"1111111111111111.json", "2222222222222222.json", "3333333333333333.json",
                            "4444444444444444.json", "5555555555555555.json", f"{kept.id}.json"}
    assert "project-scoped fact on a shared ref (only org facts belong there)" in skipped["2222222222222222.json"]
    assert "64 KB" in skipped["3333333333333333.json"]
    assert all(f"commit {commit[:7]}" in why for why in skipped.values())
    store = org.store("alice")
    assert org_ids(store) == {kept.id, GOOD}
    assert store.get(kept.id).body == "Never commit credentials." and not store.warnings
    # The cleaned merge went back to the remote: the next machine gets only valid facts.
    org.connect("bob")
    bob = org.store("bob")
    assert org_ids(bob) == {kept.id, GOOD} and not bob.warnings


def test_an_org_scoped_fact_on_a_project_ref_is_skipped(org):
    """The other direction: a teammate cannot slip an org fact in through a project ref."""
    from neo_git.errors import InvalidFact
    from neo_git.facts import FactScope
    from neo_git.store.ref_facts import fact_from_blob

    data = fact_json(GOOD, "org fact", scope="org")
    path = f"facts/ab/{GOOD}.json"
    assert fact_from_blob(data, path, scope=FactScope.ORG).id == GOOD
    try:
        fact_from_blob(data, path)
    except InvalidFact as exc:
        assert "only project facts belong there" in exc.message
    else:
        raise AssertionError("an org fact was accepted on a project ref")
    assert json.loads(data)["scope"] == "org"
