"""`Subtree.spliced` (a folder that changed since the parse cache, its unchanged facts kept as
cached bytes) holds exactly what parsing the new folder from scratch holds: the same facts in
tree order, the same blob entries and warnings, the same rows, and bytes that decode to them."""
from __future__ import annotations

import hashlib

import pygit2
from hypothesis import given, settings, strategies as st

from neo_git.facts import Fact
from neo_git.store.subtree import Subtree

FOLDER = "ab"


def _fact(n: int, version: int) -> Fact:
    return Fact.from_dict({"id": f"{FOLDER}{n:014x}", "subject": f"rule {n}", "body": f"body {n} v{version}",
                           "kind": "decision", "scope": "project",
                           "metadata": {"confidence": 0.5 + (n % 5) / 10, "success_count": version}})


def _oid(text: str) -> pygit2.Oid:
    return pygit2.Oid(raw=hashlib.sha1(text.encode()).digest())


def _entries(state: dict[int, int | None]) -> dict[str, tuple]:
    """Blob entries in tree order: fact n at its version, or a blob that is not a fact (None)."""
    entries = {}
    for n in sorted(state):
        version = state[n]
        name = f"{FOLDER}{n:014x}.json"
        if version is None:
            entries[name] = (_oid(f"junk {n}"), None, f"facts/{FOLDER}/{name}: not JSON; skipped")
        else:
            entries[name] = (_oid(f"{n} {version}"), _fact(n, version), None)
    return entries


def _lazy(subtree: Subtree) -> Subtree:
    """*subtree* as the parse cache gives it back."""
    rows, data, skipped = subtree.encoded()
    return Subtree.lazy(subtree.oid, rows, memoryview(bytes(data)), skipped)


STATES = st.dictionaries(st.integers(0, 40), st.one_of(st.none(), st.integers(0, 3)), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(before=STATES, after=STATES)
def test_a_spliced_folder_equals_the_folder_parsed_anew(before, after):
    previous = _lazy(Subtree.of(_oid("before"), _entries(before)))
    fresh = Subtree.of(_oid("after"), _entries(after))
    earlier = previous.entries()
    items = []
    for name, (oid, fact, warning) in fresh.blobs.items():
        seen = earlier.get(name)
        if seen is not None and seen[0] == oid.raw:
            items.append(("row", seen[1]) if seen[1] is not None else ("skip", name, oid, seen[2]))
        elif fact is not None:
            items.append(("fact", name, oid, fact))
        else:
            items.append(("skip", name, oid, warning))
    spliced = Subtree.spliced(fresh.oid, previous, items)

    assert spliced.is_lazy and len(spliced) == len(fresh)
    assert spliced.fact_ids() == list(fresh.facts)
    assert spliced.blob_ids() == {name: oid.raw for name, (oid, _, _) in fresh.blobs.items()}
    for column in fresh.rows().dtype.names:   # offsets and lengths say where the bytes are
        if column not in ("offset", "length"):
            assert spliced.rows()[column].tobytes() == fresh.rows()[column].tobytes(), column
    assert spliced.facts == fresh.facts and spliced.warnings == fresh.warnings
    assert spliced.blobs == fresh.blobs
    again = _lazy(spliced)                 # what the journal keeps reads back the same
    assert again.facts == fresh.facts and again.blobs == fresh.blobs
