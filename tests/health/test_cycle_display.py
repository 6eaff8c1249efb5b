"""A cycle is shown as a loop in import order, with the import lines, and in bounded size."""
from __future__ import annotations

from neo_git.cli import main
from neo_git.health.cycles import Step, cycle_steps, format_cycle
from neo_git.health.model import ImportGraph
from tests.helpers.git import commit_files, git


def graph(edges: dict[str, list[str]], deferred: dict[str, list[str]] | None = None) -> ImportGraph:
    sites = {a: {b: i + 1 for i, b in enumerate(targets)} for a, targets in edges.items()}
    return ImportGraph(edges={a: frozenset(t) for a, t in edges.items()},
                       deferred_edges={a: frozenset(t) for a, t in (deferred or {}).items()}, sites=sites)


def test_the_loop_follows_the_edges_not_the_sorted_names():
    g = graph({"a.py": ["c.py"], "c.py": ["b.py"], "b.py": ["a.py"]})
    steps = cycle_steps(g, ("a.py", "b.py", "c.py"), import_time=True)
    assert [(s.source, s.target) for s in steps] == [("a.py", "c.py"), ("c.py", "b.py"), ("b.py", "a.py")]
    assert format_cycle(steps) == "a.py:1 → c.py:1 → b.py:1 → a.py"


def test_the_shortest_loop_through_the_start_is_chosen():
    g = graph({"a": ["b", "x1"], "b": ["a"], "x1": ["x2"], "x2": ["a"]})
    assert [s.source for s in cycle_steps(g, ("a", "b", "x1", "x2"), import_time=True)] == ["a", "b"]
    assert [s.source for s in cycle_steps(g, ("a", "b", "x1", "x2"), import_time=True, start="x1")] == \
        ["x1", "x2", "a"]


def test_a_deferred_cycle_goes_through_a_deferred_edge_and_avoids_others():
    g = graph({"a": ["b", "c"], "b": ["a"], "c": ["a"]}, deferred={"b": ["a"], "a": ["c"]})
    steps = cycle_steps(g, ("a", "b", "c"), import_time=False)
    assert [(s.source, s.target, s.deferred) for s in steps] == [("a", "c", True), ("c", "a", False)]


def test_a_long_cycle_prints_a_few_steps_and_how_many_more():
    steps = [Step(f"m{i}.py", f"m{(i + 1) % 3000}.py", f"m{i}.py:1", False) for i in range(3000)]
    text = format_cycle(steps)
    assert text == "m0.py:1 → m1.py:1 → m2.py:1 → m3.py:1 → m4.py:1 → m5.py:1 → … 2994 more modules → m0.py"


def commit_ring(repo, size: int) -> None:
    """m0 imports m1 … imports m<size-1> imports m0, committed in one `git add`."""
    for i in range(size):
        (repo / f"m{i}.py").write_text(f"import m{(i + 1) % size}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ring")


def test_health_of_a_3000_module_cycle_stays_short(git_repo, monkeypatch, capsys):
    commit_ring(git_repo, 3000)
    monkeypatch.chdir(git_repo)
    assert main(["health"]) == 0
    text = capsys.readouterr().out
    assert len(text.encode()) < 2000, text
    assert "m0.py:1 → m1.py:1 → m2.py:1 → m3.py:1 → m4.py:1 → m5.py:1 → … 2994 more modules → m0.py" in text


def test_a_shortcut_inside_a_big_cycle_says_how_many_modules_it_holds(git_repo, monkeypatch, capsys):
    commit_files(git_repo, {"a.py": "import b\n", "b.py": "import a\nimport c\n", "c.py": "import a\n"})
    monkeypatch.chdir(git_repo)
    assert main(["health"]) == 0
    assert "a.py:1 → b.py:1 → a.py  (3 modules)" in capsys.readouterr().out


def test_the_diff_of_a_commit_making_a_3000_module_cycle_stays_short(git_repo, monkeypatch, capsys):
    commit_files(git_repo, {"README.md": "ring\n"}, "start")
    commit_ring(git_repo, 3000)
    monkeypatch.chdir(git_repo)
    assert main(["health", "--diff", "HEAD~1", "HEAD"]) == 0
    text = capsys.readouterr().out
    assert len(text.encode()) < 3000, text
    assert "now in a cycle: m0.py, m1.py, m10.py, m100.py, m1000.py, m1001.py, m1002.py, m1003.py and 2992 more" in text
