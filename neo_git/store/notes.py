"""Outcome records as git notes on `refs/notes/neo` (docs/architecture.md §3 "Outcomes").

One note per processed commit, JSON Lines: one object per line, each with `"v"`
(format version), `"id"` (unique per record) and `"ts"`, so `git notes merge -s
cat_sort_uniq` merges two clones' notes line by line, and a note copied onto an
amended or rebased commit (`notes.rewriteRef`) simply gains the new commit's lines.

Notes are written with pygit2 and published by compare-and-swap on the notes ref
(`git notes` itself moves the ref without checking what it replaced), retrying when
another writer (a second worker, `git notes` during an amend, a sync) moved it first.
The note's lines are re-read from the tip each attempt, so nothing is overwritten.
"""
from __future__ import annotations

import json
import random
import time
from collections.abc import Iterable, Iterator
from typing import cast

import pygit2

from neo_git import safejson
from neo_git.store.refcas import compare_and_swap

NOTES_REF = "refs/notes/neo"
NOTE_VERSION = 1
MAX_ATTEMPTS = 40
_BLOB, _TREE = pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_TREE


def parse_note(text: str) -> list[dict]:
    """The JSON objects of a note, one per line; lines that are not our records are skipped."""
    records = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = safejson.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and "id" in value:
            records.append(value)
    return records


def encode_record(record: dict) -> str:
    """One JSON line (sorted keys, so the same record is the same bytes everywhere), every string
    redacted: notes are pushed with the facts, and a description quotes what someone typed."""
    from neo_git.redact import redact_value

    text = json.dumps(redact_value(record), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        # A file name that is not UTF-8 (lone surrogates) is written with \x escapes: a note is UTF-8.
        text = json.dumps(_printable(redact_value(record)), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return text


def _printable(value):
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, list):
        return [_printable(v) for v in value]
    if isinstance(value, dict):
        return {k: _printable(v) for k, v in value.items()}
    return value


def _tip(repo: pygit2.Repository, ref: str) -> pygit2.Oid | None:
    try:
        return cast(pygit2.Oid, repo.references[ref].target)   # a notes ref is direct
    except KeyError:
        return None


def _find_entry(repo: pygit2.Repository, tree: pygit2.Tree | None, hexid: str) -> list[str] | None:
    """Path (list of names) of the note for *hexid* in a notes tree, flat or fanned out."""
    path: list[str] = []
    rest = hexid
    while tree is not None and rest:
        if rest in tree:
            return path + [rest]
        prefix = rest[:2]
        if prefix in tree and tree[prefix].type_str == "tree":
            tree = cast(pygit2.Tree, repo[tree[prefix].id])
            path.append(prefix)
            rest = rest[2:]
            continue
        return None
    return None


def read_note(repo: pygit2.Repository, commit: str, ref: str = NOTES_REF,
              tip: pygit2.Oid | None = None) -> list[dict]:
    """The records on *commit* (full hex) in the notes ref (or at the notes commit *tip*)."""
    tip = _tip(repo, ref) if tip is None else tip
    if tip is None:
        return []
    tree = repo[tip].peel(pygit2.Tree)
    path = _find_entry(repo, tree, commit)
    if path is None:
        return []
    obj: pygit2.Object = tree
    for name in path:
        obj = repo[cast(pygit2.Tree, obj)[name].id]
    return parse_note(cast(pygit2.Blob, obj).data.decode("utf-8", "replace"))


def _put(repo: pygit2.Repository, tree: pygit2.Tree | None, path: list[str], blob: pygit2.Oid) -> pygit2.Oid:
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    if len(path) == 1:
        builder.insert(path[0], blob, _BLOB)
    else:
        sub = cast(pygit2.Tree, repo[tree[path[0]].id]) if tree is not None and path[0] in tree else None
        builder.insert(path[0], _put(repo, sub, path[1:], blob), _TREE)
    return builder.write()


def add_records(repo: pygit2.Repository, commit: str, records: Iterable[dict], *,
                ref: str = NOTES_REF, signature: pygit2.Signature | None = None) -> int:
    """Append *records* (dicts with "id") to the note on *commit*, skipping ids already there;
    returns how many lines were added. Publishes by CAS with bounded retry."""
    records = [r for r in records]
    signature = signature or _signature(repo)
    delay = 0.002
    for _ in range(MAX_ATTEMPTS):
        tip = _tip(repo, ref)
        root = repo[tip].peel(pygit2.Tree) if tip is not None else None
        existing_path = _find_entry(repo, root, commit)
        text = ""
        if existing_path is not None:
            obj = cast(pygit2.Object, root)   # a path was found in it
            for name in existing_path:
                obj = repo[cast(pygit2.Tree, obj)[name].id]
            text = cast(pygit2.Blob, obj).data.decode("utf-8", "replace")
        have = {r.get("id") for r in parse_note(text)}
        new = [r for r in records if r.get("id") not in have]
        if not new:
            return 0
        body = text if not text or text.endswith("\n") else text + "\n"
        body += "".join(encode_record(r) + "\n" for r in new)
        blob = repo.create_blob(body.encode("utf-8"))
        tree = _put(repo, root, existing_path or [commit], blob)
        message = f"Notes added by 'git neo' for {commit[:12]}\n"
        new_commit = repo.create_commit(None, signature, signature, message, tree, [tip] if tip else [])
        if compare_and_swap(repo, ref, tip, new_commit, f"neo: outcome note for {commit[:12]}"):
            return len(new)
        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 1.6, 0.1)
    raise RuntimeError(f"could not update {ref}: it kept moving ({MAX_ATTEMPTS} attempts)")


def move_note(repo: pygit2.Repository, old: str, new: str, *, ref: str = NOTES_REF) -> int:
    """Copy the records of *old* onto *new* (what notes.rewriteRef does, for rewrites git
    did not copy itself); returns the number of lines added."""
    return add_records(repo, new, read_note(repo, old, ref), ref=ref)


def iter_notes(repo: pygit2.Repository, ref: str = NOTES_REF) -> Iterator[tuple[str, list[dict]]]:
    """(annotated commit hex, records) for every note on the ref."""
    if _tip(repo, ref) is None:
        return
    try:
        notes = repo.notes(ref)  # type: ignore[call-arg]  # pygit2's stub omits notes()'s ref argument
    except (KeyError, pygit2.GitError):
        return
    for note in notes:
        try:
            text = note.message
        except (pygit2.GitError, UnicodeDecodeError):
            continue
        yield str(note.annotated_id), parse_note(text or "")


def _signature(repo: pygit2.Repository) -> pygit2.Signature:
    from neo_git.identity import author_identity

    name, _, email = author_identity(repo).partition(" <")
    return pygit2.Signature(name or "git-neo", email.rstrip(">") or "neo@localhost")
