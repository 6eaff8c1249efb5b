"""Health per first-parent commit, for `git neo report` and `git neo health --history N`.

Each commit is measured with `health.snapshot_walk`, oldest first, so every scan
starts from its parent's state (held in memory) and re-parses only the blobs that commit
changed (the blob-keyed cache serves the rest). What the report keeps of a commit
is a small summary per *tree* (two commits with one tree share it) in
`.git/neo/cache/report-health.json`; a second report reads those and scans nothing.
The cache key names the health analyzer's state version and the settings that change
a summary (the god-file thresholds), so an upgrade or a new setting recomputes instead
of showing stale numbers.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from neo_git.report import DEFAULT_COMMITS, cache

if TYPE_CHECKING:  # pragma: no cover
    import sqlite3

    import pygit2

    from neo_git.health.measure import HealthSnapshot

SUMMARY_FORMAT = "health-summary-1"
MAX_CACHED_TREES = 20_000   # beyond this the oldest summaries are dropped
SUBJECT_CHARS = 200


@dataclass(frozen=True)
class CommitInfo:
    """What the report shows of a commit: ids, committer time, the subject line."""

    commit: str        # full hex id
    tree: str          # hex id of its tree
    time: int          # committer time, epoch seconds
    offset: int        # committer's UTC offset, minutes
    subject: str       # first line of the message, at most SUBJECT_CHARS

    @property
    def short(self) -> str:
        """The abbreviated id shown on the page (7 hex, as `git log --oneline` on small repos)."""
        return self.commit[:7]


class HealthPoint(NamedTuple):
    """One commit and its health summary (see `commit_health`)."""

    commit: CommitInfo
    health: dict


def commit_info(commit: pygit2.Commit) -> CommitInfo:
    """The CommitInfo of a pygit2 commit (the subject decoded leniently: messages are not always UTF-8)."""
    try:
        message = commit.message
    except (UnicodeDecodeError, LookupError, ValueError):
        message = commit.raw_message.decode("utf-8", "replace")
    from neo_git.redact import redact  # the page may be shared: a token in a commit message stays out

    subject = redact((message.strip().splitlines() or [""])[0])[:SUBJECT_CHARS]
    return CommitInfo(str(commit.id), str(commit.tree_id), int(commit.commit_time),
                      int(commit.commit_time_offset), subject)


def first_parent_commits(repo: pygit2.Repository, limit: int = DEFAULT_COMMITS,
                         rev: str = "HEAD") -> list[CommitInfo]:
    """The last *limit* commits of *rev*'s first-parent chain, oldest first ([] when unborn)."""

    import pygit2

    from neo_git.errors import NeoError
    from neo_git.health.measure import resolve_tree

    rev_id, _tree = resolve_tree(repo, rev)
    if not isinstance(repo[rev_id], pygit2.Commit):
        raise NeoError(f"'{rev}' is a tree, not a commit: it has no history", "name a commit, branch or tag")
    walker = repo.walk(pygit2.Oid(hex=rev_id), pygit2.enums.SortMode.NONE)
    walker.simplify_first_parent()
    commits = []
    for commit in walker:
        commits.append(commit_info(commit))
        if len(commits) >= limit:
            break
    commits.reverse()
    return commits


def commit_health(snapshot: HealthSnapshot) -> dict:
    """The numbers the report draws for one snapshot: every count of `HealthSnapshot.summary()`
    (so new ones, such as import-time cycles, appear when the health engine adds them), lines,
    and files and lines per language."""
    record: dict[str, Any] = {key: value for key, value in snapshot.summary().items()
              if isinstance(value, int) and not isinstance(value, bool)}
    languages: dict[str, dict[str, int]] = {}
    for metrics in snapshot.file_metrics.values():
        row = languages.setdefault(metrics.language, {"files": 0, "lines": 0})
        row["files"] += 1
        row["lines"] += metrics.lines
    record["lines"] = sum(row["lines"] for row in languages.values())
    record["languages"] = dict(sorted(languages.items()))
    return record


