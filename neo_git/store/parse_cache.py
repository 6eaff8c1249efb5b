"""A local cache of the parsed project facts, so a cold process need not read every blob.

Reading `refs/neo/facts` costs one object lookup and one JSON parse per fact
(~0.1 ms each; half a second at 5,000 facts). The parse cache keeps, per 2-hex
subtree, its tree id and the entries it held when last read. A new process
compares tree ids with the ref's current tree and re-reads from git only the
subtrees that changed, so the ref stays the single source of truth: a stale or
missing cache costs time, never correctness.

It lives in `.git/neo/cache/` (local, derived, never shared), is written
atomically, and holds the fields of facts that were validated when
read from the ref, in their in-memory form, so they are rebuilt without validating
again (half the cost of a cold load). The body is `marshal` data, not JSON: at 5,000 facts it is half
the size and decodes in 9 ms instead of 19 (the cache is local and tied to one
Python version, which FORMAT records). Being a file anyone can edit, it is sealed
with a keyed checksum, checked before anything is decoded: an edited or damaged
cache costs a full read, never a changed (or hidden) fact that a write then
commits. `git neo doctor` checks every entry against the blob it claims. A cache
for other Fact fields, or written by another Python, is ignored.

Moving the tip does not rewrite it: the changed blobs of the changed subtrees are
appended to a journal beside it (`.log`, one sealed record per change, each naming
the base file it applies to and the tree id each subtree had before), so a sync that
brings 40 facts into 50,000 costs a 40-fact append, not a 50,000-fact rewrite. The
base is rewritten (and the journal dropped) once the journal passes a quarter of it.
"""
from __future__ import annotations

import gc
import hashlib
import hmac
import marshal
import os
import re
import sys
from dataclasses import fields
from pathlib import Path
from typing import NamedTuple

import pygit2

from neo_git.errors import NeoError
from neo_git.facts import Fact, FactKind, FactMetadata, FactScope, canonical_json

# Changes whenever Fact or FactMetadata gain, lose or rename a field, or Python's marshal
# format may have changed (another minor version).
FORMAT = "6:py%d.%d:" % sys.version_info[:2] + ",".join(f.name for f in fields(Fact)) + ":" + ",".join(f.name for f in fields(FactMetadata))
_KINDS = {k.value: k for k in FactKind}
_SCOPES = {s.value: s for s in FactScope}
_new = object.__new__
_set = object.__setattr__
_FACT_FIELDS = frozenset(f.name for f in fields(Fact))
_META_FIELDS = frozenset(f.name for f in fields(FactMetadata))
# _restore fills __dict__ directly: only valid while neither class derives anything at init.
assert not hasattr(Fact, "__post_init__") and not hasattr(FactMetadata, "__post_init__")
# Rewrite the cache after a load that had to read this many subtrees from git
# (or a quarter of them): cold starts and large changes, not every single add.
REWRITE_AFTER = 16

# blob file name -> (blob id, the parsed fact or None, the warning if it was skipped)
BlobEntries = dict[str, tuple[pygit2.Oid, "Fact | None", "str | None"]]


class Subtree(NamedTuple):
    """One parsed `facts/<xx>/` folder."""

    oid: pygit2.Oid
    facts: dict[str, Fact]
    blobs: BlobEntries
    warnings: tuple[str, ...]

    @classmethod
    def of(cls, oid: pygit2.Oid, blobs: BlobEntries) -> "Subtree":
        """A subtree from its blob entries (in tree order)."""
        facts = {fact.id: fact for _, fact, _ in blobs.values() if fact is not None}
        return cls(oid, facts, blobs, tuple(w for _, _, w in blobs.values() if w))


def cache_file(common_dir: Path, kind: str, ref: str, suffix: str) -> Path:
    """`.git/neo/cache/<kind>-<ref, made file-name-safe><suffix>`: the derived caches of a ref."""
    return Path(common_dir) / "neo" / "cache" / f"{kind}-{re.sub(r'[^A-Za-z0-9._-]+', '_', ref)}{suffix}"


def parse_cache_path(common_dir: Path, ref: str) -> Path:
    """Where the parse cache of *ref* lives: `.git/neo/cache/facts-<ref>.<python>.bin`. One per
    Python version (marshal's format may differ between them): a hook run by another Python
    (e.g. pre-commit's own environment) keeps its own cache instead of rewriting this one."""
    return cache_file(common_dir, "facts", ref, f".{sys.implementation.cache_tag or 'python'}.bin")


