"""Health snapshots of a commit's tree or of the index, read from git objects only.

The work tree is never looked at: a snapshot of HEAD is what was committed, a
snapshot of the index is what `git commit` would record. The measuring is done
by `scan.py`; per-file results and whole-snapshot states come from the cache
(`cache.py`) when the same bytes or tree were measured before, so a new commit
costs only its changed files, and `cached_summary` costs no measuring at all.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import pygit2

from neo_git.errors import NeoError
from neo_git.health.excludes import Exclusions
from neo_git.health.model import FileMetrics, ImportGraph
from neo_git.health.sources import Reader, Source, head_tree, open_index, source_reader
from neo_git.health.states import metrics_from_row, state_graph

DEFAULT_GOD_FILE_LINES = 800
DEFAULT_GOD_FILE_FUNCTIONS = 30


@dataclass(frozen=True)
class HealthSnapshot:
    """The measured health of one tree (a commit, or the index)."""

    rev: str                                   # commit id, tree id, or "index"
    file_metrics: dict[str, FileMetrics]       # path -> metrics of every analysed file (imports=():
                                               # the resolved imports are in `graph`)
    graph: ImportGraph = field(default_factory=ImportGraph)
    components: tuple[tuple[str, ...], ...] = ()  # every-edge import cycles: SCCs of size >= 2
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> number of files
    god_file_lines: int = DEFAULT_GOD_FILE_LINES
    god_file_functions: int = DEFAULT_GOD_FILE_FUNCTIONS
    import_time_components: tuple[tuple[str, ...], ...] = ()  # cycles of import-time edges alone
    exclusions: Exclusions | None = None     # which files are not judged (excludes.py); None: all are
    include_excluded: bool = False           # judge them anyway (--include-tests)

    def is_god_file(self, metrics: FileMetrics) -> bool:
        """More than the configured lines or functions (never an excluded file, unless included)."""
        big = metrics.lines > self.god_file_lines or metrics.functions > self.god_file_functions
        return big and self.is_judged(metrics.path)

    def is_judged(self, path: str) -> bool:
        """False for a file the exclusion rules leave out of god files and the guard."""
        return self.include_excluded or self.exclusions is None or self.exclusions.rule(path) is None

    @property
    def excluded(self) -> dict[str, str]:
        """path -> rule of every measured file that the exclusion rules leave unjudged."""
        return self.exclusions.of(self.file_metrics) if self.exclusions is not None else {}

    @property
    def god_files(self) -> list[FileMetrics]:
        """God files, sorted by path."""
        return [m for _, m in sorted(self.file_metrics.items()) if self.is_god_file(m)]

    @property
    def max_nesting(self) -> int:
        """Deepest control-flow nesting in any function of any file (0 if none)."""
        return max((m.max_nesting for m in self.file_metrics.values()), default=0)

    @property
    def modules_in_cycles(self) -> list[str]:
        """Every module that is part of an import cycle (every edge counted), sorted."""
        return sorted({node for component in self.components for node in component})

    @property
    def modules_in_import_time_cycles(self) -> list[str]:
        """Every module that is part of a cycle of import-time edges, sorted."""
        return sorted({node for component in self.import_time_components for node in component})

    def summary(self) -> dict:
        """The few numbers worth recalling: rev (12 characters) and counts of files, cycles
        (every edge, and import-time), modules in them and god files, and the deepest nesting."""
        return {"rev": self.rev[:12], "files": len(self.file_metrics), "cycles": len(self.components),
                "modules_in_cycles": len(self.modules_in_cycles),
                "import_time_cycles": len(self.import_time_components),
                "modules_in_import_time_cycles": len(self.modules_in_import_time_cycles),
                "god_files": len(self.god_files), "max_nesting": self.max_nesting}

    def excluded_counts(self) -> dict[str, int]:
        """rule -> how many measured files it leaves unjudged, in the rules' order (excludes.RULES)."""
        from neo_git.health.excludes import RULES

        counts = Counter(self.excluded.values())
        return {rule: counts[rule] for rule in RULES if counts[rule]}

    def import_time_cycle_paths(self) -> list[list[dict]]:
        """For each import-time cycle: a loop through it in import order."""
        from neo_git.health.cycles import cycle_steps

        return [[s.to_dict() for s in cycle_steps(self.graph, c, import_time=True)]
                for c in self.import_time_components]

    def cycle_paths(self) -> list[dict]:
        """For each every-edge cycle (in `components` order): whether it is an import-time
        cycle, a loop through it in import order, and where the deferred imports it needs are."""
        from neo_git.health.cycles import cycle_steps, deferred_sites

        import_time = {tuple(c) for c in self.import_time_components}
        paths = []
        for component in self.components:
            whole = tuple(component) in import_time
            steps = cycle_steps(self.graph, component, import_time=whole)
            paths.append({"import_time": whole, "path": [s.to_dict() for s in steps],
                          "deferred_imports": deferred_sites(steps)})
        return paths

    def to_dict(self) -> dict:
        """JSON form: the docs/architecture.md §10 keys of `git neo health --json` and more."""
        files = self.file_metrics
        deepest = self.max_nesting
        return {
            "rev": self.rev,
            "files": len(files),
            "lines": sum(m.lines for m in files.values()),
            "functions": sum(m.functions for m in files.values()),
            "cycles": len(self.components),
            "modules_in_cycles": self.modules_in_cycles,
            "cycle_components": [list(c) for c in self.components],
            "cycle_paths": self.cycle_paths(),
            "import_time_cycles": len(self.import_time_components),
            "modules_in_import_time_cycles": self.modules_in_import_time_cycles,
            "import_time_cycle_components": [list(c) for c in self.import_time_components],
            "import_time_cycle_paths": self.import_time_cycle_paths(),
            "god_files": [
                {"path": m.path, "lines": m.lines, "functions": m.functions, "language": m.language}
                for m in self.god_files
            ],
            "max_nesting": deepest,
            "max_nesting_files": [
                {"path": m.path, "line": m.nesting_line, "language": m.language}
                for _, m in sorted(files.items()) if deepest and m.max_nesting == deepest
            ],
            "per_language": self._per_language(),
            "skipped": dict(sorted(self.skipped.items())),
            "excluded": self.excluded_counts(),
            "include_excluded": self.include_excluded,
            "files_with_parse_errors": sorted(p for p, m in files.items() if m.has_errors),
            "thresholds": {"god_file_lines": self.god_file_lines,
                           "god_file_functions": self.god_file_functions},
        }

    def _per_language(self) -> dict[str, dict]:
        table: dict[str, dict] = {}
        for _, m in sorted(self.file_metrics.items()):
            row = table.setdefault(m.language, {"files": 0, "lines": 0, "functions": 0,
                                                "cycles": 0, "god_files": 0, "max_nesting": 0})
            row["files"] += 1
            row["lines"] += m.lines
            row["functions"] += m.functions
            row["god_files"] += self.is_god_file(m)
            row["max_nesting"] = max(row["max_nesting"], m.max_nesting)
        for component in self.components:
            for language in {self.graph.language_of.get(node) for node in component}:
                if language in table:
                    table[language]["cycles"] += 1
        return dict(sorted(table.items()))


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


