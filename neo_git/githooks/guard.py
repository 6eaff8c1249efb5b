"""The pre-commit gate: block a staged change that makes the code measurably worse.

It fails only for what the change *introduces* (docs/architecture.md §6 metrics, staged snapshot
against HEAD): a module entering an import-time cycle (every-edge cycles with
`neo.guardCycles=all`), a file becoming a god file, or a touched file whose nesting
rises above `neo.maxNesting` (default 4). What was already there never blocks, a
renamed module counts as the module it was, and files health does not judge (tests,
generated and vendored code, `neo.healthExclude`) are not gated. `git neo hook
pre-commit` (the shim, the pre-commit framework's `neo-guard`) and `git neo health
--staged --check` run the same check.
"""
from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.health.cache import KeptWrites
    from neo_git.health.snapshot import HealthSnapshot

DEFAULT_MAX_NESTING = 4


@dataclass
class GuardResult:
    """What the gate found: problems (each names its file) block the commit."""

    problems: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)
    max_nesting: int = DEFAULT_MAX_NESTING
    renamed: dict[str, str] = field(default_factory=dict)   # old path -> new path, as git detects renames

    @property
    def ok(self) -> bool:
        """True when the commit may go ahead."""
        return not self.problems

    def to_dict(self) -> dict:
        """JSON form (`git neo health --staged --check --json`)."""
        return {"ok": self.ok, "problems": self.problems, "touched": self.touched, "max_nesting": self.max_nesting,
                "renamed": self.renamed}


def staged_changes(repo, index) -> tuple[list[str], dict[str, str]]:
    """(paths added or modified in the index against HEAD, {old path: new path} of renames).

    A rename is git's own rename detection (`git diff-index --cached -M`: content at least
    50 % similar), what `git status` shows, and what the hook sees (health/plumbing.py);
    the index is the one git would commit (`GIT_INDEX_FILE` when set), as *index* is."""
    from neo_git.health.plumbing import Git, staged_records, touched_and_renamed

    if repo.head_is_unborn:
        return sorted(entry.path for entry in index), {}
    with Git(cwd=repo.workdir) as git:
        records = staged_records(git, "HEAD")
    if records is None:   # a conflicted index: every path but the deleted ones, no renames
        with Git(cwd=repo.workdir) as git:
            changed = git.output("diff-index", "--cached", "-z", "--name-only", "--no-renames", "--diff-filter=d",
                                 "HEAD")
        return sorted({os.fsdecode(path) for path in changed.split(b"\0") if path}), {}
    return touched_and_renamed(records)


def check_staged(repo) -> GuardResult:
    """Compare the staged snapshot with HEAD and list what the change introduces (through pygit2:
    `git neo health --staged --check`, which also stores the staged tree's state)."""
    from neo_git.health.measure import staged_against_head
    from neo_git.identity import open_index

    index = open_index(repo)
    touched, renamed = staged_changes(repo, index)
    return judge(repo, touched, renamed, lambda: staged_against_head(repo, index))


class CommitCheck(NamedTuple):
    """What the pre-commit hook's check found, the repository settings were read from, and what
    its scans would have written (None when nothing was measured, or when pygit2 measured and
    wrote as it always does)."""

    result: GuardResult
    repository: object
    kept: KeptWrites | None


def check_commit(trace: Callable[[str], None] = lambda step: None) -> CommitCheck:
    """What the pre-commit hook runs: `check_staged` through git's plumbing (health/plumbing.py:
    no pygit2, nothing written), or through pygit2 where that view does not apply (no commit
    yet, a conflicted index). *trace* is told each step as it ends."""
    from neo_git.health.plumbing import Git, measure_staged, open_staged

    with Git() as git:
        staged = open_staged(git)
        if staged is None:
            from neo_git.identity import open_repository

            trace("no plumbing view (no commit yet, or a conflicted index): through pygit2")
            repo = open_repository()
            return CommitCheck(check_staged(repo), repo, None)
        trace(f"staged change read ({len(staged.touched)} file(s))")
        kept: list[KeptWrites] = []

        def measure() -> tuple[HealthSnapshot, HealthSnapshot]:
            before, after, writes = measure_staged(staged)
            kept.append(writes)
            return before, after

        result = judge(staged.repository, staged.touched, staged.renamed, measure, trace)
        return CommitCheck(result, staged.repository, kept[0] if kept else None)


