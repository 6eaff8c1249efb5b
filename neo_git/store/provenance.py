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
from collections import ChainMap
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import cast

import pygit2

from neo_git import safejson
from neo_git.store.parse_cache import cache_file
from neo_git.store.ref_damage import checked_tip
from neo_git.store.ref_facts import fact_id_of

# {"origins": [[email, commit], ...], "facts": [the ids of origin 0's facts, joined, ...]}: a few
# hundred distinct (author, commit) pairs stand for 50,000 facts, and each pair's ids are one
# string (16 hex digits each), which JSON reads at once: a cold process read format 5's
# {id: index into origins} (an object of 50,000 keys) in ~30 ms, this in a few.
# (1 held the e-mail alone; 2 {id: [email, commit]}; 4: a merge's paths take the author from the
# parent they came from; 5: with a journal; 6: ids joined per origin.)
CACHE_FORMAT = 6
JOURNAL_MIN_BYTES = 256 * 1024   # the journal is folded into the cache past this or a quarter of it
_TEXT_KEYS = ("subject", "body", "kind")
# (common dir, ref) -> (tip, authors): recall asks on every question; this process
# answers from memory while the tip is unchanged, without reading the cache file.
_MEMO: dict[tuple[str, str], tuple[str, Mapping[str, tuple[str, str]]]] = {}


def fact_origins(repo: pygit2.Repository, common_dir: Path,
                 ref: str = "refs/neo/facts") -> Mapping[str, tuple[str, str]]:
    """{fact id: (claimed e-mail, commit id)} of the commit that gave each fact on *ref* its text
    (read it only: an `Origins` when it comes from the cache as it is)."""
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
    walked: dict[str, tuple[str, str]] = {}   # what the commits since the cached tip set
    walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    hidden = pygit2.Oid(hex=cached_tip) if cached_tip else None
    if hidden is not None and hidden in repo and repo.descendant_of(tip, hidden):
        walker.hide(hidden)
        # ChainMap writes to its first map only: the memo's stays as it is
        seen: MutableMapping[str, tuple[str, str]] = ChainMap(walked, cast("MutableMapping[str, tuple[str, str]]", authors))
    else:
        authors, hidden, seen = {}, None, walked
    for commit in walker:
        _attribute(repo, commit, seen)
    authors = _overlaid(authors, walked)
    if hidden is None or not _append_journal(path, cached_tip or "", str(tip), walked):   # hidden: a cached tip
        _write_cache(path, ref, str(tip), authors)
    _MEMO[key] = (str(tip), authors)
    return authors


def _overlaid(authors: Mapping[str, tuple[str, str]], changed: dict[str, tuple[str, str]]
              ) -> Mapping[str, tuple[str, str]]:
    """*authors* with *changed* laid over it (new objects; an `Origins` stays one, undecoded)."""
    if not changed:
        return authors
    if isinstance(authors, Origins):
        return authors.with_changes(changed)
    return {**authors, **changed}


def _attribute(repo: pygit2.Repository, commit: pygit2.Commit,
               authors: MutableMapping[str, tuple[str, str]]) -> None:
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
    for path, new, _old in _changed_blobs(repo, parents[0].tree, commit.tree):   # parent -> commit
        fact_id = _id_of(path)
        if fact_id is None:
            continue
        olds = [_blob_at(p.tree, path) for p in parents]
        if any(old == new for old in olds):
            continue   # the blob came whole from one parent
        text = _text(repo, new)
        if any(old is not None and _text(repo, old) == text for old in olds):
            continue   # same text as a parent's: a metadata edit or a merge, the author stays
        authors[fact_id] = origin


def _attribute_merge(repo: pygit2.Repository, commit: pygit2.Commit, parents: list, origin: tuple[str, str],
                     authors: MutableMapping[str, tuple[str, str]]) -> None:
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
        for path, new, old in _changed_blobs(repo, parent.tree, commit.tree):
            new_ids[path] = new
            differs[path] = old
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
                          if (old := differs[path]) is not None and _text(repo, old) == text), None)
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
            yield from _blob_paths(repo, cast(pygit2.Tree, repo[entry.id]), path + "/")
        elif entry.type_str == "blob":
            yield path, entry.id


def _changed_blobs(repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree, prefix: str = ""):
    """(path, blob id, the blob there before or None) of each blob of *new* (down to
    `facts/<xx>/`) added or changed since *old*: what a diff's added and modified entries give,
    reading only the folders whose tree id changed. (libgit2's tree diff reads every folder of
    both trees: 0.1 s for a commit of two facts among 50,000.)"""
    before = {entry.name: entry for entry in old} if old is not None else {}
    for entry in new:
        path = f"{prefix}{entry.name}"
        was = before.get(entry.name)
        if was is not None and was.id == entry.id:
            continue
        if entry.type_str == "tree" and path.count("/") < 2:
            inner = cast(pygit2.Tree, repo[was.id]) if was is not None and was.type_str == "tree" else None
            yield from _changed_blobs(repo, inner, cast(pygit2.Tree, repo[entry.id]), path + "/")
        elif entry.type_str == "blob":
            yield path, entry.id, was.id if was is not None and was.type_str == "blob" else None


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