def cache_key(repo: pygit2.Repository) -> str:
    """What a cached summary depends on besides its tree: the health state version (code and
    grammars) and the settings that change what is counted (the god-file thresholds, the
    `neo.healthExclude` globs and `.git/info/attributes`, which decide what is judged)."""
    import hashlib

    from neo_git.config import neo_config_list
    from neo_git.health.measure import god_file_thresholds
    from neo_git.health.versions import state_version
    from neo_git.identity import repository_paths

    try:
        info = (repository_paths(repo).common_dir / "info" / "attributes").read_bytes()
    except OSError:
        info = b""
    excludes = hashlib.sha256("\0".join(neo_config_list("healthExclude", repo=repo)).encode() + b"\1" + info)
    settings = "/".join(map(str, god_file_thresholds(repo)))
    return f"{SUMMARY_FORMAT}:{state_version()}:{settings}:{excludes.hexdigest()[:12]}"


def health_series(repo: pygit2.Repository, commits: list[CommitInfo], *,
                  on_measured: Callable[[], None] | None = None) -> tuple[list[HealthPoint], int]:
    """(a HealthPoint per commit, in the given order; how many trees were measured now).

    Commits whose tree has a cached summary cost a dictionary look-up; the others are
    measured oldest first (`health.snapshot_walk`: each scan starts from its parent's state,
    held in memory).
    *on_measured* is called after each measured commit (a progress bar)."""
    from neo_git.health.measure import snapshot_walk
    from neo_git.identity import repository_paths

    key = cache_key(repo)
    path = cache.cache_file(repository_paths(repo).neo_dir, "health")
    stored = cache.load(path, key) or {}
    kept = stored.get("trees")
    trees: dict[str, Any] = kept if isinstance(kept, dict) else {}
    found = {info.commit: clean_health(trees.get(info.tree)) for info in commits}
    missing = [info for info in commits if found[info.commit] is None]
    with _HeldOpen(repo) as held:
        for info, snapshot in zip(missing, snapshot_walk(repo, [info.commit for info in missing])):
            health = found[info.commit] = commit_health(snapshot)
            trees.pop(info.tree, None)   # re-inserted last: the newest entries survive the cap
            trees[info.tree] = health
            held.hold()
            if on_measured is not None:
                on_measured()
    points = [HealthPoint(info, cast(dict, found[info.commit])) for info in commits]   # missing ones measured above
    measured = len(missing)
    if measured:
        if len(trees) > MAX_CACHED_TREES:
            trees = dict(list(trees.items())[-MAX_CACHED_TREES:])
        cache.save(path, key, {"trees": trees})
    return points, measured


class _HeldOpen:
    """One idle connection to the health cache, kept open while commits are measured.

    Each scan opens and closes the SQLite cache; closing the *last* connection to a WAL
    database checkpoints the WAL into the file and fsyncs it (~9 ms a commit, most of a
    1,000-commit walk's I/O). With this connection open a scan's close is cheap, and
    SQLite checkpoints on its own schedule (every 1,000 WAL pages). It never reads or
    writes, so it holds no lock. Opened after the first scan (which creates the file)."""

    def __init__(self, repo: pygit2.Repository) -> None:
        from neo_git.health.cache import cache_path

        self.path = cache_path(repo)
        self.conn: sqlite3.Connection | None = None

    def hold(self) -> None:
        """Open the idle connection if the cache file exists and none is open yet."""
        import sqlite3

        if self.conn is not None or self.path is None or not self.path.is_file():
            return
        try:
            self.conn = sqlite3.connect(str(self.path), timeout=0.2, isolation_level=None)
        except (sqlite3.Error, OSError):
            self.conn = None

    def __enter__(self) -> _HeldOpen:
        self.hold()
        return self

    def __exit__(self, *exc_info) -> None:
        import sqlite3

        if self.conn is not None:
            try:
                self.conn.close()
            except sqlite3.Error:
                pass


def clean_health(value: object) -> dict | None:
    """A cached summary if it has the shape `commit_health` writes, else None (a miss)."""
    if not isinstance(value, dict) or not isinstance(value.get("languages"), dict):
        return None
    for name, number in value.items():
        if name != "languages" and (not isinstance(number, int) or isinstance(number, bool)):
            return None
    for _language, row in value["languages"].items():
        if not isinstance(row, dict) or not all(isinstance(row.get(k), int) for k in ("files", "lines")):
            return None
    return value