def judge(repo, touched: list[str], renamed: dict[str, str],
          measure: Callable[[], tuple[HealthSnapshot, HealthSnapshot]],
          trace: Callable[[str], None] = lambda step: None) -> GuardResult:
    """The verdict on a staged change: *touched* and *renamed* as git's rename detection sees them,
    *measure* giving (HEAD's snapshot, the index's) when a touched file is source code; settings
    are read from *repo*."""
    from neo_git.config import config_int
    from neo_git.health.metrics import language_for_path
    from neo_git.health.snapshot import counts_every_edge

    limit = config_int("maxNesting", DEFAULT_MAX_NESTING, repo=repo)
    result = GuardResult(touched=touched, max_nesting=limit, renamed=renamed)
    if not any(language_for_path(p) for p in touched):
        # no staged source file: nothing can add a cycle, a god file or nesting (deleting
        # a file only removes edges), and the commit does not pay for a scan
        return result
    before, after = measure()
    trace("HEAD and the index measured")
    result.problems += new_cycles(before, after, renamed, every_edge=counts_every_edge(repo))

    old_gods = {renamed.get(m.path, m.path) for m in before.god_files}
    for metrics in after.god_files:
        if metrics.path not in old_gods:
            result.problems.append(
                f"{metrics.path}: becomes a god file ({metrics.lines:,} lines, {metrics.functions} functions; "
                f"limits {after.god_file_lines} lines / {after.god_file_functions} functions)")
    previous_path = {new: old for old, new in renamed.items()}
    for path in result.touched:
        nested = after.file_metrics.get(path)
        if nested is None or nested.max_nesting <= limit or not after.is_judged(path):
            continue
        previous = before.file_metrics.get(previous_path.get(path, path))
        if previous is not None and nested.max_nesting <= previous.max_nesting:
            continue  # as deep as before: not introduced by this change
        where = f":{nested.nesting_line}" if nested.nesting_line else ""
        result.problems.append(f"{path}{where}: nesting {nested.max_nesting} is above neo.maxNesting={limit}"
                               + (f" (was {previous.max_nesting})" if previous is not None else ""))
    trace("judged")
    return result


def new_cycles(before, after, renamed: dict[str, str], *, every_edge: bool = False) -> list[str]:
    """One problem per cycle of *after* that a judged module enters: one that was in no cycle
    of *before* under its old name. Import-time cycles only, unless *every_edge*."""
    from neo_git.health.cycles import cycle_steps, format_cycle

    moved = node_renames(renamed)
    old_components = before.components if every_edge else before.import_time_components
    was_in_cycle = {moved.get(node, node) for component in old_components for node in component}
    import_time = {tuple(c) for c in after.import_time_components}
    problems = []
    for component in (after.components if every_edge else after.import_time_components):
        entering = [node for node in component if node not in was_in_cycle and after.is_judged(node)]
        if not entering:
            continue
        steps = cycle_steps(after.graph, component, import_time=tuple(component) in import_time,
                            start=entering[0])
        kind = "import cycle" if tuple(component) in import_time else "import cycle (through a deferred import)"
        problems.append(f"{entering[0]}: new {kind}: {format_cycle(steps)}")
    return problems


def node_renames(renamed: dict[str, str]) -> dict[str, str]:
    """File renames as renames of graph nodes: the files themselves, and for Go (whose
    nodes are package folders) the folder of a file that moved to another folder."""
    from neo_git.health.resolvers.go import package_of

    nodes = dict(renamed)
    for old, new in renamed.items():
        if old.endswith(".go") and new.endswith(".go") and posixpath.dirname(old) != posixpath.dirname(new):
            old_package, new_package = package_of(old), package_of(new)
            if old_package and new_package:
                nodes.setdefault(old_package, new_package)
    return nodes


def format_result(result: GuardResult) -> str:
    """The message printed when the gate blocks (or passes, for --check)."""
    if result.ok:
        return f"git-neo guard: ok ({len(result.touched)} staged file(s) checked)"
    lines = ["git-neo guard: this commit makes the code measurably worse:"]
    lines += [f"  {p}" for p in result.problems]
    lines.append("hint: fix it, or commit anyway with `git commit --no-verify` (NEO_DISABLE=1 turns git-neo off)")
    return "\n".join(lines)
