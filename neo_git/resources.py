"""Files shipped with git-neo: the hook shims (`hooks/` in the repository) and the
Construct pattern library (`construct/`), found the same way from a source checkout,
an editable install and an installed wheel."""
from __future__ import annotations

import importlib.resources
from pathlib import Path

# folder name in the repository -> the package it is shipped as inside the wheel
SHIPPED = {"hooks": "neo_git.hooks", "construct": "neo_git.construct"}


def shipped_dir(name: str) -> Path:
    """The directory of a shipped data folder ("hooks" or "construct") on this machine."""
    if name not in SHIPPED:
        raise KeyError(f"unknown shipped folder {name!r} (valid: {', '.join(SHIPPED)})")
    root = importlib.resources.files(SHIPPED[name])
    return Path(str(root))
