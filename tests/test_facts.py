"""The fact model: canonical JSON, validation of untrusted input, what the ref stores."""
from __future__ import annotations

import json

import pytest

from neo_git.errors import InvalidFact
from neo_git.facts import Fact, FactKind, FactMetadata, FactScope, canonical_json, fact_from_json
from tests.helpers.store import open_store, show_blob


def _full_fact() -> Fact:
    return Fact(
        id="0123456789abcdef", subject="Café ☕ layer order", body="Copy requirements first.\nThen the code.",
        kind=FactKind.PATTERN, scope=FactScope.PROJECT, org_id="acme", project_id="feedfacefeedface",
        is_valid=False, superseded_by="fedcba9876543210", supersedes="00000000000000aa",
        depends_on=("1111111111111111", "2222222222222222"), needs_review=True, tags=("docker", "seed"),
        metadata=FactMetadata(created_at="2025-01-02T03:04:05+00:00", last_accessed="2025-02-01T00:00:00+00:00",
                              access_count=3, source_file="Dockerfile", source_prompt="why slow?",
                              confidence=0.75, success_count=2, provenance="inferred", author="Ada <a@x>",
                              invalidation={"reason": "superseded", "by": "fedcba9876543210"}),
    )


def test_canonical_json_round_trips_bytes_identically():
    fact = _full_fact()
    data = canonical_json(fact)
    again = fact_from_json(data)
    assert again == fact
    assert canonical_json(again) == data


def test_canonical_json_sorted_keys_utf8_and_trailing_newline():
    data = canonical_json(_full_fact())
    assert data.endswith(b"}\n") and not data.endswith(b"\n\n")
    text = data.decode("utf-8")
    assert "Café ☕" in text  # UTF-8, not \u escapes
    parsed = json.loads(text)
    assert list(parsed) == sorted(parsed)
    assert list(parsed["metadata"]) == sorted(parsed["metadata"])
    # Key order of the input does not matter: same fact, same bytes.
    shuffled = dict(reversed(list(parsed.items())))
    assert canonical_json(Fact.from_dict(shuffled)) == data


def test_to_dict_is_exactly_the_blob_on_the_ref(repo_with_commit):
    store = open_store(repo_with_commit)
    fact = store.add("Docker layer caching order", "Copy the lock file before the sources.",
                     kind="pattern", tags=("docker",), confidence=0.7)
    blob = show_blob(repo_with_commit, fact.id)
    assert json.loads(blob) == fact.to_dict()
    assert blob.encode("utf-8") == canonical_json(fact)
    assert store.get(fact.id) == fact


@pytest.mark.parametrize("change, fragment", [
    ({"kind": "opinion"}, "invalid kind"),
    ({"scope": "team"}, "invalid scope"),
    ({"subject": "   "}, "subject is empty"),
    ({"subject": "x" * 201}, "subject is too long"),
    ({"body": "x" * 20_000}, "body is too long"),
    ({"subject": "caf\udce9"}, "not valid UTF-8"),
    ({"id": "XYZ"}, "invalid id"),
    ({"superseded_by": "123"}, "invalid superseded_by"),
    ({"depends_on": ["nothex"]}, "invalid depends_on id"),
    ({"tags": ["has space"]}, "invalid tag"),
    ({"metadata": {"confidence": 1.5}}, "confidence must be between"),
    ({"metadata": {"confidence": "high"}}, "confidence must be a number"),
    ({"metadata": {"provenance": "rumour"}}, "invalid provenance"),
    ({"subject": 42}, "subject must be text"),
    ({"is_valid": "false"}, "is_valid must be true or false"),   # bool("false") would be True
    ({"needs_review": 1}, "needs_review must be true or false"),
    ({"metadata": {"invalidation": {"similarity": "high"}}}, "invalidation.similarity must be a number"),
])
def test_from_dict_rejects_bad_input_with_a_clear_message(change, fragment):
    raw = {**_full_fact().to_dict(), **change}
    with pytest.raises(InvalidFact) as info:
        Fact.from_dict(raw)
    assert fragment in info.value.message


def test_invalid_kind_and_scope_list_the_valid_ones():
    with pytest.raises(InvalidFact) as info:
        Fact.from_dict({**_full_fact().to_dict(), "kind": "opinion"})
    assert "constraint" in info.value.hint and "known_unknown" in info.value.hint


def test_fact_from_json_names_the_origin_on_bad_json():
    with pytest.raises(InvalidFact) as info:
        fact_from_json(b"{not json", origin="refs/neo/facts:facts/ab/x.json")
    assert info.value.message.startswith("refs/neo/facts:facts/ab/x.json: not valid JSON")
    with pytest.raises(InvalidFact):
        fact_from_json(b"\xff\xfe", origin="x")
    with pytest.raises(InvalidFact):
        fact_from_json(b"[1, 2]", origin="x")


def test_tokens_and_protection():
    fact = _full_fact()
    assert fact.tokens == (len(fact.subject) + len(fact.body) + 1) // 4
    assert fact.is_protected  # tagged seed
    plain = fact.evolve(tags=(), kind=FactKind.DECISION)
    assert not plain.is_protected
    assert plain.evolve(kind=FactKind.CONSTRAINT).is_protected


def test_missing_or_null_flags_take_their_defaults():
    raw = {"id": "0123456789abcdef", "subject": "s", "kind": "pattern", "scope": "project"}
    assert Fact.from_dict(raw).is_valid is True
    assert Fact.from_dict({**raw, "is_valid": None, "needs_review": None}).is_valid is True
    assert Fact.from_dict({**raw, "is_valid": False}).is_valid is False
