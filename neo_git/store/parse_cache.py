"""A local cache of the parsed project facts, so a cold process need not read every blob.

Reading `refs/neo/facts` costs one object lookup and one JSON parse per fact
(~0.1 ms each; half a second at 5,000 facts). The parse cache keeps, per 2-hex
subtree, its tree id and the entries it held when last read. A new process
compares tree ids with the ref's current tree and re-reads from git only the
subtrees that changed, so the ref stays the single source of truth: a stale or
missing cache costs time, never correctness.

It lives in `.git/neo/cache/` (local, derived, never shared), is written
atomically, and holds the fields of facts that were validated when read from the
ref, in their in-memory form (`marshal` data, tied to one Python version, which
FORMAT records), so they are rebuilt without validating again. Each fact is kept
apart, with its row (`fact_table`: the fields recall's layout and the write policy's
first look need, the sha256 of its text): a cold recall reads the rows of every fact
as one array and decodes only the facts it returns (`store/subtree.py`). Being a file
anyone can edit, it is sealed with a keyed checksum, checked before anything is
decoded: an edited or damaged cache costs a full read, never a changed (or hidden)
fact that a write then commits. `git neo doctor` checks every entry against the blob
it claims. A cache for other Fact fields or rows, or written by another Python, is
ignored.

Layout after the seal line: an 8-byte length, the header (`marshal`: format, ref, and
per subtree its tree id, the rows of its facts, its skipped blobs, where its encoded
facts are and the sha256 of its valid facts' forms and of its retired facts'), then the
encoded facts of every subtree, one after the other, each subtree's valid facts first. The
seal covers the length and the header; a subtree's valid (or retired) facts' forms are
read when one of them is first decoded and believed only if they match the sha256 the
sealed header gives (`subtree.CachedBytes`; else those facts are read from their blobs).
So a cold process reads the rows of every fact (~8 MB at 50,000) and the forms of the
valid facts it decodes: a retired fact's bytes are read only when it is asked for
(`--all`, `history`, `why`), not the whole file (32 MB at 50,000).

Moving the tip does not rewrite it: the changed blobs of the changed subtrees are
appended to a journal beside it (`.log`, one sealed record per change, each naming
the base file it applies to and the tree id each subtree had before), so a sync that
brings 40 facts into 50,000 costs a 40-fact append, not a 50,000-fact rewrite. The
base is rewritten (and the journal dropped) once the journal passes a quarter of it.
"""
from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import re
import struct
import sys
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import pygit2

from neo_git.errors import NeoError
from neo_git.fact_schema import cache_form, cache_signature
from neo_git.facts import Fact, canonical_json
from neo_git.store.subtree import (
    FACT_FIELDS,
    META_FIELDS,
    BlobEntries,
    BlobFact,
    CachedBytes,
    Subtree as Subtree,  # re-exported: the readers take it from here
    restore,
)

# Rewrite the cache after a load that had to read this many subtrees from git
# (or a quarter of them): cold starts and large changes, not every single add.
REWRITE_AFTER = 16
_LENGTH = struct.Struct("<Q")


@lru_cache(maxsize=1)
def cache_format() -> str:
    """Names what a cache holds: changes whenever Fact, FactMetadata or a fact_schema class gain,
    lose or rename a field, the rows change (`fact_table.signature`), or Python's marshal format may have changed
    (another minor version). A cache of another format is never read."""
    from neo_git.fact_table import signature

    return (f"8:py{sys.version_info[0]}.{sys.version_info[1]}:" + ",".join(FACT_FIELDS) + ":" + ",".join(META_FIELDS)
            + ":" + cache_signature() + ":" + signature())


def cache_file(common_dir: Path, kind: str, ref: str, suffix: str) -> Path:
    """`.git/neo/cache/<kind>-<ref, made file-name-safe><suffix>`: the derived caches of a ref."""
    return Path(common_dir) / "neo" / "cache" / f"{kind}-{re.sub(r'[^A-Za-z0-9._-]+', '_', ref)}{suffix}"


def parse_cache_path(common_dir: Path, ref: str) -> Path:
    """Where the parse cache of *ref* lives: `.git/neo/cache/facts-<ref>.<python>.bin`. One per
    Python version (marshal's format may differ between them): a hook run by another Python
    (e.g. pre-commit's own environment) keeps its own cache instead of rewriting this one."""
    return cache_file(common_dir, "facts", ref, f".{sys.implementation.cache_tag or 'python'}.bin")


class FileRegion(NamedTuple):
    """Where a parse cache's encoded facts are: the file, its (inode, size, mtime) when its header
    was checked, and the offset and size of the data after the header."""

    path: Path
    stamp: tuple
    offset: int
    size: int


