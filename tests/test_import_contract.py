"""The import contract (docs/architecture.md §1), imports inside functions included.

grimp reads every import statement of `neo_git/`: at module level, inside functions and under
`if TYPE_CHECKING:` alike, so a cycle or an upward import cannot hide in a function. Two checks,
both run by `.ci/run`'s pytest:

- no cycle between modules: the module graph has no strongly connected component, once the
  known exceptions below are taken out (each says why it is there and what removes it);
- import-linter's contracts in pyproject.toml (`[tool.importlinter]`, also `lint-imports` from
  the repository root): the layers, the core never importing a feature, and no cycle between the
  packages and modules of any package.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from neo_git.health.graph import strongly_connected_components as strongly_connected  # the one `health` uses

ROOT = Path(__file__).resolve().parent.parent

# (importer, imported) edges left out of the cycle check, each with its reason.
KNOWN_EDGES = {
    # FactStore's add and review paths are a mixin (`WritePaths`, store/writing.py) whose methods
    # annotate `self: "FactStore"`, imported under `if TYPE_CHECKING:` (never at run time):
    # store/__init__.py -> store/writing.py -> store/__init__.py. It goes when FactStore is built
    # by composition instead of mixins (issue 34, item 1).
    ("neo_git.store.writing", "neo_git.store"),
}


def module_graph() -> dict[str, set[str]]:
    """{module: the neo_git modules it imports}, every import statement counted."""
    spec = importlib.util.find_spec("neo_git")
    assert spec is not None and spec.origin is not None
    assert Path(spec.origin).resolve().is_relative_to(ROOT), f"neo_git found at {spec.origin}, not under {ROOT}"
    graph = grimp.build_graph("neo_git", cache_dir=None)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def test_no_cycle_between_modules_counting_imports_inside_functions():
    edges = module_graph()
    stale = [edge for edge in KNOWN_EDGES if edge[1] not in edges.get(edge[0], set())]
    assert not stale, f"known exceptions that no longer exist (remove them from KNOWN_EDGES): {stale}"
    for importer, imported in KNOWN_EDGES:
        edges[importer].discard(imported)
    cycles = strongly_connected(edges)
    details = {" <-> ".join(component): {m: sorted(edges[m] & set(component)) for m in component}
               for component in cycles}
    assert not cycles, ("modules that import each other, directly or through others (imports inside "
                        "functions count: move the shared piece to the lower module, or pass it in): "
                        f"{details}")


def test_the_cycle_check_finds_a_cycle():
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


@pytest.mark.skipif(sys.version_info < (3, 11), reason="import-linter 2.17 (acyclic_siblings) needs Python 3.11; "
                    "the cycle check above runs everywhere")
def test_import_linter_contracts_are_kept():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                           "sys.exit(lint_imports_command())", "--no-cache"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout
