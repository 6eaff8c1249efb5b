"""Files shipped with git-neo: the hook shims (`hooks/` in the repository) and the
Construct pattern library (`construct/`), found the same way from a source checkout,
an editable install and an installed wheel.

In the repository they sit beside `neo_git/` (docs/architecture.md §1). The wheel carries them as
plain data folders `neo_git/_shipped/<name>/` (copied by `setup.py`'s build step): not
packages, and under a name no module may take, so a `neo_git/hooks.py` can never be
shadowed by them.
"""
from __future__ import annotations

from pathlib import Path

SHIPPED = ("hooks", "construct")   # folders at the top of the repository, shipped in the wheel
INSTALLED_DIR = "_shipped"         # where the wheel puts them inside the package


def shipped_dir(name: str) -> Path:
    """The directory of a shipped data folder ("hooks" or "construct") on this machine."""
    if name not in SHIPPED:
        raise KeyError(f"unknown shipped folder {name!r} (valid: {', '.join(SHIPPED)})")
    package = Path(__file__).resolve().parent
    installed = package / INSTALLED_DIR / name
    if installed.is_dir():
        return installed
    return package.parent / name   # a source checkout or an editable install: the repository's folder
