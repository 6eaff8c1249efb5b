"""Facts written by an earlier release load and are written back byte for byte: the typed
metadata (invalidation, possible-supersession links, citations, proposals, evidence) reads what
is on the ref and in the scope files and writes the same JSON."""
from __future__ import annotations

from pathlib import Path

import pytest

from neo_git.facts import canonical_json, fact_from_json
from neo_git.store import Change
from neo_git.store.filestore import FileStore

DATA = Path(__file__).parent / "data"
BLOBS = sorted((DATA / "facts_0_1").glob("*.json"))


def test_the_fixture_covers_every_typed_field():
    text = "".join(path.read_text(encoding="utf-8") for path in BLOBS)
    for key in ('"invalidation": {', '"undo"', '"possibly_supersedes"', '"restored": true', '"distinct_from"',
                '"judge"', '"evidence"', '"citations"', '"span"', '"symbol"', '"moved_from"', '"weighed"',
                '"proposal": "open"', '"paths"', '"similarity": null'):
        assert key in text, key


@pytest.mark.parametrize("path", BLOBS, ids=lambda p: p.stem)
def test_a_stored_fact_loads_and_is_written_back_unchanged(path):
    blob = path.read_bytes()
    fact = fact_from_json(blob, str(path))
    assert canonical_json(fact) == blob
    assert canonical_json(fact_from_json(canonical_json(fact))) == blob


def test_a_scope_file_is_rewritten_unchanged(tmp_path):
    path = tmp_path / "session.json"
    original = (DATA / "session_0_1.json").read_bytes()
    path.write_bytes(original)
    store = FileStore(path)
    facts = store.load().facts
    assert len(facts) == 3
    store.transact(lambda current: Change(tuple(current.values()), "rewrite every fact"))
    assert path.read_bytes() == original