def unpack_subtrees(body: memoryview, ref: str, region: FileRegion | None = None,
                    blob_fact: BlobFact | None = None) -> dict[str, Subtree] | None:
    """The (lazy) subtrees of a verified cache body (its length and header, and the data after
    them unless *region* says where in the file it is); None if it is of another format or ref."""
    (size,) = _LENGTH.unpack_from(body)
    header = marshal.loads(body[_LENGTH.size:_LENGTH.size + size])
    if not isinstance(header, dict) or header.get("format") != cache_format() or header.get("ref") != ref:
        return None
    data = region if region is not None else body[_LENGTH.size + size:]
    return {str(name): lazy_subtree(entry, data, blob_fact) for name, entry in header["subtrees"].items()}


def lazy_subtree(entry, data: memoryview | FileRegion, blob_fact: BlobFact | None = None) -> Subtree:
    """A subtree from its header entry [tree hex, rows, skipped, start, length, split, sha256 of
    the valid facts' encoded forms (before *split*), sha256 of the retired ones' (from it on)]
    over *data* (in memory, or where in the cache file). A journal's entries (a sealed record
    each) carry no sha256: [tree hex, rows, skipped, start, length] in memory."""
    from neo_git.fact_table import ROW_STRUCT

    if not isinstance(entry, list) or len(entry) not in (5, 8):
        raise ValueError("a parse-cache subtree out of shape")
    tree_hex, rows, skipped, start, length = entry[:5]
    split, live, rest = entry[5:] if len(entry) == 8 else (None, None, None)
    size = data.size if isinstance(data, FileRegion) else len(data)
    if not isinstance(rows, bytes) or len(rows) % struct.calcsize(ROW_STRUCT) or not isinstance(skipped, list) \
            or not 0 <= start <= start + length <= size \
            or (split is None and isinstance(data, FileRegion)) \
            or (split is not None and not (isinstance(live, bytes) and isinstance(rest, bytes) and 0 <= split <= length)):
        raise ValueError("a parse-cache subtree out of shape")
    if split is None:
        assert not isinstance(data, FileRegion)   # checked above: a file region comes split
        return Subtree.lazy(pygit2.Oid(hex=tree_hex), rows, data[start:start + length], skipped, blob_fact)
    assert isinstance(live, bytes) and isinstance(rest, bytes)   # checked above
    if isinstance(data, FileRegion):
        first = CachedBytes(live, path=data.path, stamp=data.stamp, start=data.offset + start, length=split)
        second = CachedBytes(rest, path=data.path, stamp=data.stamp, start=data.offset + start + split,
                             length=length - split)
    else:
        first = CachedBytes(live, view=data[start:start + split])
        second = CachedBytes(rest, view=data[start + split:start + length])
    return Subtree.lazy(pygit2.Oid(hex=tree_hex), rows, first, skipped, blob_fact, split=split, rest=second)


def pack_subtrees(subtrees: dict[str, Subtree]) -> tuple[dict, list[bytes | memoryview]]:
    """({name: [tree hex, rows, skipped, start, length, split, sha256 of the valid facts' encoded
    forms, sha256 of the retired ones']}, the encoded facts in order: each subtree's valid ones,
    then its retired ones): what a cache holds for *subtrees*. A cold recall then reads the
    valid facts' bytes of the folders it decodes, never the retired ones'."""
    header, chunks, at = {}, [], 0
    for name, sub in subtrees.items():
        rows, live, retired, skipped = sub.split_encoded()
        header[name] = [str(sub.oid), rows, skipped, at, len(live) + len(retired), len(live),
                        hashlib.sha256(live).digest(), hashlib.sha256(retired).digest()]
        chunks += [live, retired]
        at += len(live) + len(retired)
    return header, chunks


def _base_id(raw: bytes) -> bytes:
    """What identifies a base file: its seal (which changes with every byte of it)."""
    return raw[len(_SEAL):raw.find(b"\n")][:32]


def decode(body: bytes | memoryview) -> dict:
    """A cache body as plain data, for tests and hand inspection: {"format", "ref", "subtrees":
    {name: [tree hex, [[blob name, blob hex, fact fields as a dict | None, warning], ...]]}}."""
    (size,) = _LENGTH.unpack_from(body)
    header = marshal.loads(bytes(body[_LENGTH.size:_LENGTH.size + size]))
    if not isinstance(header, dict):
        raise ValueError("a parse cache holds a mapping")
    data = memoryview(bytes(body))[_LENGTH.size + size:]
    subtrees = {}
    for name, entry in header.get("subtrees", {}).items():
        sub = lazy_subtree(entry, data)
        entries = [[blob_name, str(oid), None if fact is None else _plain(fact), warning]
                   for blob_name, (oid, fact, warning) in sub.blobs.items()]
        subtrees[name] = [entry[0], entries]
    return {"format": header.get("format"), "ref": header.get("ref"), "subtrees": subtrees}


