"""The optional extras (`mcp`, `openai`, `anthropic`, `fastembed`): whether one is installed,
and the exact command that adds it to the git-neo that is running.

git-neo is not on the package index: it is installed from a clone or a path, so
"pip install 'git-neo[mcp]'" would fail. pip records where an install came from
(`direct_url.json`, PEP 610); the hint names that path, the interpreter git-neo runs
under, and `-e` when the install is editable.
"""
from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from urllib.parse import unquote, urlparse

# extra -> the module that proves it is installed
EXTRAS = {"mcp": "mcp", "openai": "openai", "anthropic": "anthropic", "fastembed": "fastembed"}
DISTRIBUTION = "git-neo"


def has_extra(extra: str) -> bool:
    """True when the module behind *extra* can be imported here (found, not imported)."""
    try:
        return importlib.util.find_spec(EXTRAS[extra]) is not None
    except (ImportError, ValueError):   # a module set to None in sys.modules, or a broken spec
        return False


def install_source() -> tuple[str | None, bool]:
    """(the path or URL git-neo was installed from, editable?) as pip recorded it; (None, False)
    when pip did not say (a wheel from somewhere, a source checkout on PYTHONPATH)."""
    try:
        from importlib.metadata import distributions

        # Every copy on sys.path: `python -m neo_git` run inside the clone also sees its *.egg-info.
        text = next((found for dist in distributions(name=DISTRIBUTION)
                     if (found := dist.read_text("direct_url.json"))), None)
    except (OSError, ImportError, ValueError):
        return None, False
    try:
        data = json.loads(text or "")
    except ValueError:
        return None, False
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return None, False
    url = data["url"]
    parsed = urlparse(url)
    where = unquote(parsed.path) if parsed.scheme == "file" else url
    editable = bool((data.get("dir_info") or {}).get("editable")) if isinstance(data.get("dir_info"), dict) else False
    return where, editable


def install_command(extra: str, python: str | None = None) -> str:
    """The command that installs *extra* into this git-neo's environment, e.g.
    `/home/me/.venvs/neo/bin/python -m pip install -e '/home/me/src/git-neo[mcp]'`."""
    where, editable = install_source()
    target = f"{where or '/path/to/git-neo'}[{extra}]"
    argv = [python or sys.executable, "-m", "pip", "install", *(["-e"] if editable else []), target]
    return shlex.join(argv)


def install_hint(extra: str, python: str | None = None) -> str:
    """`install it: `<install_command>``, naming the clone when pip did not record one."""
    where, _ = install_source()
    return (f"install it: `{install_command(extra, python)}`"
            + ("" if where else " (/path/to/git-neo: your clone of git-neo)"))
