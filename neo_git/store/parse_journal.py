"""The parse cache's journal: how the cache follows a moved tip without being rewritten.

A sync that brings 40 facts into 50,000 changes ~40 of the 256 subtrees; rewriting the
whole parse cache for that cost 0.6 s (re-encoding every fact). Instead the changed
subtrees are appended to `facts-….log` beside the cache (each whole, as the base keeps
it: rows and encoded facts), one sealed record per save, and a reader replays them over
the base. `write_parse_cache` (a new base)
removes the journal; `append_parse_journal` refuses once the journal passes a quarter of
the base, and the caller writes a new base instead.

Reading the cache as a whole (`read_parse_cache`: the base with the journal replayed over it;
`untrusted_entries`, the doctor's check of both) lives here too, beside the journal it replays.
"""
from __future__ import annotations

import gc
import hmac
import marshal
import os
import struct
from collections.abc import Iterator
from pathlib import Path

from neo_git.errors import NeoError
from neo_git.store.parse_cache import (
    _LENGTH,
    _SEAL,
    FileRegion,
    Subtree,
    _base_id,
    _key,
    _seal,
    _verified_body,
    check_subtree,
    lazy_subtree,
    unpack_subtrees,
    write_parse_cache,
)
from neo_git.store.subtree import BlobFact

# One record per save: a header line `neo-parse-journal:<hmac hex> <length>` and `length` bytes
# of marshal data {"base": <the base file's id>, "subtrees": {name: [tree before | None,
# tree after | None, rows, skipped, encoded facts]}} (rows and skipped as the base keeps them).
# A record applies only to the base it names, and each subtree only when the cache still
# holds the tree it was written against; anything else (a torn tail, another base, a subtree
# someone else changed first) drops what it cannot apply, which costs reading those
# subtrees from git again, never a wrong fact.
_JOURNAL = b"neo-parse-journal:"
JOURNAL_MIN_BYTES = 1 << 20      # the journal may grow to this, or a quarter of the base, before a rewrite


def journal_path(path: Path) -> Path:
    """The journal beside the parse cache at *path* (`facts-….log`)."""
    return path.with_suffix(".log")


def sealed_records(cache: Path) -> Iterator[dict | None]:
    """The journal's records, decoded, in order; None for the first one that is torn, edited
    or not readable (and nothing after it: what follows cannot be trusted either)."""
    path = journal_path(cache)
    try:
        raw = path.read_bytes()
    except OSError:
        return
    key = _key(path.parent, create=False)
    at = 0
    while at < len(raw):
        end = raw.find(b"\n", at)
        if key is None or end < 0 or not raw.startswith(_JOURNAL, at):
            yield None
            return
        seal, _, length = raw[at + len(_JOURNAL):end].partition(b" ")
        size = int(length) if length.isdigit() else -1
        body = memoryview(raw)[end + 1:end + 1 + size]
        if size < 0 or len(body) != size or not hmac.compare_digest(seal, _seal(body, key)):
            yield None  # checked before anything is decoded, as the base is
            return
        at = end + 1 + size
        try:
            record = marshal.loads(body)
        except (ValueError, EOFError, TypeError):
            yield None
            return
        yield record if isinstance(record, dict) else None


def replay_journal(cache: Path, base: bytes, subtrees: dict[str, Subtree]) -> None:
    """Apply the journal of the parse cache at *cache* (whose base file has id *base*) to
    *subtrees*, in place, as far as its records are sound and apply."""
    for record in sealed_records(cache):
        if record is None:
            return
        try:
            if record.get("base") != base:
                continue  # written against an earlier base (a rewrite raced with it)
            for name, (before, after, rows, skipped, data) in record["subtrees"].items():
                _apply(subtrees, name, before, after, rows, skipped, data)
        except (ValueError, EOFError, KeyError, TypeError, AttributeError, NeoError):
            return


def untrusted_journal_entries(cache: Path) -> tuple[int, int]:
    """For the doctor: (entries, entries whose fact does not encode to the blob id they claim)
    in the journal; a record that fails its seal counts as one bad entry."""
    total = bad = 0
    for record in sealed_records(cache):
        if record is None:
            return total + 1, bad + 1
        try:
            for _before, after, rows, skipped, data in record["subtrees"].values():
                if after is not None:
                    more, worse = check_subtree(_image(after, rows, skipped, data))
                    total, bad = total + more, bad + worse
        except (ValueError, KeyError, TypeError, AttributeError, EOFError, NeoError):
            return total + 1, bad + 1
    return total, bad


def _image(after: str, rows, skipped, data) -> Subtree:
    if not isinstance(data, bytes):
        raise ValueError("a journal record out of shape")
    return lazy_subtree([after, rows, skipped, 0, len(data)], memoryview(data))


def _apply(subtrees: dict[str, Subtree], name: str, before: str | None, after: str | None, rows, skipped,
           data) -> None:
    current = subtrees.get(name)
    have = None if current is None else str(current.oid)
    if have == after:
        return  # already there (two processes journalled the same change)
    if have != before:
        subtrees.pop(name, None)  # it moved some other way: read it from git again
        return
    if after is None:
        del subtrees[name]
        return
    subtrees[name] = _image(after, rows, skipped, data)


