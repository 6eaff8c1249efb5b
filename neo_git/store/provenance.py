"""Who brought each fact onto `refs/neo/facts`: read from the ref's own history.

A fact's *author* here is the author of the commit that gave it its current text
(subject, body, kind): the commit that introduced it, or a later one that rewrote
its text. Metadata-only edits (a supersession, a confidence bump, a merge) keep the
author. It is derived from git, never written to the ref, so nobody can claim it in
a fact's JSON; `metadata.author` (what the fact says about itself) is not used.

Merge commits are transparent: a path whose blob (or text) equals one parent's came
from that parent and keeps the author it has there; only text that is in no parent
(an "evil merge") is the merge author's. The walk goes through both sides before the
merge, so when the author on record is a commit of the *other* side (a rewrite a sync
held back, where the merge kept ours) it is looked up again along the source parent's
history: otherwise a held rewrite would make the rewriter the author of the text it
failed to change.

Each fact also records *which* commit that was (`fact_origins`): whether that commit's
author is believed is `store/trust.py`'s question (a commit a sync brought in is judged by
its verified signature or the remote it came from, never by the e-mail it claims).

The answer is cached in `.git/neo/cache/` keyed by the tip; a new tip walks only the
commits since the cached one (one diff per commit, done by libgit2, which skips
unchanged 2-hex folders), so recall pays a few ms after a local add. What such a walk
changed is appended to a journal beside the cache (`authors-<ref>.log`, one JSON line from
tip to tip) instead of rewriting every fact's origin; the cache is rewritten once the
journal passes a quarter of it.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pygit2

from neo_git import safejson
from neo_git.store.parse_cache import cache_file
from neo_git.store.ref_damage import checked_tip
from neo_git.store.ref_facts import fact_id_of

# 3: {"origins": [[email, commit], ...], "facts": {id: index into origins}}: a few hundred
# distinct (author, commit) pairs stand for 50,000 facts, so the file is a fifth of format 2's
# {id: [email, commit]} and reads in a third of the time (1 held the e-mail alone).
CACHE_FORMAT = 5   # 4: a merge's paths take the author from the parent they came from; 5: with a journal
JOURNAL_MIN_BYTES = 256 * 1024   # the journal is folded into the cache past this or a quarter of it
_TEXT_KEYS = ("subject", "body", "kind")
# (common dir, ref) -> (tip, authors): recall asks on every question; this process
# answers from memory while the tip is unchanged, without reading the cache file.
_MEMO: dict[tuple[str, str], tuple[str, dict[str, tuple[str, str]]]] = {}


def fact_origins(repo: pygit2.Repository, common_dir: Path,
                 ref: str = "refs/neo/facts") -> dict[str, tuple[str, str]]:
    """{fact id: (claimed e-mail, commit id)} of the commit that gave each fact on *ref* its text."""
    tip = checked_tip(repo, common_dir, ref)   # a damaged ref: CorruptStore, never "no authors"
    if tip is None:
        return {}
    key = (str(common_dir), ref)
    memo = _MEMO.get(key)
    if memo is not None and memo[0] == str(tip):
        return memo[1]
    path = _cache_path(common_dir, ref)
    cached_tip, authors = memo if memo is not None else _read_cache(path, ref)
    if cached_tip == str(tip):
        _MEMO[key] = (cached_tip, authors)
        return authors
    before = authors
    authors = dict(authors)  # the memo's dict is shared with earlier callers: never edit it
    walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    hidden = pygit2.Oid(hex=cached_tip) if cached_tip else None
    if hidden is not None and hidden in repo and repo.descendant_of(tip, hidden):
        walker.hide(hidden)
    else:
        authors, hidden = {}, None
    for commit in walker:
        _attribute(repo, commit, authors)
    if hidden is None or not _append_journal(path, cached_tip, str(tip), before, authors):
        _write_cache(path, ref, str(tip), authors)
    _MEMO[key] = (str(tip), authors)
    return authors


def _attribute(repo: pygit2.Repository, commit: pygit2.Commit, authors: dict[str, tuple[str, str]]) -> None:
    origin = ((commit.author.email or "").strip().lower(), str(commit.id))
    parents = [repo[p] for p in commit.parent_ids if p in repo]   # a shallow boundary has none here
    if len(parents) > 1:
        _attribute_merge(repo, commit, parents, origin, authors)
        return
    if not parents:
        for path, _ in _blob_paths(repo, commit.tree):
            fact_id = _id_of(path)
            if fact_id:
                authors[fact_id] = origin
        return
    diff = commit.tree.diff_to_tree(parents[0].tree, swap=True)   # parent -> commit
    for delta in diff.deltas:
        if delta.status not in (pygit2.enums.DeltaStatus.ADDED, pygit2.enums.DeltaStatus.MODIFIED):
            continue
        path = delta.new_file.path
        fact_id = _id_of(path)
        if fact_id is None:
            continue
        new = delta.new_file.id
        olds = [_blob_at(p.tree, path) for p in parents]
        if any(old == new for old in olds):
            continue   # the blob came whole from one parent
        text = _text(repo, new)
        if any(old is not None and _text(repo, old) == text for old in olds):
            continue   # same text as a parent's: a metadata edit or a merge, the author stays
        authors[fact_id] = origin


def _attribute_merge(repo: pygit2.Repository, commit: pygit2.Commit, parents: list, origin: tuple[str, str],
                     authors: dict[str, tuple[str, str]]) -> None:
    """A merge: each path that differs between the merge and one of its parents came from the
    parent holding the same blob (or text), and keeps the author it has *there*; text that is in
    no parent is the merge author's. The walk has gone through both sides, so the author on
    record may be the other side's change (a rewrite a sync held back, where the merge kept
    ours): that is checked, and looked up again along the parent's history when it is wrong."""
    # One diff per parent gives every blob needed (looking paths up in trees costs ~50 µs each).
    new_ids: dict[str, pygit2.Oid] = {}
    olds: list[dict[str, pygit2.Oid | None]] = []   # per parent: {path: its blob there} where it differs
    for parent in parents:
        differs: dict[str, pygit2.Oid | None] = {}
        for delta in commit.tree.diff_to_tree(parent.tree, swap=True).deltas:
            if delta.status in (pygit2.enums.DeltaStatus.ADDED, pygit2.enums.DeltaStatus.MODIFIED):
                path = delta.new_file.path
                new_ids[path] = delta.new_file.id
                differs[path] = None if delta.status == pygit2.enums.DeltaStatus.ADDED else delta.old_file.id
        olds.append(differs)
    elsewhere: dict[int, set[str]] = {}   # parent index -> commits of the other parents that it lacks
    for path in sorted(new_ids):
        fact_id = _id_of(path)
        if fact_id is None:
            continue
        index = next((i for i, differs in enumerate(olds) if path not in differs), None)
        if index is None:   # in no parent as it is: the same text, else the merge's own
            text = _text(repo, new_ids[path])
            index = next((i for i, differs in enumerate(olds)
                          if differs[path] is not None and _text(repo, differs[path]) == text), None)
        if index is None:
            authors[fact_id] = origin   # an "evil merge": text that is in no parent
            continue
        if index not in elsewhere:
            elsewhere[index] = _only_in_others(repo, parents[index], parents)
        current = authors.get(fact_id)
        if current is not None and current[1] and current[1] not in elsewhere[index]:
            continue   # the author on record is in the source parent's history
        authors[fact_id] = _origin_along(repo, parents[index], path) or UNKNOWN_ORIGIN


