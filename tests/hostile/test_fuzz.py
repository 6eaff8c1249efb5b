"""Case 10: random JSON values and random bytes as fact blobs, session/global files and import
files. The only outcomes allowed: success, a warning with the fact skipped, or exit 1 with
`fatal:` — never exit 3, never a changed good fact."""
from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.helpers.git import git
from tests.helpers.plumbing import fact_dict, neo, push_files

HOSTILE_ID = "ab00000000000001"
SETTINGS = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

scalars = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
           | st.floats(allow_nan=False) | st.text(max_size=40))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=12)
FIELDS = ("id", "subject", "body", "kind", "scope", "is_valid", "superseded_by", "supersedes", "depends_on",
          "needs_review", "tags", "metadata", "org_id")
INVALIDATION_KEYS = ("reason", "at", "by", "similarity", "threshold", "embedder", "explicit", "detail")
META_FIELDS = ("confidence", "access_count", "created_at", "author", "invalidation", "provenance")


@st.composite
def fact_shaped(draw):
    """A valid fact with a few fields replaced by random JSON: the interesting near-misses."""
    fact = fact_dict(HOSTILE_ID, "fuzzed fact")
    for name in draw(st.lists(st.sampled_from(FIELDS), max_size=3, unique=True)):
        fact[name] = draw(json_values)
    if isinstance(fact.get("metadata"), dict):
        for name in draw(st.lists(st.sampled_from(META_FIELDS), max_size=2, unique=True)):
            fact["metadata"][name] = draw(json_values)
        if draw(st.booleans()):  # what `why` explains: known keys, random plain values
            fact["is_valid"], fact["superseded_by"] = False, draw(st.sampled_from([None, "ab00000000000002"]))
            fact["metadata"]["invalidation"] = draw(st.dictionaries(st.sampled_from(INVALIDATION_KEYS), scalars))
    return fact


def as_bytes(value) -> bytes:
    if isinstance(value, bytes):
        return value
    return json.dumps(value).encode("utf-8")


payloads = st.binary(max_size=300) | json_values | fact_shaped()


def _allowed(result, what):
    assert result.code in (0, 1), (what, result)
    if result.code == 1:
        assert result.err.startswith("fatal: ") or "\nfatal: " in result.err, (what, result.err)


def _good_blobs_unchanged(repo, good):
    for fact_id, blob in good.items():
        assert git(repo, "show", f"refs/neo/facts:facts/{fact_id[:2]}/{fact_id}.json") == blob


@given(payload=payloads)
@SETTINGS
def test_fuzzed_fact_blobs(team_repo, good_blobs, capsys, payload):
    repo, ids = team_repo
    tip = git(repo, "rev-parse", "refs/neo/facts").strip()
    try:
        push_files(repo, {f"facts/ab/{HOSTILE_ID}.json": as_bytes(payload)})
        for argv in (["list", "--all"], ["recall", "fuzzed fact"], ["why", HOSTILE_ID], ["doctor"]):
            _allowed(neo(capsys, *argv), argv)
        _good_blobs_unchanged(repo, good_blobs)
    finally:
        git(repo, "update-ref", "refs/neo/facts", tip)


@pytest.mark.parametrize("target", ["session", "global"])
@given(payload=payloads | st.builds(lambda facts: {"version": "2.0", "facts": facts}, st.lists(payloads, max_size=3)))
@SETTINGS
def test_fuzzed_fact_files(team_repo, good_blobs, isolated_env, capsys, target, payload):
    repo, _ = team_repo
    folder = repo / ".git" / "neo" if target == "session" else isolated_env / ".neo" / "facts"
    name = "session.json" if target == "session" else "facts_global.json"
    folder.mkdir(parents=True, exist_ok=True)
    data = as_bytes(payload if not isinstance(payload, dict) or "version" not in payload
                    else {**payload, "facts": [p if not isinstance(p, bytes) else p.decode("latin-1")
                                               for p in payload["facts"]]})
    try:
        (folder / name).write_bytes(data)
        for argv in (["list", "--all"], ["recall", "anything"],
                     ["add", "--scope", target, "A new fact", "with a body"]):
            _allowed(neo(capsys, *argv), argv)
        _good_blobs_unchanged(repo, good_blobs)
    finally:
        for leftover in folder.glob(f"{name}*"):
            leftover.unlink() if leftover.is_file() else shutil.rmtree(leftover)


@given(payload=payloads | st.builds(lambda facts: {"version": "2.0", "facts": facts}, st.lists(fact_shaped(), max_size=3)))
@SETTINGS
def test_fuzzed_import_files(team_repo, good_blobs, tmp_path_factory, capsys, payload):
    repo, _ = team_repo
    path = tmp_path_factory.mktemp("imports") / "facts.json"
    path.write_bytes(as_bytes(payload))
    _allowed(neo(capsys, "import", str(path)), "import")
    _good_blobs_unchanged(repo, good_blobs)
