"""Telling a damaged facts ref from one that never existed, and finding its last good tip.

libgit2 (pygit2) reads several kinds of damage as "no such ref": a packed-refs line whose id is
not hex (`zzzz refs/neo/facts`; git itself says "unexpected line in .git/packed-refs"), a folder
in the loose ref's place, a loose ref deleted by hand while its reflog stays. Read as "no facts
yet", the next write would start a new, empty history over the real one. So a ref libgit2
cannot find is new only when nothing remembers it:

* its loose path is not a folder, and packed-refs has no line for it;
* its reflog (`logs/<ref>`, which `git update-ref -d` and libgit2 delete together with the ref)
  names no tip;
* the parse cache (`.git/neo/cache/facts-…bin`, written only after facts were read from the
  ref) does not exist.

A ref that resolves must be a direct ref to a commit that is here and whose tree is a facts
tree (`meta.json` or `facts/`): a symbolic ref, a blob, a tree, a missing commit or a source
commit (`git update-ref refs/neo/facts HEAD`) is damage too. Every case is a `CorruptStore`
whose hint is `git neo doctor --fix`, which restores `last_good_tip` (doctor/refdamage.py).
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import cast

import pygit2

from neo_git.errors import CorruptStore

FIX_HINT = ("`git neo doctor --fix` restores its last good tip (from the reflog, or the remote's copy); "
            "nothing was changed")
_OID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
# A writer appends to the reflog before it renames `<ref>.lock` over the ref (libgit2's
# refdb_fs, git's files backend): for that instant a first tip is in the reflog but not yet a
# ref. A reader that sees the lock waits this long for the writer to finish before judging.
LOCK_WAIT_SECONDS = 1.0


def damaged(ref: str, problem: str) -> CorruptStore:
    """The error every command gives for a damaged *ref*: never "no facts yet"."""
    return CorruptStore(f"{ref} is damaged: {problem}", FIX_HINT)


def is_oid(text: str) -> bool:
    """A full object id (SHA-1 or SHA-256 hex)."""
    return bool(_OID.match(text))


def packed_line(common_dir: Path, ref: str) -> str | None:
    """The id field of *ref*'s line in `packed-refs` as written (None: no such line)."""
    try:
        with open(os.path.join(common_dir, "packed-refs"), "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    except OSError:
        return None   # a folder or unreadable: git reports it on every command; not this ref's evidence
    name = (" " + ref).encode()
    start = 0
    while True:
        found = data.find(name, start)
        if found < 0:
            return None
        end = found + len(name)
        if end == len(data) or data[end:end + 1] in (b"\n", b"\r"):
            line_start = data.rfind(b"\n", 0, found) + 1
            return data[line_start:found].decode("utf-8", "replace")
        start = end


def reflog_tips(common_dir: Path, ref: str) -> list[str]:
    """The tips *ref*'s reflog names, newest first (ids only: whether they are here is not checked)."""
    try:
        with open(os.path.join(common_dir, "logs", ref), encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return []
    tips = []
    for line in reversed(text.splitlines()):
        parts = line.split(" ", 2)
        if len(parts) >= 2 and is_oid(parts[1]) and set(parts[1]) != {"0"}:
            tips.append(parts[1])
    return tips


@lru_cache(maxsize=8)
def _cache_prefix(ref: str) -> str:
    """The start of the parse cache's file name for *ref* (`parse_cache.parse_cache_path`)."""
    from neo_git.store.parse_cache import cache_file

    return cache_file(Path("."), "facts", ref, "").name + "."


def parse_cache_remembers(common_dir: Path, ref: str) -> bool:
    """Whether a parse cache of *ref* exists (written only after facts were read from it)."""
    prefix = _cache_prefix(ref)
    try:
        return any(name.startswith(prefix) and name.endswith(".bin")
                   for name in os.listdir(os.path.join(common_dir, "neo", "cache")))
    except OSError:
        return False


def loose_problem(common_dir: Path, ref: str) -> str | None:
    """What is wrong with the loose file of *ref* (None when it is absent, an id or a symbolic ref)."""
    path = Path(common_dir) / ref
    try:
        text = path.read_bytes()[:200].decode("utf-8", "replace").strip()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return f"a folder is in the place of its file ({path})"
    except OSError as exc:
        return f"its file {path} cannot be read: {exc.strerror}"
    if is_oid(text) or text.startswith("ref: "):
        return None
    return f"its file {path} does not hold a commit id (it starts {text[:20]!r})"


def packed_problem(common_dir: Path, ref: str) -> str | None:
    """What is wrong with *ref*'s line in packed-refs (None: no line, or it holds an id)."""
    packed = packed_line(common_dir, ref)
    if packed is None or is_oid(packed):
        return None
    return f"its line in {Path(common_dir) / 'packed-refs'} holds {packed[:44]!r}, not an object id"


def absent_problem(common_dir: Path, ref: str) -> str | None:
    """Why a ref libgit2 cannot find is lost rather than new (None: it never existed)."""
    # Plain os.path (not pathlib) on this path: it runs on every read of a repository without facts.
    if os.path.isdir(os.path.join(common_dir, ref)):
        return f"a folder is in the place of its file ({os.path.join(common_dir, ref)})"
    common_dir = Path(common_dir)
    packed = packed_line(common_dir, ref)
    if packed is not None:
        # Not an id; or an id libgit2 missed (it bisects a packed-refs marked `sorted` that is not).
        return packed_problem(common_dir, ref) or (
            f"its line in {common_dir / 'packed-refs'} ({packed[:12]}) cannot be read (is the file out of order?)")
    tips = reflog_tips(common_dir, ref)
    if tips:
        return f"it is gone, but its reflog ({common_dir / 'logs' / ref}) names its last tip {tips[0][:12]}"
    if parse_cache_remembers(common_dir, ref):
        return (f"it is gone and its reflog too, but the parse cache in {common_dir / 'neo' / 'cache'} "
                "holds facts read from it (deleted on purpose? delete `.git/neo/cache/facts-*` too)")
    return None


def wait_for_writer(common_dir: Path, ref: str) -> None:
    """While `<ref>.lock` exists (a first write in progress), wait up to LOCK_WAIT_SECONDS."""
    lock = Path(common_dir) / f"{ref}.lock"
    give_up = time.monotonic() + LOCK_WAIT_SECONDS
    while lock.exists() and time.monotonic() < give_up:
        time.sleep(0.01)


def tip_problem(repo: pygit2.Repository, oid: pygit2.Oid, strict: bool = False) -> str | None:
    """What is wrong with *oid* as a facts tip (None: a commit here whose tree is a facts tree;
    an empty tree passes too unless *strict*, which a tip to restore must be)."""
    try:
        obj = repo.get(oid)
    except (ValueError, pygit2.GitError):
        obj = None
    if obj is None:
        return f"it points at {str(oid)[:12]}, which is not in this repository"
    if not isinstance(obj, pygit2.Commit):
        return f"it points at a {obj.type_str}, not a commit ({str(oid)[:12]})"
    try:
        tree = obj.tree
    except (KeyError, ValueError, pygit2.GitError):
        return "its tree is missing" if strict else None   # readers name it (a partial clone fetches it)
    if (strict or len(tree)) and "meta.json" not in tree and "facts" not in tree:
        subject = (obj.message or "").strip().splitlines()[0][:60] if (obj.message or "").strip() else ""
        return f"it points at commit {str(oid)[:12]} ({subject!r}), which holds no facts (no meta.json, no facts/)"
    return None


def checked_tip(repo: pygit2.Repository, common_dir: Path, ref: str,
                good: set[pygit2.Oid] | None = None) -> pygit2.Oid | None:
    """The commit *ref* points at, None when it never existed, `CorruptStore` (pointing at `git neo
    doctor --fix`) for any damage. *good* remembers the tips already checked (one check each)."""
    try:
        reference = repo.references[ref]
    except KeyError:
        problem = absent_problem(common_dir, ref)
        if problem is not None and os.path.exists(os.path.join(common_dir, ref + ".lock")):
            wait_for_writer(common_dir, ref)   # a first write between its reflog and its ref
            try:
                if ref in repo.references:
                    return checked_tip(repo, common_dir, ref, good)
            except pygit2.GitError:
                pass   # unreadable now: judged below like any other damage
            problem = absent_problem(common_dir, ref) or loose_problem(common_dir, ref)
        if problem is not None:
            raise damaged(ref, problem) from None
        return None
    except (pygit2.GitError, OSError) as exc:
        # A loose ref file that holds no id ("corrupted loose reference file"), a packed-refs
        # line libgit2 cannot parse ("corrupted packed references file"); OSError: a link loop
        # in the ref's place ("could not stat").
        raise damaged(ref, loose_problem(common_dir, ref) or packed_problem(common_dir, ref)
                      or str(exc).split(": ", 1)[-1]) from None
    if reference.type == pygit2.enums.ReferenceType.SYMBOLIC:
        # Reading through it would show another ref's tree, and CAS on it can never succeed.
        raise damaged(ref, f"it is a symbolic ref (to {reference.target}), not a ref git-neo can use")
    target = cast(pygit2.Oid, reference.target)   # a direct ref (a symbolic one is refused above)
    if good is not None and target in good:
        return target
    if os.path.isdir(os.path.join(common_dir, ref)):   # found packed, but no write could replace the folder
        raise damaged(ref, f"a folder is in the place of its file ({os.path.join(common_dir, ref)})")
    problem = tip_problem(repo, target)
    if problem is not None and repo.get(target) is None:
        from neo_git.store.objects import fetch_missing

        fetch_missing(repo, [target])    # a partial clone may still have it to give
        problem = tip_problem(repo, target)
    if problem is not None:
        raise damaged(ref, problem)
    if good is not None:
        good.add(target)
    return target


def good_tips(repo: pygit2.Repository, common_dir: Path, ref: str) -> Iterator[tuple[str, str]]:
    """(tip, where it was found) for every candidate tip of *ref* that `tip_problem` accepts:
    its reflog, newest first, then the remotes' tracking refs `refs/remotes/<r>/neo/facts`."""
    for tip in reflog_tips(common_dir, ref):
        try:
            if tip_problem(repo, pygit2.Oid(hex=tip), strict=True) is None:
                yield tip, "the reflog"
        except ValueError:
            continue
    try:
        remotes = list(repo.remotes.names())
    except (pygit2.GitError, ValueError):
        remotes = []
    tail = ref.removeprefix("refs/")
    for remote in remotes:
        tracking = f"refs/remotes/{remote}/{tail}"
        try:
            reference = repo.references.get(tracking)
            target = cast(pygit2.Oid, reference.resolve().target) if reference is not None else None
        except (pygit2.GitError, ValueError, KeyError):
            continue
        if target is not None and tip_problem(repo, target, strict=True) is None:
            yield str(target), f"{remote}'s copy ({tracking})"


def last_good_tip(repo: pygit2.Repository, common_dir: Path, ref: str) -> tuple[str, str] | None:
    """The tip `doctor --fix` restores and where it came from (None: no candidate is here)."""
    return next(iter(good_tips(repo, common_dir, ref)), None)