UNKNOWN_ORIGIN = ("unknown", "")   # no commit found: judged unverified (trust fails closed)
MAX_LOOKBACK = 5000                # commits followed to find where a merged text came from


def _source_parent(repo: pygit2.Repository, parents: list, path: str, blob: pygit2.Oid):
    """The parent holding *blob* at *path* (else the same text), or None."""
    for parent in parents:
        if _blob_at(parent.tree, path) == blob:
            return parent
    text = _text(repo, blob)
    for parent in parents:
        old = _blob_at(parent.tree, path)
        if old is not None and _text(repo, old) == text:
            return parent
    return None


def _origin_along(repo: pygit2.Repository, commit: pygit2.Commit, path: str) -> tuple[str, str] | None:
    """(e-mail, commit) of the commit that gave *path* its text as *commit* has it, following at
    each step a parent with the same blob (or text); None past MAX_LOOKBACK commits."""
    for _ in range(MAX_LOOKBACK):
        blob = _blob_at(commit.tree, path)
        parents = [repo[p] for p in commit.parent_ids if p in repo]
        source = _source_parent(repo, parents, path, blob) if blob is not None else None
        if source is None:
            return ((commit.author.email or "").strip().lower(), str(commit.id))
        commit = source
    return None


def _only_in_others(repo: pygit2.Repository, source: pygit2.Commit, parents: list) -> set[str]:
    """Ids of the commits the other *parents* have and *source* does not (their side of the merge)."""
    walker = repo.walk(None)
    for parent in parents:
        if parent.id != source.id:
            walker.push(parent.id)
    walker.hide(source.id)
    return {str(c.id) for c in walker}


def _blob_paths(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = ""):
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.type_str == "tree" and path.count("/") < 2:
            yield from _blob_paths(repo, repo[entry.id], path + "/")
        elif entry.type_str == "blob":
            yield path, entry.id


def _blob_at(tree: pygit2.Tree, path: str) -> pygit2.Oid | None:
    try:
        return tree[path].id
    except KeyError:
        return None


def _id_of(path: str) -> str | None:
    parts = path.split("/")
    if len(parts) != 3 or parts[0] != "facts":
        return None
    return fact_id_of(parts[1], parts[2])


