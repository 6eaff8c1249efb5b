"""A local snapshot of the parsed project facts, so a cold process need not read every blob.

Reading `refs/neo/facts` costs one object lookup and one JSON parse per fact
(~0.1 ms each; half a second at 5,000 facts). The snapshot keeps, per 2-hex
subtree, its tree id and the entries it held when last read. A new process
compares tree ids with the ref's current tree and re-reads from git only the
subtrees that changed, so the ref stays the single source of truth: a stale or
missing snapshot costs time, never correctness.

It lives in `.git/neo/cache/` (local, derived, never shared), is written
atomically, and holds `Fact.to_dict()` output of facts that were validated when
read from the ref, so they are rebuilt without validating again (half the cost
of a cold load). Being a file anyone can edit, it is not trusted: an entry is
reused only if its fact's canonical JSON hashes to the blob id it claims, and a
subtree only if its listing rebuilds the tree id, so an edited snapshot can cost
a re-read but never change (or hide) a fact that a write then commits. A
snapshot written for other Fact fields, or one that does not parse, is ignored.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import fields
from pathlib import Path
from typing import NamedTuple

import pygit2

from neo_git import safejson
from neo_git.errors import NeoError
from neo_git.facts import Fact, FactKind, FactMetadata, FactScope, canonical_json

# Changes whenever Fact or FactMetadata gain, lose or rename a field.
FORMAT = "3:" + ",".join(f.name for f in fields(Fact)) + ":" + ",".join(f.name for f in fields(FactMetadata))
_KINDS = {k.value: k for k in FactKind}
_SCOPES = {s.value: s for s in FactScope}
# Rewrite the snapshot after a load that had to read this many subtrees from git
# (or a quarter of them): cold starts and large changes, not every single add.
SNAPSHOT_AFTER = 16

# blob file name -> (blob id, the parsed fact or None, the warning if it was skipped)
BlobEntries = dict[str, tuple[pygit2.Oid, "Fact | None", "str | None"]]


class Subtree(NamedTuple):
    """One parsed `facts/<xx>/` folder."""

    oid: "pygit2.Oid | None"  # None: not verified as a whole, so never reused without a read
    facts: dict[str, Fact]
    blobs: BlobEntries
    warnings: tuple[str, ...]

    @classmethod
    def of(cls, oid: pygit2.Oid, blobs: BlobEntries) -> "Subtree":
        """A subtree from its blob entries (in tree order)."""
        facts = {fact.id: fact for _, fact, _ in blobs.values() if fact is not None}
        return cls(oid, facts, blobs, tuple(w for _, _, w in blobs.values() if w))


def snapshot_path(common_dir: Path, ref: str) -> Path:
    """Where the snapshot of *ref* lives: `.git/neo/cache/facts-<ref>.json`."""
    return Path(common_dir) / "neo" / "cache" / f"facts-{re.sub(r'[^A-Za-z0-9._-]+', '_', ref)}.json"


def read_snapshot(path: Path, ref: str) -> dict[str, Subtree]:
    """The subtrees recorded in the snapshot ({} if missing, for another ref, or unreadable)."""
    try:
        data = safejson.loads(path.read_bytes())
        if data.get("format") != FORMAT or data.get("ref") != ref:
            return {}
        subtrees = {}
        for name, (tree_hex, entries) in data["subtrees"].items():
            blobs: BlobEntries = {}
            listed: list[tuple[str, str]] = []
            for blob_name, blob_hex, raw, _warning in entries:
                listed.append((blob_name, blob_hex))
                # Only a fact whose canonical bytes hash to the blob id it claims is reused; an
                # entry that says "this blob was broken" cannot be checked, so it is read again.
                fact = None if raw is None else _restore(raw)
                if fact is not None and git_blob_id(canonical_json(fact)) == blob_hex:
                    blobs[blob_name] = (pygit2.Oid(hex=blob_hex), fact, None)
            # The subtree as a whole is reused only if its listing rebuilds its tree id and every
            # entry checked out; otherwise the ref reader reads it, reusing the entries that did.
            whole = len(blobs) == len(listed) and git_tree_id(listed) == tree_hex
            subtrees[name] = Subtree.of(pygit2.Oid(hex=tree_hex) if whole else None, blobs)
        return subtrees
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError, NeoError):
        return {}  # derived data: a broken snapshot only means reading the ref in full


def untrusted_entries(path: Path, ref: str) -> tuple[int, int] | None:
    """(entries, entries that do not match the blob or tree they claim) in the snapshot at
    *path*; None if there is none (or it is for another format or ref, so never used)."""
    try:
        data = safejson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, UnicodeDecodeError):
        return (1, 1)  # unreadable: one bad "entry", the file
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("ref") != ref:
        return None
    total = bad = 0
    try:
        for tree_hex, entries in data["subtrees"].values():
            listed = [(name, blob) for name, blob, _raw, _w in entries]
            bad += git_tree_id(listed) != tree_hex
            for _name, blob_hex, raw, _w in entries:
                total += 1
                if raw is not None and git_blob_id(canonical_json(_restore(raw))) != blob_hex:
                    bad += 1
    except (ValueError, KeyError, TypeError, AttributeError, NeoError):
        return (max(total, 1), max(bad, 1))
    return (total, bad)


def git_blob_id(data: bytes) -> str:
    """The id git gives a blob with *data* (`git hash-object`), in hex."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git_tree_id(entries: list[tuple[str, str]]) -> str:
    """The id git gives a tree of regular files (name, blob hex): `git mktree`'s result."""
    body = b"".join(b"100644 " + name.encode("utf-8") + b"\0" + bytes.fromhex(blob)
                    for name, blob in sorted(entries, key=lambda e: e[0].encode("utf-8")))
    return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()


def _restore(raw: dict) -> Fact:
    """A fact from its `to_dict()` form, trusted: it was validated before it was written."""
    meta = dict(raw["metadata"])
    meta["invalidation"] = meta["invalidation"] or None
    return Fact(**{**raw, "kind": _KINDS[raw["kind"]], "scope": _SCOPES[raw["scope"]],
                   "depends_on": tuple(raw["depends_on"]), "tags": tuple(raw["tags"]),
                   "metadata": FactMetadata(**meta)})


def write_snapshot(path: Path, ref: str, subtrees: dict[str, Subtree]) -> None:
    """Record *subtrees*; failures (read-only .git, full disk) are ignored."""
    from neo_git.fileio import atomic_write

    data = {"format": FORMAT, "ref": ref, "subtrees": {
        name: [str(sub.oid), [[blob_name, str(blob_id), None if fact is None else fact.to_dict(), warning]
                              for blob_name, (blob_id, fact, warning) in sub.blobs.items()]]
        for name, sub in subtrees.items()}}
    try:
        atomic_write(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except (OSError, NeoError):
        pass