def _commit_source(repo: pygit2.Repository, rev: str) -> Source:
    """The tree of *rev*, with its parents' and HEAD's trees as states to start from."""
    rev_id, tree = resolve_tree(repo, rev)
    bases = []
    try:
        bases = [parent.tree for parent in repo[rev_id].parents]
    except (AttributeError, KeyError, ValueError, pygit2.GitError):  # a tree id: no parents
        pass
    return Source(rev_id, tree, None, bases + head_tree(repo))


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
            bases = [parent.tree for parent in repo[rev_id].parents]
        except (AttributeError, KeyError, ValueError, pygit2.GitError):
            bases = []
        source = Source(rev_id, tree, None, bases + head_tree(repo))
        scan = Scan(repo, source, progress=False, workers=1, base=held, store=number == len(revs) - 1)
        state = scan.state()
        held = StoredState(tree.id.raw, state)
        yield snapshot_from_state(repo, rev_id, state, False, scan.row_metrics, read=source_reader(repo, source))


def snapshot_index(repo: pygit2.Repository, *, progress: bool = False, include_type_checking: bool = False,
                   workers: int = 1, include_excluded: bool = False) -> HealthSnapshot:
    """Measure the staged content: the index git would commit now.

    Honours GIT_INDEX_FILE, which git sets for hooks and during `git commit -a`
    / `git commit <paths>` (a temporary index); like git, a relative value is
    taken relative to the current directory.
    """
    source = Source("index", None, open_index(repo), head_tree(repo))
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
        return str(target.id), target.tree if kind is pygit2.Commit else target
    raise NeoError(f"'{rev}' is not a commit", "name a commit, branch or tag")


