"""The pre-commit gate: block a staged change that makes the code measurably worse.

It fails only for what the change *introduces* (DESIGN.md §6 metrics, staged snapshot
against HEAD): a module entering an import cycle, a file becoming a god file, or a
touched file whose nesting rises above `neo.maxNesting` (default 4). What was already
there never blocks. `git neo hook pre-commit` (the shim, the pre-commit framework's
`neo-guard`) and `git neo health --staged --check` run the same check.
"""
from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_MAX_NESTING = 4


@dataclass
class GuardResult:
    """What the gate found: problems (each names its file) block the commit."""

    problems: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)
    max_nesting: int = DEFAULT_MAX_NESTING

    @property
    def ok(self) -> bool:
        """True when the commit may go ahead."""
        return not self.problems

    def to_dict(self) -> dict:
        """JSON form (`git neo health --staged --check --json`)."""
        return {"ok": self.ok, "problems": self.problems, "touched": self.touched, "max_nesting": self.max_nesting}


def staged_paths(repo, index) -> list[str]:
    """Paths whose staged content differs from HEAD (added or modified; renames show as added).

    Compared entry by entry: the index of a hook (`GIT_INDEX_FILE`) is a standalone
    pygit2.Index, which libgit2 cannot diff without a repository."""
    staged = {entry.path: entry.id for entry in index}
    if repo.head_is_unborn:
        return sorted(staged)
    committed: dict[str, object] = {}
    _walk(repo, repo.head.peel().tree, "", committed)
    return sorted(path for path, oid in staged.items() if committed.get(path) != oid)


def _walk(repo, tree, prefix: str, out: dict) -> None:
    for entry in tree:
        path = prefix + entry.name
        if entry.type_str == "tree":
            _walk(repo, repo[entry.id], path + "/", out)
        else:
            out[path] = entry.id


def check_staged(repo) -> GuardResult:
    """Compare the staged snapshot with HEAD and list what the change introduces."""
    from neo_git.config import config_int
    from neo_git.health.measure import HealthSnapshot, snapshot_commit, snapshot_index
    from neo_git.identity import open_index

    from neo_git.health.metrics import language_for_path

    limit = config_int("maxNesting", DEFAULT_MAX_NESTING, repo=repo)
    touched = staged_paths(repo, open_index(repo))
    if not any(language_for_path(p) for p in touched):
        # no staged source file: nothing can add a cycle, a god file or nesting (deleting
        # a file only removes edges), and the commit does not pay for a scan
        return GuardResult(touched=touched, max_nesting=limit)
    after = snapshot_index(repo)
    before = HealthSnapshot(rev="empty", file_metrics={}) if repo.head_is_unborn else snapshot_commit(repo, "HEAD")
    result = GuardResult(touched=touched, max_nesting=limit)

    old_cycles = {node for component in before.components for node in component}
    for component in after.components:
        entering = sorted(set(component) - old_cycles)
        if entering:
            loop = " -> ".join(list(component) + [component[0]])
            result.problems.append(f"{entering[0]}: new import cycle: {loop}")
    old_gods = {m.path for m in before.god_files}
    for metrics in after.god_files:
        if metrics.path not in old_gods:
            result.problems.append(
                f"{metrics.path}: becomes a god file ({metrics.lines:,} lines, {metrics.functions} functions; "
                f"limits {after.god_file_lines} lines / {after.god_file_functions} functions)")
    for path in result.touched:
        metrics = after.file_metrics.get(path)
        if metrics is None or metrics.max_nesting <= limit:
            continue
        previous = before.file_metrics.get(path)
        if previous is not None and metrics.max_nesting <= previous.max_nesting:
            continue  # as deep as before: not introduced by this change
        where = f":{metrics.nesting_line}" if metrics.nesting_line else ""
        result.problems.append(f"{path}{where}: nesting {metrics.max_nesting} is above neo.maxNesting={limit}"
                               + (f" (was {previous.max_nesting})" if previous is not None else ""))
    return result


def format_result(result: GuardResult) -> str:
    """The message printed when the gate blocks (or passes, for --check)."""
    if result.ok:
        return f"git-neo guard: ok ({len(result.touched)} staged file(s) checked)"
    lines = ["git-neo guard: this commit makes the code measurably worse:"]
    lines += [f"  {p}" for p in result.problems]
    lines.append("hint: fix it, or commit anyway with `git commit --no-verify` (NEO_DISABLE=1 turns git-neo off)")
    return "\n".join(lines)
