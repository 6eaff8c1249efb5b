"""Gather what the page shows and write it: `build_report(repo, commits=200, out=None)`.

Reads only git objects and local records: the first-parent history and the health
cache, `refs/neo/facts`, `refs/notes/neo`, `.git/neo/turns/`. Writes the page (by
default `.git/neo/report.html`) and the report's own derived caches, nothing else.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from neo_git.report.activity import Activity
from neo_git.report.data import ReportData, TopFact
from neo_git.report.memory import MemoryHistory
from neo_git.report.series import CommitInfo

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

TOP_FACTS = 10
DEFAULT_FILE = "report.html"


@dataclass(frozen=True)
class ReportResult:
    """What `build_report` wrote."""

    path: Path
    commits: int
    measured: int
    facts: int
    outcomes: int
    turns: int
    seconds: float

    @property
    def url(self) -> str:
        """The page as a file:// URL."""
        return self.path.resolve().as_uri()

    def to_dict(self) -> dict:
        """JSON form for `git neo report --json`."""
        return {"path": str(self.path), "url": self.url, "commits": self.commits, "measured": self.measured,
                "facts": self.facts, "outcomes": self.outcomes, "turns": self.turns,
                "seconds": round(self.seconds, 3)}


def collect(repo: pygit2.Repository, commits: int, *, on_measured: Callable[[], None] | None = None,
            on_total: Callable[[int], None] | None = None) -> ReportData:
    """The report's data for the last *commits* first-parent commits of HEAD."""
    from neo_git.health.measure import snapshot_commit
    from neo_git.identity import repository_paths
    from neo_git.report.activity import activity
    from neo_git.report.cycles import current_cycles
    from neo_git.report.memory import memory_history
    from neo_git.report.series import commit_health, first_parent_commits, health_series

    chain = first_parent_commits(repo, commits)
    if on_total is not None:
        on_total(len(chain))
    points, measured = health_series(repo, chain, on_measured=on_measured)
    head = chain[-1]
    snapshot = snapshot_commit(repo, head.commit)    # its stored state: no scan
    cycles = current_cycles(repo, snapshot, repo[head.commit].tree)
    memory = memory_history(repo)
    acts = activity(repo)
    paths = repository_paths(repo)
    name = paths.workdir.name if paths.workdir is not None else paths.common_dir.name
    branch = None if repo.head_is_detached else repo.head.shorthand
    data = ReportData(name=name, branch=branch, head=head, generated=time.time(), health=points,
                      measured=measured, head_summary=commit_health(snapshot), cycles=cycles, memory=memory,
                      activity=acts)
    data.top_facts = top_facts(repo, memory, acts)
    return data


def top_facts(repo: pygit2.Repository, memory: MemoryHistory, acts: Activity) -> list[TopFact]:
    """The facts with the most successes (ties: higher confidence), with the commits whose
    accepted outcomes raised them."""
    from neo_git.outcomes.history import fact_outcome_history
    from neo_git.report.memory import CONFIDENCE, SUCCESSES, tip_facts
    from neo_git.report.series import commit_info

    ranked = sorted((row for row in memory.rows.items() if row[1][SUCCESSES] > 0),
                    key=lambda item: (-item[1][SUCCESSES], -item[1][CONFIDENCE], item[0]))[:TOP_FACTS]
    found = []
    for fact in tip_facts(repo, [fact_id for fact_id, _row in ranked]):
        earned: list[CommitInfo | str] = []
        for moved in fact_outcome_history(repo, fact.id, acts.records):
            commit = moved.get("commit")
            if moved.get("verdict") != "accepted" or not isinstance(commit, str):
                continue
            try:
                earned.append(commit_info(cast("pygit2.Commit", repo[commit])))
            except (KeyError, ValueError, TypeError):
                earned.append(commit)
        found.append(TopFact(fact, earned))
    return found


def default_path(repo: pygit2.Repository) -> Path:
    """`.git/neo/report.html`."""
    from neo_git.identity import repository_paths

    return repository_paths(repo).neo_dir / DEFAULT_FILE


def build_report(repo: pygit2.Repository, commits: int = 200, out: Path | None = None, *,
                 on_measured: Callable[[], None] | None = None,
                 on_total: Callable[[int], None] | None = None) -> ReportResult:
    """Collect, render and write the page (atomically); returns where and what."""
    from neo_git.fileio import atomic_write
    from neo_git.report.render import render

    started = time.perf_counter()
    data = collect(repo, commits, on_measured=on_measured, on_total=on_total)
    path = Path(out) if out is not None else default_path(repo)
    # Lone surrogates (file names that are not UTF-8) become U+FFFD-like "?": the page stays valid UTF-8.
    atomic_write(path, render(data).encode("utf-8", "replace"), durable=False)
    valid = sum(1 for row in data.memory.rows.values() if row[1])
    return ReportResult(path, len(data.health), data.measured, valid, len(data.activity.records),
                        sum(d["turns"] for d in data.activity.days), time.perf_counter() - started)