def cached_summary(repo: pygit2.Repository, rev: str = "HEAD") -> dict | None:
    """HealthSnapshot.summary() of *rev* if the cache already holds the state of exactly its
    tree, else None; never scans, parses or raises (a cheap read for recall).

    The cache is opened read-only: nothing is created, pruned or repaired, and a
    locked, corrupt or other-version cache simply reads as a miss.
    """
    from neo_git.health.cache import MetricsCache, cache_path
    from neo_git.health.versions import analyzer_version, state_version

    try:
        rev_id, tree = resolve_tree(repo, rev)
        with MetricsCache(cache_path(repo), analyzer_version(), state_version(), read_only=True) as cache:
            found = cache.load_state([tree.id.raw])
        if found is None:
            return None
        return snapshot_from_state(repo, rev_id, found.state, include_type_checking=False,
                                   read=source_reader(repo, Source(rev_id, tree, None, []))).summary()
    except Exception:  # noqa: BLE001 - recall must never fail because of a health cache
        return None


def god_file_thresholds(repo: pygit2.Repository) -> tuple[int, int]:
    """(lines, functions) from `neo.godFileLines/neo.godFileFunctions`; bad values -> defaults."""
    from neo_git.config import config_int

    return (config_int("godFileLines", DEFAULT_GOD_FILE_LINES, repo=repo),
            config_int("godFileFunctions", DEFAULT_GOD_FILE_FUNCTIONS, repo=repo))


def snapshot_from_state(repo: pygit2.Repository, rev: str, state: dict, include_type_checking: bool,
                        row_metrics=metrics_from_row, *, read: Reader | None = None,
                        include_excluded: bool = False) -> HealthSnapshot:
    """The HealthSnapshot of a stored or fresh state (see states.py) of *rev*; *read* serves
    the snapshot's files (its `.gitattributes`: the exclusion rules)."""
    from neo_git.health.graph import strongly_connected_components

    graph = state_graph(state)
    components, import_time = state["components"], state["import_time"]
    if include_type_checking:
        edges, hints = graph.edges, graph.type_checking_edges
        components = strongly_connected_components(
            {n: edges.get(n, frozenset()) | hints.get(n, frozenset()) for n in set(edges) | set(hints)})
    lines, functions = god_file_thresholds(repo)
    return HealthSnapshot(
        rev=rev,
        file_metrics={p: row_metrics(p, row) for p, row in state["files"].items()},
        graph=graph, components=tuple(tuple(c) for c in components),
        skipped=dict(Counter(state["skipped"].values())),
        god_file_lines=lines, god_file_functions=functions,
        import_time_components=tuple(tuple(c) for c in import_time),
        exclusions=health_exclusions(repo, read or (lambda path: None)),
        include_excluded=include_excluded,
    )


def health_exclusions(repo: pygit2.Repository, read: Reader) -> Exclusions:
    """The exclusion rules of one snapshot (excludes.py): its `.gitattributes` through *read*,
    `.git/info/attributes`, `neo.healthExclude`."""
    from neo_git.config import neo_config_list
    from neo_git.identity import repository_paths

    try:
        info = (repository_paths(repo).common_dir / "info" / "attributes").read_bytes()
    except OSError:
        info = None
    return Exclusions(read, neo_config_list("healthExclude", repo=repo), info)


def staged_against_head(repo: pygit2.Repository, index) -> tuple[HealthSnapshot, HealthSnapshot]:
    """(HEAD's snapshot, or an empty one before the first commit; the snapshot of *index*),
    measured over one cache connection: what the pre-commit guard compares. The index
    starts from HEAD's stored state, decoded once for both."""
    from neo_git.health.cache import MetricsCache, cache_path
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
        return Source("index", None, index, head_tree(repo))
    finally:
        pygit2.option(strict, True)
    return Source("index", tree, None, head_tree(repo))


def _measure(repo: pygit2.Repository, source: Source, include_type_checking: bool, *,
             progress: bool, workers: int, include_excluded: bool = False, cache=None,
             rows: dict | None = None) -> HealthSnapshot:
    from neo_git.health.scan import Scan

    scan = Scan(repo, source, progress=progress, workers=workers, cache=cache, rows=rows)
    return snapshot_from_state(repo, source.rev, scan.state(), include_type_checking, scan.row_metrics,
                               read=source_reader(repo, source), include_excluded=include_excluded)