def _text(repo: pygit2.Repository, oid: pygit2.Oid) -> tuple | None:
    try:
        blob = repo[oid]
        if not isinstance(blob, pygit2.Blob) or blob.size > 1 << 20:
            return ("<unreadable>", str(oid))
        data = safejson.loads(blob.data)
        return tuple(data.get(k) for k in _TEXT_KEYS) if isinstance(data, dict) else ("<not a fact>", str(oid))
    except (ValueError, UnicodeDecodeError, KeyError):
        return ("<not json>", str(oid))


def _cache_path(common_dir: Path, ref: str) -> Path:
    return cache_file(common_dir, "authors", ref, ".json")   # .git/neo/cache/authors-<ref>.json


def _journal_path(path: Path) -> Path:
    return path.with_suffix(".log")   # .git/neo/cache/authors-<ref>.log


def _append_journal(path: Path, old_tip: str, tip: str, before: dict, after: dict) -> bool:
    """Record the origins a walk from *old_tip* to *tip* changed as one line of the journal
    beside the cache (a local add must not rewrite the origins of 50,000 facts: ~0.3 s of JSON);
    False when the journal has grown to a quarter of the cache (then the cache is rewritten)."""
    journal = _journal_path(path)
    try:
        size = journal.stat().st_size if journal.exists() else 0
        if size > max(JOURNAL_MIN_BYTES, path.stat().st_size // 4):
            return False
        changed = {fact_id: list(origin) for fact_id, origin in after.items() if before.get(fact_id) != origin}
        if len(after) < len(before):
            return False   # something was dropped: only a rewrite says so
        line = json.dumps({"from": old_tip, "to": tip, "set": changed}, separators=(",", ":")) + "\n"
        fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))   # one write: appenders never interleave a line
        finally:
            os.close(fd)
        return True
    except OSError:
        return False


def _replay_journal(path: Path, tip: str, authors: dict[str, tuple[str, str]]) -> tuple[str, dict]:
    """The cache brought forward by the journal's lines that chain from *tip* (others skipped;
    a torn or foreign line ends the replay)."""
    try:
        lines = _journal_path(path).read_bytes().splitlines()
    except OSError:
        return tip, authors
    authors = dict(authors) if lines else authors
    for raw in lines:
        try:
            record = safejson.loads(raw, max_depth=None)
            changed, old, new = record["set"], record["from"], record["to"]
            if not (isinstance(changed, dict) and isinstance(new, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", new)):
                break
            pairs = {k: (v[0], v[1]) for k, v in changed.items()
                     if type(v) is list and len(v) == 2 and type(v[0]) is str and type(v[1]) is str}
            if len(pairs) != len(changed):
                break
        except (ValueError, UnicodeDecodeError, KeyError, TypeError, AttributeError):
            break
        if old != tip:
            continue   # written against another state (a concurrent writer's twin line)
        authors.update(pairs)
        tip = new
    return tip, authors


def _read_cache(path: Path, ref: str) -> tuple[str | None, dict[str, tuple[str, str]]]:
    tip, authors = _read_base(path, ref)
    if tip is None:
        return None, {}
    return _replay_journal(path, tip, authors)


def _read_base(path: Path, ref: str) -> tuple[str | None, dict[str, tuple[str, str]]]:
    try:
        # No depth walk (20 ms at 50,000 facts): only strings and whole numbers, nothing nested deeper.
        data = safejson.loads(path.read_bytes(), max_depth=None)
        origins, facts = data.get("origins"), data.get("facts")
        tip = data.get("tip")
        if data.get("format") == CACHE_FORMAT and data.get("ref") == ref and isinstance(tip, str) \
                and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", tip) \
                and isinstance(origins, list) and isinstance(facts, dict):
            pairs = [(v[0], v[1]) for v in origins
                     if type(v) is list and len(v) == 2 and type(v[0]) is str and type(v[1]) is str]
            count = len(pairs)
            authors = {k: pairs[v] for k, v in facts.items() if type(v) is int and 0 <= v < count}
            if count == len(origins) and len(authors) == len(facts):   # all of it, or none (walk again)
                return data["tip"], authors
    except (OSError, ValueError, AttributeError, KeyError, IndexError, TypeError):
        pass   # derived data: a missing or broken cache means walking the history again
    return None, {}


def _write_cache(path: Path, ref: str, tip: str, authors: dict[str, tuple[str, str]]) -> None:
    from neo_git.errors import NeoError
    from neo_git.fileio import atomic_write

    index: dict[tuple[str, str], int] = {}
    facts = {fact_id: index.setdefault(origin, len(index)) for fact_id, origin in authors.items()}
    data = {"format": CACHE_FORMAT, "ref": ref, "tip": tip, "origins": list(index), "facts": facts}
    try:
        atomic_write(path, json.dumps(data, separators=(",", ":")).encode("utf-8"))
        _journal_path(path).unlink(missing_ok=True)   # its lines chain from an older tip: all skipped now
    except (OSError, NeoError):
        pass
