"""What the page draws: `ReportData` (gathered by `build.py`, drawn by `render.py` and the
section modules)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from neo_git.report.activity import Activity
from neo_git.report.cycles import Cycle
from neo_git.report.memory import MemoryHistory
from neo_git.report.series import CommitInfo, HealthPoint

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.facts import Fact


@dataclass
class TopFact:
    """A fact that earned successes, and the commits that earned them."""

    fact: Fact
    commits: list[CommitInfo | str]     # CommitInfo when the commit is readable, else its hex


@dataclass
class ReportData:
    """Everything the page draws (see page.py and the section modules)."""

    name: str                        # repository folder name
    branch: str | None
    head: CommitInfo
    generated: float                 # epoch seconds
    health: list[HealthPoint]
    measured: int                    # commits measured by this run (0: all from the cache)
    head_summary: dict
    cycles: list[Cycle]
    memory: MemoryHistory
    top_facts: list[TopFact] = field(default_factory=list)
    activity: Activity = field(default_factory=Activity)