def read_parse_cache(path: Path, ref: str) -> dict[str, Subtree]:
    """The subtrees recorded in the parse cache ({} if missing, for another ref, or unreadable)."""
    # Parsing creates a few containers per fact, all acyclic: the cyclic GC would walk the
    # growing heap again and again for nothing (a third of this read at 5,000 facts). After it,
    # freeze + unfreeze moves them (with everything else) straight to the oldest generation,
    # in O(1): the next young collections would otherwise walk every new fact once more
    # (~15 ms of a cold recall at 5,000 facts), to find nothing.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse(path, ref)
    finally:
        if was_enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _parse(path: Path, ref: str) -> dict[str, Subtree]:
    try:
        raw = path.read_bytes()
        body = _verified_body(raw, path)
        if body is None:
            return {}
        data = decode(body)  # sealed: written by us from validated facts
        if data.get("format") != FORMAT or data.get("ref") != ref:
            return {}
        subtrees = {}
        for name, (tree_hex, entries) in data["subtrees"].items():
            subtrees[name] = Subtree.of(pygit2.Oid(hex=tree_hex), _entries(entries))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, EOFError, KeyError, TypeError, AttributeError, NeoError):
        return {}  # derived data: a broken cache only means reading the ref in full
    from neo_git.store.parse_journal import replay_journal  # beside this file, importing from it

    replay_journal(path, _base_id(raw), subtrees)
    return subtrees


def _base_id(raw: bytes) -> bytes:
    """What identifies a base file: its seal (which changes with every byte of it)."""
    return raw[len(_SEAL):raw.find(b"\n")][:32]


def _entries(entries) -> BlobEntries:
    """Blob entries from their cache form; ValueError if one names a fact at the wrong file."""
    blobs: BlobEntries = {}
    for blob_name, blob_hex, raw, warning in entries:
        fact = None if raw is None else _restore(raw)
        if fact is not None and f"{fact.id}.json" != blob_name:
            raise ValueError("a parse-cache entry under another fact's name")
        blobs[blob_name] = (pygit2.Oid(hex=blob_hex), fact, None if warning is None else str(warning))
    return blobs


def untrusted_entries(path: Path, ref: str) -> tuple[int, int] | None:
    """For the doctor: (entries, entries that do not match the blob or tree they claim) in the
    parse cache at *path*, checked the slow, exact way (canonical bytes against the blob id); a file
    whose checksum fails counts as one bad entry. None if there is none, or it is for another
    format or ref (so never used)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return (1, 1)
    body = _verified_body(raw, path, create_key=False)
    if body is None:
        return (1, 1)  # unsealed: never decoded (marshal is only for data we wrote)
    try:
        data = decode(body)
    except (ValueError, EOFError, TypeError):
        return (1, 1)
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("ref") != ref:
        return None
    total, bad = 0, 0
    try:
        for tree_hex, entries in data["subtrees"].values():
            listed = [(name, blob) for name, blob, _raw, _w in entries]
            if not listed:
                continue   # a file, link or submodule where a folder belongs: read as nothing
            bad += git_tree_id(listed) != tree_hex
            for _name, blob_hex, raw_fact, _w in entries:
                total += 1
                if raw_fact is not None and git_blob_id(canonical_json(_restore(raw_fact))) != blob_hex:
                    bad += 1
    except (ValueError, KeyError, TypeError, AttributeError, NeoError):
        return (max(total, 1), max(bad, 1))
    from neo_git.store.parse_journal import untrusted_journal_entries

    more, worse = untrusted_journal_entries(path)  # what the journal lays over the base
    return (total + more, bad + worse)


# The parse cache is a file anyone can edit, and what it says becomes facts that writes commit.
# Checking each entry against its blob id means re-encoding every fact canonically, which
# costs more than reading the blobs from git; so the writer seals the file instead with an
# HMAC-SHA256 (a random key kept beside it, never shared; SHA-256 has CPU support where
# BLAKE2b has not: 2 ms instead of 4.4 for 3 MB). An edited or damaged cache fails the check
# and is ignored: the ref is read in full. (Someone who can run code as you could forge
# it, but could as well write the ref itself.)
_SEAL = b"neo-parse-cache-hmac-sha256:"
KEY_FILE = "parse-cache.key"


def _key(folder: Path, create: bool = True) -> bytes | None:
    path = folder / KEY_FILE
    try:
        key = path.read_bytes()
        return key if len(key) == 32 else None
    except FileNotFoundError:
        if not create:
            return None
    except OSError:
        return None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _key(folder, create=False)  # another process made it first: use theirs
    except OSError:
        return None
    try:
        os.write(fd, os.urandom(32))
    finally:
        os.close(fd)
    return _key(folder, create=False)


def _seal(body: "bytes | memoryview", key: bytes) -> bytes:
    return hmac.digest(key, body, "sha256").hex().encode("ascii")


def _verified_body(raw: bytes, path: Path, create_key: bool = False) -> memoryview | None:
    """The cache's data (a view of *raw*, not a copy) if its seal matches this repository's
    key, else None."""
    end = raw.find(b"\n")
    key = _key(path.parent, create=create_key)
    if key is None or end < 0 or not raw.startswith(_SEAL):
        return None
    body = memoryview(raw)[end + 1:]
    return body if hmac.compare_digest(raw[len(_SEAL):end], _seal(body, key)) else None


def encode(data: dict) -> bytes:
    """The cache body for *data* (plain dicts, lists, strings, numbers and None)."""
    return marshal.dumps(data)


def decode(body: "bytes | memoryview") -> dict:
    """The data of a (verified) cache body; ValueError if it is not one."""
    data = marshal.loads(body)
    if not isinstance(data, dict):
        raise ValueError("a parse cache holds a mapping")
    return data


def git_blob_id(data: bytes) -> str:
    """The id git gives a blob with *data* (`git hash-object`), in hex."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git_tree_id(entries: list[tuple[str, str]]) -> str:
    """The id git gives a tree of regular files (name, blob hex): `git mktree`'s result."""
    body = b"".join(b"100644 " + name.encode("utf-8") + b"\0" + bytes.fromhex(blob)
                    for name, blob in sorted(entries, key=lambda e: e[0].encode("utf-8")))
    return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()


