"""No module imports a higher layer at import time (docs/design-notes.md, "Layers").

Every module is imported alone — in one fresh interpreter that forgets all `neo_git`
modules between imports (third-party ones stay loaded, which changes nothing here) —
and the `neo_git` modules that came with it must all sit in its layer or below.
Imports inside functions are not seen, and are allowed: that is how the CLI stays lazy.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "neo_git"
FEATURES = 6  # the layer of a module the table does not name

PROBE = r"""
import importlib, json, sys
result = {}
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m == "neo_git" or m.startswith("neo_git.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:  # reported, not hidden: a module must import on its own
        result[name] = {"error": f"{type(exc).__name__}: {exc}"}
        continue
    result[name] = {"imported": sorted(m for m in sys.modules if m == "neo_git" or m.startswith("neo_git."))}
print(json.dumps(result))
"""


def layer_table() -> dict[str, int]:
    """{module name relative to neo_git ("" for the package itself): layer} from the design notes."""
    text = (ROOT / "docs" / "design-notes.md").read_text(encoding="utf-8")
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    assert block, "docs/design-notes.md lost its ```layers block"
    table: dict[str, int] = {}
    for line in block.group(1).splitlines():
        number, *names = line.split()
        for name in names:
            table["" if name == "neo_git" else name] = int(number)
    return table


def layer_of(module: str, table: dict[str, int]) -> int:
    """The layer of a dotted module name: the longest listed prefix wins."""
    parts = module.split(".")[1:]
    for end in range(len(parts), -1, -1):
        key = ".".join(parts[:end])
        if key in table:
            if key == "" and parts:  # the package itself is a leaf; unlisted children are not
                break
            return table[key]
    return FEATURES


def all_modules() -> list[str]:
    """Every module of the package, from the files (entry-point `__main__` modules excluded)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__":
            continue  # importing it runs the CLI
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if all(part.isidentifier() for part in parts):
            names.append(".".join(parts))
    return names


def test_no_module_imports_a_higher_layer_at_import_time():
    table = layer_table()
    modules = all_modules()
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(modules)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    errors = {name: info["error"] for name, info in found.items() if "error" in info}
    assert not errors, f"modules that do not import on their own: {errors}"
    upward = {}
    for name, info in found.items():
        mine = layer_of(name, table)
        above = [m for m in info["imported"] if layer_of(m, table) > mine]
        if above:
            upward[f"{name} (layer {mine})"] = [f"{m} (layer {layer_of(m, table)})" for m in above]
    assert not upward, ("module-level imports of a higher layer (move them into the function that "
                        f"needs them, or move the module; layers in docs/design-notes.md): {upward}")


def test_layer_lookup():
    table = layer_table()
    assert layer_of("neo_git", table) == 0
    assert layer_of("neo_git.errors", table) == 0
    assert layer_of("neo_git.store.memory", table) == table["store"] > table["recall"] > table["embed"]
    assert layer_of("neo_git.cli.parser", table) == max(table.values())
    assert layer_of("neo_git.something_new", table) == FEATURES