def _append_journal(path: Path, old_tip: str, tip: str, walked: dict[str, tuple[str, str]]) -> bool:
    """Record the origins a walk from *old_tip* to *tip* set (*walked*) as one line of the journal
    beside the cache (a local add must not rewrite the origins of 50,000 facts: ~0.3 s of JSON);
    False when the journal has grown to a quarter of the cache (then the cache is rewritten)."""
    journal = _journal_path(path)
    try:
        size = journal.stat().st_size if journal.exists() else 0
        if size > max(JOURNAL_MIN_BYTES, path.stat().st_size // 4):
            return False
        changed = {fact_id: list(origin) for fact_id, origin in walked.items()}
        line = json.dumps({"from": old_tip, "to": tip, "set": changed}, separators=(",", ":")) + "\n"
        fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))   # one write: appenders never interleave a line
        finally:
            os.close(fd)
        return True
    except OSError:
        return False


def _replay_journal(path: Path, tip: str, authors: Mapping[str, tuple[str, str]]
                    ) -> tuple[str, Mapping[str, tuple[str, str]]]:
    """The cache brought forward by the journal's lines that chain from *tip* (others skipped;
    a torn or foreign line ends the replay)."""
    try:
        lines = _journal_path(path).read_bytes().splitlines()
    except OSError:
        return tip, authors
    changed: dict[str, tuple[str, str]] = {}
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
        changed.update(pairs)
        tip = new
    return tip, _overlaid(authors, changed)


class Origins(Mapping[str, tuple[str, str]]):
    """{fact id: (claimed e-mail, commit id)} as the cache keeps it: the ids of each origin joined
    in one string (16 hex digits each, an id under two origins: the later one). The per-fact
    dict is built when a fact is first looked up or every fact walked; `groups()` gives each
    origin with its ids without it: a trust check decides per commit, not per fact (building the
    dict of 50,000 facts cost a cold recall ~30 ms for nothing)."""

    def __init__(self, groups: list[tuple[tuple[str, str], str]]) -> None:
        self._groups = groups
        self._dict: dict[str, tuple[str, str]] | None = None

    def groups(self) -> list[tuple[tuple[str, str], str]]:
        """[(origin, its facts' ids joined)], in the cache's order."""
        return self._groups

    def with_changes(self, changed: Mapping[str, tuple[str, str]]) -> Origins:
        """These origins with *changed* ({fact id: origin}) laid over them, as groups after these."""
        grouped: dict[tuple[str, str], list[str]] = {}
        for fact_id, origin in changed.items():
            if len(fact_id) == 16:
                grouped.setdefault(origin, []).append(fact_id)
        return Origins([*self._groups, *((origin, "".join(ids)) for origin, ids in grouped.items())])

    def _all(self) -> dict[str, tuple[str, str]]:
        if self._dict is None:
            found: dict[str, tuple[str, str]] = {}
            for origin, joined in self._groups:
                found.update(dict.fromkeys(split_ids(joined), origin))
            self._dict = found
        return self._dict

    def __getitem__(self, fact_id: str) -> tuple[str, str]:
        return self._all()[fact_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __bool__(self) -> bool:
        return any(joined for _origin, joined in self._groups)

    def items(self):
        return self._all().items()


def split_ids(joined: str) -> list[str]:
    """Fact ids joined as `Origins` keeps them, one by one."""
    return [joined[i:i + 16] for i in range(0, len(joined), 16)]


def _read_cache(path: Path, ref: str) -> tuple[str | None, Mapping[str, tuple[str, str]]]:
    tip, authors = _read_base(path, ref)
    if tip is None:
        return None, {}
    return _replay_journal(path, tip, authors)


def _read_base(path: Path, ref: str) -> tuple[str | None, Mapping[str, tuple[str, str]]]:
    try:
        # No depth walk (20 ms at 50,000 facts): only strings and whole numbers, nothing nested deeper.
        data = safejson.loads(path.read_bytes(), max_depth=None)
        origins, facts = data.get("origins"), data.get("facts")
        tip = data.get("tip")
        if data.get("format") == CACHE_FORMAT and data.get("ref") == ref and isinstance(tip, str) \
                and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", tip) \
                and isinstance(origins, list) and isinstance(facts, list) and len(origins) == len(facts):
            groups = []
            for v, ids in zip(origins, facts):
                # (An id that is no fact's only names no fact: as in a walk, what counts is the ids
                # of the facts on the ref. Checking 800 KB of hex digits cost more than the read.)
                if not (type(v) is list and len(v) == 2 and type(v[0]) is str and type(v[1]) is str
                        and type(ids) is str and len(ids) % 16 == 0):
                    return None, {}   # all of it, or none (walk again)
                groups.append(((v[0], v[1]), ids))
            return data["tip"], Origins(groups)
    except (OSError, ValueError, AttributeError, KeyError, IndexError, TypeError):
        pass   # derived data: a missing or broken cache means walking the history again
    return None, {}


def _write_cache(path: Path, ref: str, tip: str, authors: Mapping[str, tuple[str, str]]) -> None:
    from neo_git.errors import NeoError
    from neo_git.fileio import atomic_write

    groups: dict[tuple[str, str], list[str]] = {}
    for fact_id, origin in authors.items():
        if len(fact_id) == 16:   # (every id a walk finds is: 16 hex digits)
            groups.setdefault(origin, []).append(fact_id)
    data = {"format": CACHE_FORMAT, "ref": ref, "tip": tip, "origins": list(groups),
            "facts": ["".join(ids) for ids in groups.values()]}
    try:
        atomic_write(path, json.dumps(data, separators=(",", ":")).encode("utf-8"))
        _journal_path(path).unlink(missing_ok=True)   # its lines chain from an older tip: all skipped now
    except (OSError, NeoError):
        pass
