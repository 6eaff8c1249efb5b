"""The first add of a process builds its write index from the parse cache's rows (`row_index`):
only the group of its scope and kind, decoding only the facts it compares text with. It must
decide exactly as a process that loaded every fact does."""
from __future__ import annotations

import random
import shutil

import pytest

from tests.helpers.store import open_store, random_word

SUBJECTS = ["HTTP client", "Retry policy", "Cache layer", "Queue consumers", "Deploy window"]


def _populate(repo, rng: random.Random):
    store = open_store(repo, project=10**6)
    base = store.add("HTTP client", "We use httpx with a 10 s timeout.", kind="decision")
    store.add("Retry", "tenacity around httpx, three attempts.", kind="decision", depends_on=[base.id])
    items = []
    for i in range(300):
        subject = rng.choice(SUBJECTS) + f" {random_word(rng, 5)}" if i % 3 else rng.choice(SUBJECTS)
        items.append({"subject": subject, "body": " ".join(random_word(rng, 4) for _ in range(rng.randint(3, 12))),
                      "kind": rng.choice(["decision", "pattern", "constraint"])})
    store.add_many(items)
    open_store(repo).recall("warm the parse cache and the vectors")
    return base


def _decision(result, rename: dict | None = None) -> dict:
    """What an add decided, without the new fact's random id and the time; ids in *rename*
    (facts added during the test, whose random ids differ between the two stores) renamed."""
    import json

    if rename:
        text = json.dumps(_decision(result), sort_keys=True)
        for old, new in rename.items():
            text = text.replace(old, new)
        renamed = json.loads(text)
        renamed["possibly_supersedes"].sort(key=lambda link: link["id"])  # sorted by id: the ids changed
        return renamed
    data = result.to_dict()
    data.pop("id")
    old = None
    if result.superseded is not None:
        old = result.superseded.to_dict()
        old.pop("superseded_by")
        for key in ("by", "at"):
            old["metadata"]["invalidation"].pop(key)
    return {**data, "superseded": old, "kept": result.fact.id if result.duplicate else None}


NEW = [("HTTP client", "All outbound HTTP goes through httpx, timeout 30 s.", "decision"),   # rule 2
       ("http  CLIENT", "we use HTTPX with a 10 s timeout.", "decision"),                   # not a duplicate: subject differs
       ("HTTP client", "We use httpx with a 10 s timeout.", "decision"),                    # a duplicate
       ("Cache layer", "brand new words entirely", "pattern"),
       ("Deploy window", "Deploys happen on Tuesdays", "constraint")]


@pytest.mark.parametrize("subject,body,kind", NEW)
def test_the_first_add_of_a_process_decides_as_a_loaded_store(repo_with_commit, tmp_path, subject, body, kind):
    _populate(repo_with_commit, random.Random(5))
    twin = tmp_path / "twin"
    shutil.copytree(repo_with_commit, twin, symlinks=True)
    cold = open_store(repo_with_commit, project=10**6)
    got = cold.add_detailed(subject, body, kind=kind)
    loaded = open_store(twin, project=10**6)
    loaded.list(include_invalid=True)              # every fact in memory: the index is built from them
    expected = loaded.add_detailed(subject, body, kind=kind)
    assert _decision(got) == _decision(expected)
    decoded = sum(len(sub._decoded) for sub in cold.project_store._subtrees.values() if sub.is_lazy)
    assert decoded < 60, decoded                   # of ~300: what it compared text with, no more


def test_adds_after_the_first_follow_the_moved_tip(repo_with_commit, tmp_path):
    _populate(repo_with_commit, random.Random(6))
    twin = tmp_path / "twin"
    shutil.copytree(repo_with_commit, twin, symlinks=True)
    cold, loaded = open_store(repo_with_commit, project=10**6), open_store(twin, project=10**6)
    loaded.list(include_invalid=True)
    rng = random.Random(7)
    rename: dict[str, str] = {}   # the cold store's new ids -> the twin's
    for step in range(12):
        subject = rng.choice(SUBJECTS) if step % 2 else f"{rng.choice(SUBJECTS)} {random_word(rng, 5)}"
        body = " ".join(random_word(rng, 4) for _ in range(4))
        kind = rng.choice(["decision", "pattern"])
        supersedes = None
        if step == 5:  # an explicit supersession of a fact both stores hold, valid
            supersedes = next(f.id for f in loaded.list() if f.id in {g.id for g in cold.list()} and f.kind.value == kind)
        got = cold.add_detailed(subject, body, kind=kind, supersedes=supersedes)
        expected = loaded.add_detailed(subject, body, kind=kind, supersedes=supersedes)
        assert _decision(got, rename) == _decision(expected), step
        rename[got.fact.id] = expected.fact.id
    assert {f.subject for f in cold.list(include_invalid=True)} == {f.subject for f in loaded.list(include_invalid=True)}


def _decoded(store) -> int:
    return sum(len(sub._decoded) for sub in store.project_store._subtrees.values() if sub.is_lazy)


def test_a_first_supersedes_by_prefix_decodes_what_it_touches_not_the_store(repo_with_commit):
    """Issue 35: resolving the id of `--supersedes` loaded (decoded) every stored fact."""
    _populate(repo_with_commit, random.Random(8))
    base = next(f for f in open_store(repo_with_commit).list() if f.kind.value == "decision")
    cold = open_store(repo_with_commit, project=10**6)
    got = cold.add_detailed("HTTP client v2", "All outbound HTTP goes through httpx2 now.", kind="decision",
                            supersedes=base.id[:7])
    assert got.superseded is not None and got.superseded.id == base.id
    assert cold.project_store._loaded_tip is None   # no full load of the ref happened
    assert _decoded(cold) < 60
    with pytest.raises(Exception, match="no fact"):
        open_store(repo_with_commit, project=10**6).add("x", "y", supersedes="ffffffffffff")


def test_an_add_at_the_cap_ranks_only_valid_facts_never_decodes_the_retired(repo_with_commit):
    """Issue 35: `_apply_cap` decoded every stored fact, retired ones included."""
    store = open_store(repo_with_commit, project=10**6)
    facts = store.add_many([{"subject": f"note {random_word(random.Random(i), 6)} {i}",
                             "body": f"{random_word(random.Random(i + 999), 7)} body {i}"} for i in range(240)])
    for fact in facts[40:]:
        store.invalidate(fact.id, "retired for the test")
    open_store(repo_with_commit).recall("warm the parse cache")
    cold = open_store(repo_with_commit, project=40)
    result = cold.add_detailed("one more note", "pushes the scope over its cap of 40")
    assert len(result.evicted) == 1 and result.evicted[0] in {f.id for f in facts[:40]}
    assert _decoded(cold) <= 45, _decoded(cold)    # the 40 valid facts it ranked, not the 200 retired
