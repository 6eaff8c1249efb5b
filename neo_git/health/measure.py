"""Health snapshots of a commit's tree or of the index, read from git objects only.

The work tree is never looked at: a snapshot of HEAD is what was committed, a
snapshot of the index is what `git commit` would record. The measuring is done
by `scan.py`; per-file results and whole-snapshot states come from the cache
(`cache.py`) when the same bytes or tree were measured before, so a new commit
costs only its changed files, and `cached_summary` costs no measuring at all.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import cast

import pygit2

from neo_git.errors import NeoError
from neo_git.health.cache import cache_path
from neo_git.health.pygit2_sources import IndexSource, TreeSource, head_tree, open_index
from neo_git.health.snapshot import (  # noqa: F401 - re-exported
    DEFAULT_GOD_FILE_FUNCTIONS,
    DEFAULT_GOD_FILE_LINES,
    HealthSnapshot,
    god_file_thresholds,
    health_exclusions,
    snapshot_from_state,
)
from neo_git.health.sources import Source, file_reader

# --- public entry points ------------------------------------------------------

def snapshot_commit(repo: pygit2.Repository, rev: str = "HEAD", *, progress: bool = False,
                    include_type_checking: bool = False, workers: int = 1,
                    include_excluded: bool = False) -> HealthSnapshot:
    """Measure the tree of commit *rev* (any revision git understands; a tree id works too).

    *workers* > 1 lets a cold scan of 64+ uncached files parse in that many processes.
    The library default is 1; `git neo health` at a terminal asks for up to 4 and hooks
    stay at 1 (see `cli/health._workers`); `benchmarks/health_bench.py` measures both.
    """
    return _measure(repo, _commit_source(repo, rev), include_type_checking, progress=progress, workers=workers,
                    include_excluded=include_excluded)


def _commit_source(repo: pygit2.Repository, rev: str) -> TreeSource:
    """The tree of *rev*, with its parents' and HEAD's trees as states to start from."""
    rev_id, tree = resolve_tree(repo, rev)
    bases = []
    try:
        bases = [parent.tree for parent in cast(pygit2.Commit, repo[rev_id]).parents]
    except (AttributeError, KeyError, ValueError, pygit2.GitError):  # a tree id: no parents
        pass
    return TreeSource(repo, rev_id, tree, bases + head_tree(repo))


def snapshot_walk(repo: pygit2.Repository, revs: Iterable[str]) -> Iterator[HealthSnapshot]:
    """The snapshots of the commits *revs*, in order, for a history (`git neo report`).

    Each scan starts from the state of the commit measured just before it, held in memory,
    when that commit is its parent (so walk oldest first): a 1,000-commit walk skips a JSON
    round trip through the cache per commit. Only the last commit's state is stored (a
    walk ends at the newest commit, where the next scan will start); per-file results are
    cached as always."""
    from neo_git.health.cache import StoredState
    from neo_git.health.scan import Scan

    revs = list(revs)
    held = None
    for number, rev in enumerate(revs):
        rev_id, tree = resolve_tree(repo, rev)
        try:
            bases = [parent.tree for parent in cast(pygit2.Commit, repo[rev_id]).parents]
        except (AttributeError, KeyError, ValueError, pygit2.GitError):
            bases = []
        source = TreeSource(repo, rev_id, tree, bases + head_tree(repo))
        scan = Scan(cache_path(repo), source, progress=False, workers=1, base=held, store=number == len(revs) - 1)
        state = scan.state()
        held = StoredState(tree.id.raw, state)
        yield snapshot_from_state(repo, rev_id, state, False, scan.row_metrics, read=file_reader(source))


def snapshot_index(repo: pygit2.Repository, *, progress: bool = False, include_type_checking: bool = False,
                   workers: int = 1, include_excluded: bool = False) -> HealthSnapshot:
    """Measure the staged content: the index git would commit now.

    Honours GIT_INDEX_FILE, which git sets for hooks and during `git commit -a`
    / `git commit <paths>` (a temporary index); like git, a relative value is
    taken relative to the current directory.
    """
    source = IndexSource(repo, open_index(repo), head_tree(repo))
    return _measure(repo, source, include_type_checking, progress=progress, workers=workers,
                    include_excluded=include_excluded)


def resolve_tree(repo: pygit2.Repository, rev: str) -> tuple[str, pygit2.Tree]:
    """(commit id or tree id, tree) for a revision; NeoError if it names nothing usable."""
    rev = str(rev)
    if rev == "HEAD" and repo.head_is_unborn:
        raise NeoError("HEAD has no commits yet, so there is nothing to measure",
                       "make a first commit, or measure the staged files with `git neo health --staged`")
    try:
        obj = repo.revparse_single(rev)
    except (KeyError, ValueError, pygit2.GitError):
        raise NeoError(f"unknown revision '{rev}'",
                       "use a commit id, branch or tag; `git log --oneline` lists commits") from None
    for kind in (pygit2.Commit, pygit2.Tree):
        try:
            target = obj.peel(kind)
        except (ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            continue
        tree = target.tree if kind is pygit2.Commit else target
        return str(target.id), cast(pygit2.Tree, tree)
    raise NeoError(f"'{rev}' is not a commit", "name a commit, branch or tag")


def cached_summary(repo: pygit2.Repository, rev: str = "HEAD") -> dict | None:
    """HealthSnapshot.summary() of *rev* if the cache already holds the state of exactly its
    tree, else None; never scans, parses or raises (a cheap read for recall).

    The cache is opened read-only: nothing is created, pruned or repaired, and a
    locked, corrupt or other-version cache simply reads as a miss.
    """
    from neo_git.health.cache import MetricsCache
    from neo_git.health.versions import analyzer_version, state_version

    try:
        rev_id, tree = resolve_tree(repo, rev)
        with MetricsCache(cache_path(repo), analyzer_version(), state_version(), read_only=True) as cache:
            found = cache.load_state([tree.id.raw])
        if found is None:
            return None
        return snapshot_from_state(repo, rev_id, found.state, include_type_checking=False,
                                   read=file_reader(TreeSource(repo, rev_id, tree, []))).summary()
    except Exception:  # noqa: BLE001 - recall must never fail because of a health cache
        return None


def staged_against_head(repo: pygit2.Repository, index) -> tuple[HealthSnapshot, HealthSnapshot]:
    """(HEAD's snapshot, or an empty one before the first commit; the snapshot of *index*),
    measured over one cache connection: what the pre-commit guard compares. The index
    starts from HEAD's stored state, decoded once for both."""
    from neo_git.health.cache import MetricsCache
    from neo_git.health.versions import analyzer_version, state_version

    rows: dict = {}
    with MetricsCache(cache_path(repo), analyzer_version(), state_version()) as cache:
        if repo.head_is_unborn:
            before = HealthSnapshot(rev="empty", file_metrics={})
        else:
            before = _measure(repo, _commit_source(repo, "HEAD"), False, progress=False, workers=1, cache=cache,
                              rows=rows)
        after = _measure(repo, _index_source(repo, index), False, progress=False, workers=1, cache=cache, rows=rows)
    return before, after


def _index_source(repo: pygit2.Repository, index) -> Source:
    """The index as the tree the commit will record, when it can be written: its state is then
    stored under that tree's id, so the next commit's guard (and the post-commit worker)
    find it ready. Writing it costs nothing extra: `git commit` writes the same objects
    moments later. An index that cannot be written (conflicts) is measured as an index."""
    strict = pygit2.enums.Option.ENABLE_STRICT_OBJECT_CREATION
    # libgit2 checks that every blob a new tree names exists: 1,000 lookups (7 ms of a guard
    # run) for blobs `git add` has just written; `git commit` checks the index itself.
    pygit2.option(strict, False)
    try:
        tree = repo[index.write_tree(repo)]
    except (pygit2.GitError, ValueError, KeyError, OSError):
        return IndexSource(repo, index, head_tree(repo))
    finally:
        pygit2.option(strict, True)
    return TreeSource(repo, "index", cast(pygit2.Tree, tree), head_tree(repo))


def _measure(repo: pygit2.Repository, source: Source, include_type_checking: bool, *,
             progress: bool, workers: int, include_excluded: bool = False, cache=None,
             rows: dict | None = None) -> HealthSnapshot:
    from neo_git.health.scan import Scan

    scan = Scan(cache_path(repo), source, progress=progress, workers=workers, cache=cache, rows=rows)
    return snapshot_from_state(repo, source.rev, scan.state(), include_type_checking, scan.row_metrics,
                               read=file_reader(source), include_excluded=include_excluded)
