"""The lazy view a sync merges against (`store/tree_facts.TreeFacts`) answers every lookup
exactly as the full read of the ref does, hostile blobs included."""
from __future__ import annotations

from tests.helpers.plumbing import fact_dict, push_files
from tests.helpers.store import open_store


def test_lookups_by_id_agree_with_the_loaded_facts(team_repo):
    repo, ids = team_repo
    misplaced, wrong_scope, broken, folder = "abcdef0123456789", "fedcba9876543210", "1111222233334444", "5555666677778888"
    push_files(repo, {
        f"facts/zz/{ids[0]}.json": fact_dict(ids[0], "a copy elsewhere", body="hijacked"),
        f"facts/ff/{misplaced}.json": fact_dict(misplaced, "filed under the wrong folder"),
        f"facts/fe/{wrong_scope}.json": fact_dict(wrong_scope, "global on the ref", scope="global"),
        f"facts/11/{broken}.json": b"{not json",
        f"facts/55/{folder}.json/inner.json": fact_dict(folder, "a folder where a file belongs"),
        "facts/12/1212121212121212.json": fact_dict("1212121212121212", "a good one from a teammate"),
    })
    store = open_store(repo).project_store
    loaded = store.load().facts
    lazy = store.facts_at(store.tip())
    for fact_id in [*ids, misplaced, wrong_scope, broken, folder, "1212121212121212", "0000000000000000",
                    "../../etc/passwd", "ABCDEF0123456789", ""]:
        assert lazy.get(fact_id) == loaded.get(fact_id), fact_id
        assert (fact_id in lazy) == (fact_id in loaded)
    assert lazy.get(ids[0]).body != "hijacked"
    assert dict(lazy.items()) == loaded and len(lazy) == len(loaded)