def append_parse_journal(path: Path, ref: str, before: dict[str, Subtree], after: dict[str, Subtree]) -> bool:
    """Record how the subtrees went from *before* (what the cache holds) to *after*: the changed
    subtrees, whole. False when that is not possible (no base to apply to, or the journal has
    grown past a quarter of the base): then rewrite the cache whole."""
    from neo_git.fileio import locked

    changed = {}
    for name in before.keys() | after.keys():
        old, new = before.get(name), after.get(name)
        if (old and old.oid) == (new and new.oid):
            continue
        rows, data, skipped = new.encoded() if new is not None else (b"", b"", [])
        changed[name] = [None if old is None else str(old.oid), None if new is None else str(new.oid), rows, skipped,
                         data]
    if not changed:
        return True
    journal = journal_path(path)
    try:
        with locked(path.with_suffix(".lock"), timeout=0):   # held: skip (derived data, parse_cache.py)
            with open(path, "rb") as fh:
                head = fh.read(len(_SEAL) + 64)
                base_size = os.fstat(fh.fileno()).st_size
            if not head.startswith(_SEAL):
                return False
            key = _key(path.parent, create=False)
            if key is None:
                return False
            body = marshal.dumps({"base": _base_id(head + b"\n"), "subtrees": changed})
            try:
                used = journal.stat().st_size
            except FileNotFoundError:
                used = 0
            if used + len(body) > max(JOURNAL_MIN_BYTES, base_size // 4):
                return False
            fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, _JOURNAL + _seal(body, key) + b" %d\n" % len(body) + body)
            finally:
                os.close(fd)
        return True
    except (OSError, ValueError, NeoError):
        return False


def save_parse_cache(path: Path, ref: str, persisted: dict[str, Subtree] | None, subtrees: dict[str, Subtree],
                     cold: bool, rewrite_after: int) -> dict[str, Subtree] | None:
    """Bring the parse cache file at *path* from *persisted* (what it holds; None: never read
    in this process) to *subtrees*; returns what it holds now. A file with a base gets the
    changed blobs journalled (a cold process at once, so the next one reads nothing again; a
    long-lived one once *rewrite_after* subtrees changed); without one (or with a full
    journal) the file is written whole when enough had to be read."""
    empty = Subtree(None, {}, {}, ())
    if persisted:
        pending = sum(1 for name in persisted.keys() | subtrees.keys()
                      if (persisted.get(name) or empty).oid != (subtrees.get(name) or empty).oid)
        if not cold and pending < rewrite_after:
            return persisted
        if append_parse_journal(path, ref, persisted, subtrees):
            return subtrees
    persisted = persisted or {}
    changed = sum(1 for name in subtrees if (persisted.get(name) or empty).oid != subtrees[name].oid)
    if changed >= rewrite_after or changed * 4 >= len(subtrees) or persisted:
        write_parse_cache(path, ref, subtrees)
        return subtrees
    return persisted


def read_parse_cache(path: Path, ref: str, blob_fact: BlobFact | None = None) -> dict[str, Subtree]:
    """The subtrees recorded in the parse cache ({} if missing, for another ref, or unreadable),
    lazy: their facts are decoded when asked for (read from their blobs by *blob_fact* when a
    subtree's encoded facts fail their check)."""
    # Decoding a subtree creates a few containers per fact, all acyclic: the cyclic GC would walk
    # the growing heap again and again for nothing. Afterwards freeze + unfreeze moves them (with
    # everything else) straight to the oldest generation, in O(1).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse(path, ref, blob_fact)
    finally:
        if was_enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _parse(path: Path, ref: str, blob_fact: BlobFact | None) -> dict[str, Subtree]:
    try:
        with open(path, "rb") as fh:
            stat = os.fstat(fh.fileno())
            head = fh.read(len(_SEAL) + 64 + 1 + _LENGTH.size)   # the seal line and the header's length
            end = head.find(b"\n")
            if end < 0 or len(head) < end + 1 + _LENGTH.size:
                return {}
            (size,) = _LENGTH.unpack_from(head, end + 1)
            sealed = end + 1 + _LENGTH.size + size   # the seal line, the length and the header
            if sealed > stat.st_size:
                return {}
            raw = os.pread(fh.fileno(), sealed, 0)   # one read, no copy: what the seal covers
        body = _verified_body(raw, path)
        if body is None or len(raw) != sealed:
            return {}
        region = FileRegion(path, (stat.st_ino, stat.st_size, stat.st_mtime_ns), sealed, stat.st_size - sealed)
        subtrees = unpack_subtrees(body, ref, region, blob_fact)  # sealed: written by us from validated facts
        if subtrees is None:
            return {}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, EOFError, KeyError, TypeError, AttributeError, struct.error, NeoError):
        return {}  # derived data: a broken cache only means reading the ref in full
    replay_journal(path, _base_id(head), subtrees)
    return subtrees


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
        subtrees = unpack_subtrees(body, ref)
    except (ValueError, EOFError, TypeError, KeyError, struct.error):
        return (1, 1)
    if subtrees is None:
        return None
    total, bad = 0, 0
    try:
        for sub in subtrees.values():
            if not sub.sound():   # its encoded facts are not those the header sealed
                total, bad = total + len(sub), bad + max(1, len(sub))
                continue
            more, worse = check_subtree(sub)
            total, bad = total + more, bad + worse
    except (ValueError, KeyError, TypeError, AttributeError, EOFError, NeoError):
        return (max(total, 1), max(bad, 1))
    more, worse = untrusted_journal_entries(path)  # what the journal lays over the base
    return (total + more, bad + worse)
