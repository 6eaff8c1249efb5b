"""The parse cache (`.git/neo/cache/facts-*.bin`) gives a cold process exactly the facts a
full read of the ref gives, and a damaged cache is ignored, never trusted."""
from __future__ import annotations

import random

from neo_git.facts import fact_from_json
from neo_git.store.parse_cache import decode, encode, parse_cache_path
from neo_git.store.refstore import RefStore
from tests.helpers.git import git
from tests.helpers.store import (
    cold_facts,
    distinct_text,
    open_store,
    populated_store,
    ref_fact_ids,
    show_blob,
)


def test_a_cold_read_from_the_cache_equals_parsing_every_blob(repo_with_commit):
    store = populated_store(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    assert path.exists()
    cold = cold_facts(store)
    parsed = {i: fact_from_json(show_blob(repo_with_commit, i)) for i in ref_fact_ids(repo_with_commit)}
    assert cold == parsed
    for fact in cold.values():  # real objects: frozen, hashable, with working properties
        assert fact.metadata == parsed[fact.id].metadata and fact.tokens == parsed[fact.id].tokens
        assert hash(fact.depends_on) == hash(parsed[fact.id].depends_on)
    assert any(not f.is_valid and f.metadata.invalidation.reason == "superseded" for f in cold.values())


def test_a_damaged_cache_entry_is_ignored(repo_with_commit):
    store = populated_store(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    seal, _, body = path.read_bytes().partition(b"\n")  # the first line seals the data below it
    data = decode(body)
    entries = next(iter(data["subtrees"].values()))[1]
    entries[0][2]["subject"] = "damaged"   # a well-formed entry the seal does not cover
    path.write_bytes(seal + b"\n" + encode(data))
    cold = cold_facts(store)
    assert cold == store.project_store.load().facts
    assert len(cold) == len(ref_fact_ids(repo_with_commit)) == len(git(
        repo_with_commit, "ls-tree", "-r", "--name-only", "refs/neo/facts").split()) - 1  # meta.json


def test_encoded_facts_edited_under_their_sealed_header_are_read_from_git(repo_with_commit):
    """The seal covers the header (rows, and each subtree's sha256); the encoded facts are read
    when first decoded. Bytes edited there, the seal line and header kept, fail their sha256: the
    facts of that folder come from their blobs, and the doctor's check counts them."""
    from neo_git.store.parse_journal import untrusted_entries

    store = populated_store(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    raw = path.read_bytes()
    assert raw.count(b"10 s timeout") == 1
    path.write_bytes(raw.replace(b"10 s timeout", b"99 s timeout"))
    cold = cold_facts(store)
    parsed = {i: fact_from_json(show_blob(repo_with_commit, i)) for i in ref_fact_ids(repo_with_commit)}
    assert cold == parsed and not any("99 s" in f.body for f in cold.values())
    total, bad = untrusted_entries(path, "refs/neo/facts")
    assert total >= len(parsed) and bad >= 1


def test_a_cold_reader_reads_the_encoded_facts_of_the_folders_it_decodes_only(repo_with_commit, monkeypatch):
    """Opening the cache reads the header; the encoded facts of a folder are read (and checked)
    when one of its facts is first decoded, and of that folder only."""
    from neo_git.store import subtree
    from neo_git.store.parse_journal import journal_path

    store = populated_store(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    path.unlink()
    journal_path(path).unlink(missing_ok=True)
    cold_facts(store)                      # a new cache, written whole (no journal)
    reads: list[object] = []
    original = subtree.CachedBytes._read

    def counted(self):
        reads.append(self)
        return original(self)

    monkeypatch.setattr(subtree.CachedBytes, "_read", counted)
    backend = store.project_store
    table, _warnings = RefStore(backend.repo, backend.common_dir, backend.signature).table()
    folders = {fact_id[:2] for fact_id in ref_fact_ids(repo_with_commit)}
    assert len(table) > 40 and len(reads) <= 1   # the pointer check decodes the fact with depends_on
    facts = list(table)
    # Each folder's bytes (its valid facts', and its retired facts' if it has any) read once.
    assert len({id(part) for part in reads}) == len(reads) and len(folders) <= len(reads) <= 2 * len(folders)
    assert {f.id: f for f in facts} == {i: fact_from_json(show_blob(repo_with_commit, i))
                                        for i in ref_fact_ids(repo_with_commit)}


def test_a_cache_replaced_after_its_header_was_read_yields_the_facts_of_git(repo_with_commit, monkeypatch):
    """Another process may rewrite the cache between a reader's look at its header and its first
    decode: that file's bytes are never read as the first one's; the facts come from git."""
    from neo_git.store.parse_journal import journal_path

    from_blobs: list[str] = []
    original = RefStore._cached_blob_fact
    monkeypatch.setattr(RefStore, "_cached_blob_fact",
                        lambda self, fact_id, blob: from_blobs.append(fact_id) or original(self, fact_id, blob))

    store = populated_store(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    path.unlink()
    journal_path(path).unlink(missing_ok=True)
    cold_facts(store)                      # a new cache, written whole (no journal)
    backend = store.project_store
    table, _warnings = RefStore(backend.repo, backend.common_dir, backend.signature).table()
    replacement = path.with_name("replacement")
    replacement.write_bytes(path.read_bytes())
    replacement.replace(path)               # same bytes, another file (as an atomic rewrite leaves it)
    facts = list(table)
    parsed = {i: fact_from_json(show_blob(repo_with_commit, i)) for i in ref_fact_ids(repo_with_commit)}
    assert {f.id: f for f in facts} == parsed and len(from_blobs) >= len(parsed) // 2   # (one folder read before)


def test_an_entry_without_the_fields_of_a_fact_is_refused():
    """Even under a valid seal (say, written by another version of git-neo with the same format
    string) a form of another shape never becomes a fact."""
    import marshal

    import pytest

    from neo_git.store.subtree import FACT_FIELDS, decode_fact, encode_fact

    fact = fact_from_json(b'{"id": "0123456789abcdef", "subject": "s", "kind": "pattern", "scope": "project"}')
    assert decode_fact(encode_fact(fact)) == fact
    for broken in (marshal.dumps(tuple(range(len(FACT_FIELDS) - 1))), marshal.dumps({"id": fact.id})):
        with pytest.raises(KeyError):
            decode_fact(broken)


def test_each_python_keeps_its_own_cache_and_the_json_of_earlier_versions_goes(repo_with_commit):
    """marshal's format may change between Python versions: a hook run by another Python (say,
    pre-commit's environment) must not rewrite, and so slow down, the cache of this one."""
    import sys

    store = open_store(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    assert sys.implementation.cache_tag in path.name
    legacy = path.with_name("facts-refs_neo_facts.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    legacy.write_text('{"format": "3:old"}')
    populated_store(repo_with_commit)
    path.unlink()
    assert cold_facts(store)  # a cold read of the whole ref writes the cache again
    assert path.exists() and not legacy.exists()


def _counting_reads(monkeypatch) -> list[str]:
    """Record every subtree a RefStore parses from git (instead of taking it from the cache)."""
    read: list[str] = []
    original = RefStore._read_subtree

    def counted(self, entry, previous):
        read.append(entry.name)
        return original(self, entry, previous)

    monkeypatch.setattr(RefStore, "_read_subtree", counted)
    return read


def test_a_moved_tip_is_journalled_not_rewritten(repo_with_commit, monkeypatch):
    """Facts arriving from elsewhere (another process, a sync) cost the next cold reader the
    changed subtrees, once: it appends them to the journal instead of rewriting the cache."""
    from neo_git.store.parse_journal import journal_path

    store = populated_store(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    cold_facts(store)
    base = path.read_bytes()
    rng = random.Random(9)
    other = open_store(repo_with_commit)           # another process: its own view of the ref
    new = [other.add(*distinct_text(rng)).id for _ in range(3)]
    journal = journal_path(path)
    before = journal.stat().st_size if journal.exists() else 0
    read = _counting_reads(monkeypatch)
    cold = cold_facts(store)                       # reads the 3 changed subtrees from git ...
    assert sorted(read) == sorted({i[:2] for i in new})
    assert path.read_bytes() == base and journal.stat().st_size > before   # ... and journals them
    read.clear()
    again = cold_facts(store)                      # the next cold reader reads nothing from git
    assert read == []
    parsed = {i: fact_from_json(show_blob(repo_with_commit, i)) for i in ref_fact_ids(repo_with_commit)}
    assert cold == again == parsed


def test_a_damaged_or_foreign_journal_is_ignored(repo_with_commit, monkeypatch):
    from neo_git.store.parse_journal import journal_path

    store = populated_store(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    cold_facts(store)
    rng = random.Random(10)
    other = open_store(repo_with_commit)
    changed = other.add(*distinct_text(rng))
    cold_facts(store)
    journal = journal_path(path)
    record = journal.read_bytes()
    header, _, body = record.partition(b"\n")
    forged = body.replace(changed.subject.encode(), b"EVIL" + changed.subject.encode()[4:])
    assert forged != body
    journal.write_bytes(header + b"\n" + forged)   # edited, seal kept: never applied
    read = _counting_reads(monkeypatch)
    cold = cold_facts(store)
    assert cold[changed.id].subject == changed.subject and changed.id[:2] in read
    assert all("EVIL" not in f.subject for f in cold.values())
    # A valid record written against another base is not applied either.
    journal.write_bytes(record)
    path.write_bytes(path.read_bytes())            # same base: the record applies
    read.clear()
    assert cold_facts(store)[changed.id] == cold[changed.id] and read == []
    cold_facts(store)
    from neo_git.store.parse_cache import write_parse_cache
    write_parse_cache(path, "refs/neo/facts", {})  # a new base (empty): the journal goes with the old one
    assert not journal.exists()
    journal.write_bytes(record)
    read.clear()
    assert cold_facts(store) == cold
    assert changed.id[:2] in read


def test_a_long_journal_is_folded_into_a_new_base(repo_with_commit, monkeypatch):
    import neo_git.store.parse_journal as parse_cache

    monkeypatch.setattr(parse_cache, "JOURNAL_MIN_BYTES", 0)   # a quarter of the base is the limit
    store = populated_store(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    cold_facts(store)
    rng = random.Random(11)
    for _ in range(30):
        open_store(repo_with_commit).add(*distinct_text(rng))
        cold_facts(store)
        assert parse_cache.journal_path(path).exists() or not path.read_bytes().startswith(b"neo-parse-journal")
    size = path.stat().st_size
    journal = parse_cache.journal_path(path)
    assert not journal.exists() or journal.stat().st_size <= size // 4
    parsed = {i: fact_from_json(show_blob(repo_with_commit, i)) for i in ref_fact_ids(repo_with_commit)}
    assert cold_facts(store) == parsed


def test_the_doctors_exact_check_covers_the_journal(repo_with_commit):
    from neo_git.store.parse_journal import journal_path, untrusted_entries

    store = populated_store(repo_with_commit)
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    cold_facts(store)
    open_store(repo_with_commit).add(*distinct_text(random.Random(12)))
    cold_facts(store)                                 # journals the new fact
    total, bad = untrusted_entries(path, "refs/neo/facts")
    assert bad == 0 and total > len(ref_fact_ids(repo_with_commit))   # base entries + journalled ones
    journal = journal_path(path)
    journal.write_bytes(journal.read_bytes().replace(b"neo-parse-journal:", b"neo-parse-journal:0", 1))
    assert untrusted_entries(path, "refs/neo/facts")[1] == 1


def _move_tip_behind_the_store(repo, puts: dict[str, bytes], removes: list[str]) -> None:
    """Commit on refs/neo/facts with pygit2, as a teammate's merge arrives: write *puts*
    (path -> blob bytes) and delete *removes* (paths)."""
    import pygit2

    git_repo = pygit2.Repository(str(repo))
    ref = git_repo.references["refs/neo/facts"]
    tip = git_repo[ref.target]
    index = pygit2.Index()
    index.read_tree(tip.tree)
    for path, data in puts.items():
        index.add(pygit2.IndexEntry(path, git_repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB))
    for path in removes:
        index.remove(path)
    who = pygit2.Signature("Teammate", "mate@example.com")
    ref.set_target(git_repo.create_commit(None, who, who, "teammate's facts", index.write_tree(git_repo), [tip.id]))


def test_a_cold_reader_keeps_the_cached_facts_of_a_changed_folder_as_they_are(repo_with_commit, monkeypatch):
    """When a sync changes one fact in a folder of many, the cold reader parses only the blobs
    that changed: the others keep their cached rows and bytes, undecoded (`Subtree.spliced`),
    and what it sees (and journals for the next reader) equals parsing every blob."""
    import json

    import neo_git.store.subtree as subtree

    store = populated_store(repo_with_commit)
    rng = random.Random(7)
    while True:  # ids are random: 43 facts leave every folder with one fact ~3% of the time
        by_folder: dict[str, list[str]] = {}
        for fact_id in sorted(ref_fact_ids(repo_with_commit)):
            by_folder.setdefault(fact_id[:2], []).append(fact_id)
        folder, ids = max(by_folder.items(), key=lambda item: len(item[1]))
        if len(ids) >= 3:
            break
        store.add(*distinct_text(rng))
    cold_facts(store)
    rewritten = json.loads(show_blob(repo_with_commit, ids[0]))
    rewritten["body"] = "rewritten by a teammate"
    newcomer = json.loads(show_blob(repo_with_commit, ids[-1]))
    newcomer["id"] = folder + "f" * 14 if ids[-1] != folder + "f" * 14 else folder + "e" * 14
    newcomer["subject"] = "arrived with the sync"
    puts = {f"facts/{folder}/{ids[0]}.json": json.dumps(rewritten).encode(),
            f"facts/{folder}/{newcomer['id']}.json": json.dumps(newcomer).encode(),
            f"facts/{folder}/{folder}{'0' * 13}x.json": b"\xff not a fact"}
    removed = [f"facts/{folder}/{ids[1]}.json"] if len(ids) > 2 else []
    _move_tip_behind_the_store(repo_with_commit, puts, removed)
    decoded: list[int] = []
    real = subtree.decode_fact
    monkeypatch.setattr(subtree, "decode_fact", lambda data: decoded.append(1) or real(data))
    backend = store.project_store
    cold_store = RefStore(backend.repo, backend.common_dir, backend.signature)
    subtrees = cold_store._subtrees_at(cold_store.tip())       # what a cold recall reads: rows
    assert decoded == [] and subtrees[folder].is_lazy          # no cached fact of the folder decoded
    loaded = cold_store.load()
    parsed = {i: fact_from_json(show_blob(repo_with_commit, i)) for i in ref_fact_ids(repo_with_commit)
              if not i.endswith("x")}
    assert loaded.facts == parsed
    assert parsed[ids[0]].body == "rewritten by a teammate" and newcomer["id"] in parsed
    assert any("not" in w or "JSON" in w or "skipped" in w for w in loaded.warnings)
    read = _counting_reads(monkeypatch)
    again = RefStore(backend.repo, backend.common_dir, backend.signature).load()
    assert read == [] and again.facts == parsed    # the journal holds the spliced folder


def test_a_retired_facts_bytes_are_read_only_when_it_is_asked_for(repo_with_commit, monkeypatch):
    """Each folder keeps its valid facts' encoded forms apart from its retired facts': decoding
    every valid fact reads none of the retired facts' bytes; decoding a retired one reads them."""
    from neo_git.fact_table import VALID
    from neo_git.store import subtree
    from neo_git.store.parse_journal import journal_path

    store = populated_store(repo_with_commit)    # holds a superseded fact
    path = parse_cache_path(store.paths.common_dir, "refs/neo/facts")
    path.unlink()
    journal_path(path).unlink(missing_ok=True)
    cold_facts(store)                      # a new cache, written whole
    read: list[object] = []
    original = subtree.CachedBytes._read
    monkeypatch.setattr(subtree.CachedBytes, "_read", lambda self: read.append(self) or original(self))
    backend = store.project_store
    cold = RefStore(backend.repo, backend.common_dir, backend.signature)
    table, _warnings = cold.table()
    retired_parts = {id(sub._rest) for sub in cold._subtrees.values() if sub._rest is not None}
    valid = [i for i, flags in enumerate(table.rows["flags"].tolist()) if flags & VALID]
    retired = [i for i, flags in enumerate(table.rows["flags"].tolist()) if not flags & VALID]
    assert retired and [table[i].id for i in valid]
    assert not any(id(part) in retired_parts for part in read)
    old = table[retired[0]]
    assert any(id(part) in retired_parts for part in read)
    assert old == fact_from_json(show_blob(repo_with_commit, old.id)) and not old.is_valid