def encode(data: dict) -> bytes:
    """The cache body for plain data as `decode` gives it (facts given as dicts of their fields)."""
    subtrees = {}
    for name, (tree_hex, entries) in data["subtrees"].items():
        blobs: BlobEntries = {}
        for blob_name, blob_hex, fields_, warning in entries:
            blobs[blob_name] = (pygit2.Oid(hex=blob_hex), None if fields_ is None else _from_plain(fields_), warning)
        subtrees[name] = Subtree.of(pygit2.Oid(hex=tree_hex), blobs)
    header, chunks = pack_subtrees(subtrees)
    return _body({"format": data["format"], "ref": data["ref"], "subtrees": header}, chunks)


def _plain(fact: Fact) -> dict:
    return {**fact.__dict__, "kind": fact.kind.value, "scope": fact.scope.value, "metadata": dict(fact.metadata.__dict__)}


def _from_plain(fields_: dict) -> Fact:
    meta = fields_["metadata"]
    return restore(tuple(fields_[name] if name != "metadata" else tuple(cache_form(meta[m]) for m in META_FIELDS)
                         for name in FACT_FIELDS))


def _body(header: dict, chunks: list[bytes | memoryview]) -> bytes:
    encoded = marshal.dumps(header)
    return b"".join([_LENGTH.pack(len(encoded)), encoded, *chunks])


def _sealed_part(body: bytes | memoryview) -> bytes | memoryview:
    """What the seal of a cache body covers: its length and header (they hold the sha256 of the
    encoded facts after them)."""
    (size,) = _LENGTH.unpack_from(body)
    return body[:_LENGTH.size + size]


def check_subtree(sub: Subtree) -> tuple[int, int]:
    """(entries, entries that do not match their blob id, plus one if the listing does not match
    the tree id) of one cached subtree: every fact re-encoded canonically (the doctor's check)."""
    blobs = sub.blobs
    if not blobs:
        return 0, 0   # a file, link or submodule where a folder belongs: read as nothing
    bad = int(git_tree_id([(name, str(oid)) for name, (oid, _f, _w) in blobs.items()]) != str(sub.oid))
    for _name, (oid, fact, _warning) in blobs.items():
        bad += fact is not None and git_blob_id(canonical_json(fact)) != str(oid)
    return len(blobs), int(bad)

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


def _seal(body: bytes | memoryview, key: bytes) -> bytes:
    return hmac.digest(key, body, "sha256").hex().encode("ascii")


def _verified_body(raw: bytes, path: Path, create_key: bool = False) -> memoryview | None:
    """The cache's data (a view of *raw*, not a copy) if its seal matches this repository's
    key, else None. *raw* may end after the header: the seal covers the length and the header."""
    end = raw.find(b"\n")
    key = _key(path.parent, create=create_key)
    if key is None or end < 0 or not raw.startswith(_SEAL):
        return None
    body = memoryview(raw)[end + 1:]
    try:
        sealed = _sealed_part(body)
    except struct.error:
        return None
    return body if hmac.compare_digest(raw[len(_SEAL):end], _seal(sealed, key)) else None


def git_blob_id(data: bytes) -> str:
    """The id git gives a blob with *data* (`git hash-object`), in hex."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git_tree_id(entries: list[tuple[str, str]]) -> str:
    """The id git gives a tree of regular files (name, blob hex): `git mktree`'s result."""
    body = b"".join(b"100644 " + name.encode("utf-8") + b"\0" + bytes.fromhex(blob)
                    for name, blob in sorted(entries, key=lambda e: e[0].encode("utf-8")))
    return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()


def write_parse_cache(path: Path, ref: str, subtrees: dict[str, Subtree]) -> None:
    """Record *subtrees* (a lazy one copied as it was read); failures (read-only .git, full
    disk) are ignored."""
    from neo_git.fileio import atomic_write_parts, locked

    try:
        header, chunks = pack_subtrees(subtrees)   # a lazy subtree's bytes are views, not copies
        encoded = marshal.dumps({"format": cache_format(), "ref": ref, "subtrees": header})
        parts = [_LENGTH.pack(len(encoded)), encoded, *chunks]   # the body `_body` would join
        path.parent.mkdir(parents=True, exist_ok=True)
        key = _key(path.parent)
        if key is None:
            return  # no key, no cache: an unsealed one would never be read
        seal = hmac.new(key, digestmod="sha256")
        for part in parts[:2]:   # the length and the header, which holds each subtree's sha256
            seal.update(part)
        # Not fsynced: derived data, and a torn file fails its seal. The journal is removed
        # under the same lock (its records name the old base, so a leftover one is ignored).
        # A held lock is not waited for: another process is writing the same derived data (or
        # is stuck), and the command's answer never depends on this file being written.
        with locked(path.with_suffix(".lock"), timeout=0):
            atomic_write_parts(path, [_SEAL, seal.hexdigest().encode("ascii"), b"\n", *parts], durable=False)
            path.with_suffix(".log").unlink(missing_ok=True)  # the journal (store/parse_journal.py)
        path.with_name(cache_file(Path(), "facts", ref, ".json").name).unlink(missing_ok=True)  # earlier versions' JSON
    except (OSError, ValueError, NeoError):  # ValueError: a value marshal cannot write
        pass
