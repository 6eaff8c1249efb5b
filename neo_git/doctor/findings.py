"""What the doctor's checks report (`Finding`) and what they get (`Context`)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.identity import RepositoryPaths

STALE_SECONDS = 60.0  # a temp file or lock untouched this long, and not open, is a leftover


@dataclass(frozen=True)
class Finding:
    """One problem: which check found it, what it is, and what `--fix` does about it (None: by
    hand). `action` names the repair in `REPAIRS` ("remove": delete the file at `path`)."""

    check: str
    problem: str
    fix: str | None = None
    hint: str | None = None
    path: str | None = None
    action: str = field(default="remove", compare=False)

    def to_dict(self) -> dict:
        """Plain JSON form."""
        data = asdict(self)
        del data["action"]
        return data


@dataclass(frozen=True)
class Context:
    """What every check and repair gets: the repository, its git-neo paths, NEO_HOME."""

    repo: pygit2.Repository
    paths: RepositoryPaths
    home: Path
