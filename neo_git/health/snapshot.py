"""A health snapshot (`HealthSnapshot`): what one tree or index measures, and how a stored state
becomes one with the repository's settings (god-file limits, what is not judged).

Nothing here opens git: the repository passed in is read only for settings and folders
(`config`, `path`, `workdir`), so the pre-commit hook passes the small stand-in
`plumbing.py` builds instead of a pygit2 repository.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neo_git.health.excludes import Exclusions
from neo_git.health.model import FileMetrics, ImportGraph
from neo_git.health.sources import Reader
from neo_git.health.states import metrics_from_row, state_graph

if TYPE_CHECKING:  # pragma: no cover
    Repository = Any   # a pygit2.Repository, or plumbing.RepositoryView: `config`, `path`, `workdir`

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


def god_file_thresholds(repo: Repository) -> tuple[int, int]:
    """(lines, functions) from `neo.godFileLines/neo.godFileFunctions`; bad values -> defaults."""
    from neo_git.config import config_int

    return (config_int("godFileLines", DEFAULT_GOD_FILE_LINES, repo=repo),
            config_int("godFileFunctions", DEFAULT_GOD_FILE_FUNCTIONS, repo=repo))


def counts_every_edge(repo) -> bool:
    """`git config neo.guardCycles all`: cycles through deferred imports count too (the guard
    blocks them, verdicts count them); the default counts import-time cycles only."""
    from neo_git.config import neo_config

    return str(neo_config("guardCycles", "import-time", repo=repo)).strip().lower() == "all"


def snapshot_from_state(repo: Repository, rev: str, state: dict, include_type_checking: bool,
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


def health_exclusions(repo: Repository, read: Reader) -> Exclusions:
    """The exclusion rules of one snapshot (excludes.py): its `.gitattributes` through *read*,
    `.git/info/attributes`, `neo.healthExclude`."""
    from neo_git.config import neo_config_list
    from neo_git.identity import repository_paths

    try:
        info = (repository_paths(repo).common_dir / "info" / "attributes").read_bytes()
    except OSError:
        info = None
    return Exclusions(read, neo_config_list("healthExclude", repo=repo), info)
