"""Facts written by an earlier release load and are written back byte for byte: the typed
metadata (invalidation, possible-supersession links, citations, proposals, evidence) reads what
is on the ref and in the scope files and writes the same JSON."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from neo_git.fact_schema import Citation, Invalidation, JudgeVerdict, PossibleLink
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


def test_an_invalidation_keeps_what_this_release_does_not_know_as_it_was_read():
    """A teammate's newer release (or a hand edit) may write keys this one does not know, or a
    known key with a value of another type: read leniently, written back as they were."""
    stored = {"reason": "superseded", "at": None, "explicit": 1, "similarity": 1, "threshold": 0.5,
              "evidence": ["reference", 7], "future": {"x": [1, None]},
              "undo": {"confidence": 0.5, "carried": True, "flagged": ["a" * 16, 3], "later": "kept",
                       "possible": {"id": "b" * 16, "similarity": 1}}}
    invalidation = Invalidation.from_json(stored)
    assert invalidation.reason == "superseded" and invalidation.similarity == 1 and invalidation.at is None
    assert invalidation.explicit is None and invalidation.evidence is None     # not of their type: kept as read
    assert invalidation.undo is not None and invalidation.undo.confidence == 0.5 and invalidation.undo.possible is None
    assert invalidation.to_json() == stored
    assert json.dumps(invalidation.to_json(), sort_keys=True) == json.dumps(stored, sort_keys=True)


def test_the_typed_values_say_what_the_json_said():
    facts = {path.stem: fact_from_json(path.read_bytes()) for path in BLOBS}
    odd = facts["a000000000000007"].metadata
    assert isinstance(odd.invalidation, Invalidation) and odd.invalidation.evidence == ("reference", "change")
    assert odd.invalidation.undo is not None and odd.invalidation.undo.flagged == ("a000000000000009",)
    assert isinstance(odd.invalidation.undo.possible, PossibleLink) and odd.invalidation.undo.possible.evidence == ("change",)
    assert odd.invalidation.other == {"newer_key": {"nested": [1, 2, {"x": None}]}}
    restored, plain = odd.possibly_supersedes
    assert restored.restored and restored.judge == JudgeVerdict("updated") and restored.evidence[-1] == "future_name"
    assert plain == PossibleLink("a00000000000000b") and odd.distinct_from == ("a00000000000000c", "a00000000000000d")
    assert odd.proposal == "open"
    moved, gone, changed, unknown, bare = facts["a000000000000001"].metadata.citations
    assert all(isinstance(c, Citation) for c in (moved, gone, changed, unknown, bare))
    assert (moved.state, moved.label, moved.key, moved.moved_from) == (
        "moved", "srv/app.py:Server.start", "srv/app.py:Server.start", "app.py:Server.start")
    assert gone.span == (1, 2) and gone.weighed == gone.since and changed.cited == "" and changed.key == "docs/x.md"
    assert bare == Citation("docs/z.md")
    synthesized = facts["a000000000000003"].metadata.invalidation
    assert synthesized is not None and synthesized.embedder is None and synthesized.nulls == frozenset({"embedder"})