def _cache_form(fact: Fact, shared: dict[str, str]) -> dict:
    """A fact as the cache keeps it: its fields as they are in memory (tuples stay tuples;
    marshal keeps them), kind and scope as their values. Values most facts repeat (ids of
    the org and project, the author) go through *shared*, so marshal writes each once and
    a reader allocates it once (a sixth of the decoding at 5,000 facts)."""
    raw = dict(fact.__dict__)
    meta = dict(fact.metadata.__dict__)
    for fields_, names in ((raw, _SHARED_FACT_FIELDS), (meta, _SHARED_META_FIELDS)):
        for name in names:
            value = fields_[name]
            if isinstance(value, str):
                fields_[name] = shared.setdefault(value, value)
    raw.update(kind=fact.kind.value, scope=fact.scope.value, metadata=meta)
    return raw


_SHARED_FACT_FIELDS = ("org_id", "project_id")
_SHARED_META_FIELDS = ("author", "provenance", "source_file")


def _restore(raw: dict) -> Fact:
    """A fact from its cache form, trusted: it was validated before it was written.

    Built without the dataclasses' `__init__` (a frozen one sets each field through
    `object.__setattr__`): handing over the decoded dicts as the instances' `__dict__` is
    several times faster, which is a third of a cold read of 5,000 facts. FORMAT
    guarantees the keys are the fields; they are still checked, as Fact(**raw) would."""
    meta = raw["metadata"]
    if raw.keys() != _FACT_FIELDS or meta.keys() != _META_FIELDS:
        raise KeyError("a parse-cache entry does not have the fields of a Fact")
    metadata = _new(FactMetadata)
    _set(metadata, "__dict__", meta)
    raw.update(kind=_KINDS[raw["kind"]], scope=_SCOPES[raw["scope"]], metadata=metadata)
    fact = _new(Fact)
    _set(fact, "__dict__", raw)
    return fact


def write_parse_cache(path: Path, ref: str, subtrees: dict[str, Subtree]) -> None:
    """Record *subtrees*; failures (read-only .git, full disk) are ignored."""
    from neo_git.fileio import atomic_write, locked

    shared: dict[str, str] = {}
    data = {"format": FORMAT, "ref": ref, "subtrees": {
        name: [str(sub.oid), [[blob_name, str(blob_id), None if fact is None else _cache_form(fact, shared), warning]
                              for blob_name, (blob_id, fact, warning) in sub.blobs.items()]]
        for name, sub in subtrees.items()}}
    try:
        body = encode(data)
        path.parent.mkdir(parents=True, exist_ok=True)
        key = _key(path.parent)
        if key is None:
            return  # no key, no cache: an unsealed one would never be read
        # Not fsynced: derived data, and a torn file fails its seal. The journal is removed
        # under the same lock (its records name the old base, so a leftover one is ignored).
        with locked(path.with_suffix(".lock"), timeout=5.0):
            atomic_write(path, _SEAL + _seal(body, key) + b"\n" + body, durable=False)
            path.with_suffix(".log").unlink(missing_ok=True)  # the journal (store/parse_journal.py)
        path.with_name(cache_file(Path(), "facts", ref, ".json").name).unlink(missing_ok=True)  # earlier versions' JSON
    except (OSError, ValueError, NeoError):  # ValueError: a value marshal cannot write
        pass
