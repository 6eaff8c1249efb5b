"""Cycle detection: strongly connected components of an import graph."""
from __future__ import annotations

import random

from neo_git.health.graph import strongly_connected_components


def test_known_components_and_acyclic_parts():
    edges = {
        "a": ["b"], "b": ["c"], "c": ["a", "d"],     # cycle a-b-c, then out to d
        "d": ["e"], "e": ["d"],                      # second cycle d-e
        "f": ["a"], "g": [],                         # no cycle
    }
    assert strongly_connected_components(edges) == [["a", "b", "c"], ["d", "e"]]


def test_dag_has_no_components():
    assert strongly_connected_components({"a": ["b", "c"], "b": ["c"], "c": []}) == []


def test_self_loops_are_not_cycles():
    assert strongly_connected_components({"a": ["a"], "b": ["b", "c"], "c": []}) == []


def test_targets_missing_as_keys_are_still_nodes():
    assert strongly_connected_components({"a": ["b"], "c": ["a"], "b": ["c"]}) == [["a", "b", "c"]]
    assert strongly_connected_components({"a": ["x"]}) == []


def test_ten_thousand_node_chain_closing_into_one_cycle():
    n = 10_000
    chain = {f"m{i:05d}": [f"m{i + 1:05d}"] for i in range(n - 1)}
    assert strongly_connected_components(chain) == []
    chain[f"m{n - 1:05d}"] = ["m00000"]
    (component,) = strongly_connected_components(chain)
    assert len(component) == n and component == sorted(component)


def test_deep_nested_cycles_without_recursion():
    # 5,000 two-node cycles strung along a chain: deep DFS, many components.
    edges: dict[str, list[str]] = {}
    for i in range(5_000):
        edges[f"a{i}"] = [f"b{i}", f"a{i + 1}"]
        edges[f"b{i}"] = [f"a{i}"]
    components = strongly_connected_components(edges)
    assert len(components) == 5_000
    assert ["a0", "b0"] in components


def test_output_independent_of_input_order():
    edges = {"a": ["b"], "b": ["c", "a"], "c": ["d"], "d": ["c"], "e": ["a"]}
    expected = strongly_connected_components(edges)
    rng = random.Random(7)
    for _ in range(20):
        keys = list(edges)
        rng.shuffle(keys)
        shuffled = {k: list(reversed(edges[k])) if rng.random() < 0.5 else edges[k] for k in keys}
        assert strongly_connected_components(shuffled) == expected == [["a", "b"], ["c", "d"]]


def test_matches_brute_force_reachability_on_random_graphs():
    rng = random.Random(11)
    for _ in range(30):
        nodes = [f"n{i}" for i in range(12)]
        edges = {n: [m for m in nodes if rng.random() < 0.15] for n in nodes}
        reach = {n: _reachable(edges, n) for n in nodes}
        expected = set()
        for n in nodes:
            members = frozenset(m for m in nodes if m in reach[n] and n in reach[m]) | {n}
            if len(members) >= 2:
                expected.add(tuple(sorted(members)))
        assert strongly_connected_components(edges) == sorted(list(c) for c in expected)


def _reachable(edges, start):
    seen, todo = set(), [start]
    while todo:
        for target in edges[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen
