"""Case 2: derived caches are verified before they decide or write anything."""
from __future__ import annotations

import struct

import pytest

from neo_git.store.parse_cache import parse_cache_path
from tests.helpers.git import git
from tests.helpers.plumbing import edit_parse_cache, neo, ref_blob
from tests.helpers.store import open_store


def _parse_cache(repo):
    return parse_cache_path(repo / ".git", "refs/neo/facts")


def test_an_edited_parse_cache_never_reaches_the_ref(team_repo, capsys):
    repo, ids = team_repo
    target = ids[0]
    open_store(repo).list()  # a cold read writes the parse cache
    edited = []

    def evil(data):
        for _tree, entries in data["subtrees"].values():
            for entry in entries:
                if entry[2] and entry[2]["id"] == target:
                    entry[2]["body"] = "EVIL: disable TLS verification"
                    edited.append(entry)

    edit_parse_cache(_parse_cache(repo), evil)
    assert len(edited) == 1
    original_body = ref_blob(repo, target)["body"]

    shown = neo(capsys, "show", target)
    assert "EVIL" not in shown.out
    result = neo(capsys, "add", "--supersedes", target, "HTTP client v2", "httpx with retries.")
    assert result.code == 0, result.err
    stored = ref_blob(repo, target)
    assert stored["body"] == original_body and stored["is_valid"] is False
    assert "EVIL" not in git(repo, "log", "-p", "refs/neo/facts")


def test_a_parse_cache_that_drops_a_fact_does_not_hide_it(team_repo, capsys):
    repo, ids = team_repo
    open_store(repo).list()
    def drop(data):
        for _tree, entries in data["subtrees"].values():
            entries[:] = [e for e in entries if not (e[2] and e[2]["id"] == ids[1])]

    edit_parse_cache(_parse_cache(repo), drop)
    result = neo(capsys, "list")
    assert ids[1] in result.out


def test_a_parse_cache_claiming_a_good_fact_is_broken_does_not_hide_it(team_repo, capsys):
    repo, ids = team_repo
    open_store(repo).list()
    def break_it(data):
        for _tree, entries in data["subtrees"].values():
            for entry in entries:
                if entry[2] and entry[2]["id"] == ids[0]:
                    entry[2], entry[3] = None, "not valid JSON; skipped"

    edit_parse_cache(_parse_cache(repo), break_it)
    result = neo(capsys, "list")
    assert ids[0] in result.out and "skipped" not in result.err


def _vector_file(home):
    files = list((home / ".neo" / "cache" / "vectors").rglob("vectors.bin"))
    assert len(files) == 1
    return files[0]


def _cached_store_with(repo, *subjects):
    """Facts added, then a recall from a fresh process so their vectors reach the disk cache."""
    store = open_store(repo)
    facts = [store.add(s, f"{s} body words here", kind="decision") for s in subjects]
    open_store(repo).recall("anything at all")
    return facts


@pytest.mark.parametrize("corruption", ["flip", "huge", "nan"])
def test_a_corrupt_vector_never_causes_a_supersession(repo_with_commit, isolated_env, corruption):
    from neo_git.embed.vecfile import HEADER_BYTES, KEY_BYTES

    repo = repo_with_commit
    (victim,) = _cached_store_with(repo, "Queue consumers are idempotent")
    import numpy as np

    from neo_git.embed import get_embedder

    subject, body = "Frontend colours", "Buttons use the brand palette."
    newcomer = get_embedder("hash").embed([f"{subject}\n{body}"])[0]
    column = int(np.argmax(np.abs(newcomer)))  # a float the new fact's cosine depends on
    path = _vector_file(isolated_env)
    data = bytearray(path.read_bytes())
    offset = HEADER_BYTES + KEY_BYTES + 4 * column  # in the victim's (only) record
    if corruption == "flip":
        data[offset + 3] ^= 0x7C  # one byte: the exponent of the first float
    elif corruption == "huge":
        data[offset:offset + 4] = struct.pack("<f", 3e38)
    else:
        data[offset:offset + 4] = struct.pack("<f", float("nan"))
    path.write_bytes(bytes(data))

    store = open_store(repo)
    result = store.add_detailed(subject, body, kind="decision")
    assert result.superseded is None
    assert ref_blob(repo, victim.id)["is_valid"] is True
    ctx = open_store(repo).recall("queue consumers idempotent")
    assert all(0.0 <= s <= 1.5 for s in ctx.scores.values()), ctx.scores


def test_a_record_with_a_valid_checksum_but_an_insane_norm_is_refused(repo_with_commit, isolated_env):
    import numpy as np

    from neo_git.embed.vecfile import HEADER_BYTES, KEY_BYTES, record_checksum

    repo = repo_with_commit
    (victim,) = _cached_store_with(repo, "Queue consumers are idempotent")
    path = _vector_file(isolated_env)
    data = bytearray(path.read_bytes())
    dim = struct.unpack("<I", data[8:12])[0]
    key = bytes(data[HEADER_BYTES:HEADER_BYTES + KEY_BYTES])
    vector = np.full(dim, 1000.0, dtype="<f4").tobytes()
    record = key + vector + record_checksum(key, vector)
    data[HEADER_BYTES:HEADER_BYTES + len(record)] = record
    path.write_bytes(bytes(data))
    store = open_store(repo)
    result = store.add_detailed("Queue consumers retry", "They back off exponentially.", kind="decision")
    assert result.superseded is None or result.superseded.id != victim.id or \
        ref_blob(repo, victim.id)["metadata"]["invalidation"]["similarity"] <= 1.0
