"""Our Python import graph agrees with grimp's on real installed packages.

grimp (the reference for "which modules of this package import which") is run
with `exclude_type_checking_imports=True`, matching our split of TYPE_CHECKING
imports into `type_checking_edges`; a second check puts them back on both sides.
Known, deliberate difference: grimp only sees modules reachable through
`__init__.py` packages, while we also resolve files in namespace directories
(e.g. numpy/_core/tests has no __init__.py), so comparisons are restricted to
grimp's modules as importers.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from neo_git.health.graph import strongly_connected_components
from neo_git.health.import_graph import build_import_graph
from neo_git.health.metrics import analyze_source

grimp = pytest.importorskip("grimp")

STDLIB = ["email", "xml", "importlib", "asyncio", "unittest", "json"]
SITE = ["pygit2", "httpx", "anyio", "grimp", "_pytest"]


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{name} is not an installed package")
    return Path(list(spec.submodule_search_locations)[0])


def module_name(path: str) -> str:
    stem = path.removesuffix(".py").removesuffix("/__init__")
    return stem.replace("/", ".")


def our_graph(name: str):
    """Our graph of one package, read from disk, as module-name edge sets."""
    directory = package_dir(name)
    files = {}
    for source in sorted(directory.rglob("*.py")):
        rel = source.relative_to(directory.parent).as_posix()
        metrics = analyze_source(rel, source.read_bytes())
        if metrics is not None:
            files[rel] = metrics
    graph = build_import_graph(files, lambda path: None)   # no config files for Python

    def named(edges):
        return {module_name(a): {module_name(b) for b in targets} for a, targets in edges.items()}
    return named(graph.edges), named(graph.type_checking_edges)


def grimp_edges(name: str, exclude_type_checking: bool) -> dict[str, set[str]]:
    graph = grimp.build_graph(name, exclude_type_checking_imports=exclude_type_checking, cache_dir=None)
    return {m: set(graph.find_modules_directly_imported_by(m)) - {m} for m in graph.modules}


def restricted(edges: dict[str, set[str]], modules) -> dict[str, set[str]]:
    return {m: edges.get(m, set()) & set(modules) for m in modules}


@pytest.mark.parametrize("name", STDLIB + SITE)
def test_edges_and_cycles_match_grimp(name):
    package_dir(name)
    ours, _ = our_graph(name)
    theirs = grimp_edges(name, exclude_type_checking=True)
    ours = restricted(ours, theirs)
    assert ours == theirs
    assert strongly_connected_components(ours) == strongly_connected_components(theirs)


def test_some_packages_really_have_cycles():
    # Guard against the comparison passing because both sides found nothing.
    ours, _ = our_graph("email")
    assert any(len(c) >= 3 for c in strongly_connected_components(ours))


@pytest.mark.parametrize("name", ["httpx", "anyio", "_pytest"])
def test_type_checking_imports_are_exactly_the_difference(name):
    package_dir(name)
    ours, type_checking = our_graph(name)
    everything = {m: ours.get(m, set()) | type_checking.get(m, set()) for m in set(ours) | set(type_checking)}
    theirs = grimp_edges(name, exclude_type_checking=False)
    assert restricted(everything, theirs) == theirs
    assert any(type_checking.values()), "expected TYPE_CHECKING imports in this package"


def test_aliased_typing_module_type_checking_block_matches_grimp():
    package_dir("click")
    ours, _ = our_graph("click")
    theirs = grimp_edges("click", exclude_type_checking=True)
    assert restricted(ours, theirs) == theirs
