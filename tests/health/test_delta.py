"""health_delta: the verdict a user (and the outcome loop) gets for a change."""
from __future__ import annotations

import pygit2
import pytest

from neo_git.health.delta import health_delta
from neo_git.health.measure import snapshot_commit
from tests.helpers.git import commit_files
from tests.helpers.health import CLICK_STYLE, functions, nested


def delta_of(repo_path, before_files, after_files, **options):
    """Commit *before_files*, then *after_files* on top; compare the two commits."""
    first = commit_files(repo_path, before_files, "before")
    second = commit_files(repo_path, after_files, "after")
    repo = pygit2.Repository(str(repo_path))
    return health_delta(snapshot_commit(repo, first), snapshot_commit(repo, second), **options)


def test_new_god_file_is_a_regression_naming_the_file(git_repo):
    delta = delta_of(git_repo, {"small.py": functions(3)}, {"big.py": functions(31)})

    assert delta.verdict == "regression"
    assert delta.files == ("big.py",)
    assert delta.reasons[0].startswith("god files 0 -> 1")
    data = delta.to_dict()
    assert data["god_files_delta"] == 1 and data["god_files_added"] == ["big.py"]
    assert data["before"]["god_files"] == [] and data["after"]["god_files"][0]["path"] == "big.py"


def test_splitting_a_god_file_is_an_improvement(git_repo):
    delta = delta_of(git_repo, {"big.py": functions(40)},
                     {"big.py": functions(20), "part.py": functions(20)})

    assert delta.verdict == "improvement"
    assert delta.files == ("big.py",)
    assert delta.god_files_removed == ("big.py",)


def test_fewer_god_files_wins_over_deeper_nesting(git_repo):
    delta = delta_of(git_repo, {"big.py": functions(40)}, {"big.py": functions(2) + nested(6)})

    assert delta.verdict == "improvement"
    assert delta.max_nesting_delta == 6


CYCLE_FREE = {"app/__init__.py": "", "app/a.py": "from app import b\n", "app/b.py": "X = 1\n",
              "app/c.py": "Y = 2\n"}


def test_introducing_an_import_cycle_is_a_regression(git_repo):
    delta = delta_of(git_repo, CYCLE_FREE, {"app/b.py": "from app import a\nX = 1\n"})

    assert delta.verdict == "regression"
    assert delta.cycles_delta == 1
    assert delta.modules_entering_cycles == ("app/a.py", "app/b.py")
    assert delta.files == ("app/a.py", "app/b.py")
    assert "import-time cycles 0 -> 1" in delta.reasons[0]


def test_breaking_an_import_cycle_is_an_improvement(git_repo):
    delta = delta_of(git_repo, {**CYCLE_FREE, "app/b.py": "from app import a\n"}, {"app/b.py": "X = 1\n"})

    assert delta.verdict == "improvement"
    assert delta.cycles_delta == -1
    assert delta.files == ("app/a.py", "app/b.py")


def test_two_cycles_merging_into_a_bigger_one_is_not_progress(git_repo):
    before = {"m/__init__.py": "", "m/a.py": "from m import b\n", "m/b.py": "from m import a\n",
              "m/c.py": "from m import d\n", "m/d.py": "from m import c\n", "m/e.py": ""}
    after = {"m/b.py": "from m import a, c\n", "m/d.py": "from m import c, e\n", "m/e.py": "from m import a\n"}

    delta = delta_of(git_repo, before, after)

    assert (delta.cycles_delta, delta.modules_in_cycles_delta) == (-1, 1)
    assert delta.verdict == "regression"
    assert delta.modules_entering_cycles == ("m/e.py",)


def test_nesting_up_by_one_is_noise_up_by_two_is_a_regression(git_repo):
    one = delta_of(git_repo, {"f.py": nested(2)}, {"f.py": nested(3)})
    two = delta_of(git_repo, {"f.py": nested(3)}, {"f.py": nested(5)})

    assert one.verdict == "neutral"
    assert "within the noise band of 1" in one.reasons[0]
    assert one.files == ()
    assert two.verdict == "regression"
    assert two.files == ("f.py",) and two.nesting_rose == ("f.py",)
    assert two.to_dict()["max_nesting_delta"] == 2


def test_nesting_down_by_two_is_an_improvement_and_the_band_is_configurable(git_repo):
    down = delta_of(git_repo, {"f.py": nested(5)}, {"f.py": nested(3)})
    strict = delta_of(git_repo, {"g.py": nested(3)}, {"g.py": nested(4)}, nesting_noise=0)

    assert down.verdict == "improvement" and down.nesting_fell == ("f.py",)
    assert strict.verdict == "regression"


def test_a_new_file_that_lifts_max_nesting_is_named(git_repo):
    delta = delta_of(git_repo, {"flat.py": nested(1)}, {"deep.py": nested(4)})

    assert delta.verdict == "regression"
    assert delta.files == ("deep.py",)


def test_unchanged_health_is_neutral(git_repo):
    delta = delta_of(git_repo, {"f.py": functions(2)}, {"f.py": functions(3), "README.md": "more\n"})

    assert delta.verdict == "neutral"
    assert delta.reasons == ("no change in god files, import-time cycles or max nesting",)
    assert delta.to_dict()["lines_delta"] == 2


@pytest.mark.parametrize("paths, verdict", [(["x.py"], "regression"), (["y.py"], "neutral"),
                                            (None, "regression")])
def test_paths_restrict_nesting_and_god_files_to_the_touched_files(git_repo, paths, verdict):
    delta = delta_of(git_repo, {"x.py": nested(1), "y.py": nested(1)},
                     {"x.py": nested(4), "y.py": nested(1) + functions(3)}, paths=paths)

    assert delta.verdict == verdict
    assert delta.to_dict()["paths"] == paths


def test_paths_restrict_cycles_to_components_containing_them(git_repo):
    first = commit_files(git_repo, CYCLE_FREE, "before")
    second = commit_files(git_repo, {"app/b.py": "from app import a\n"}, "after")
    repo = pygit2.Repository(str(git_repo))
    before, after = snapshot_commit(repo, first), snapshot_commit(repo, second)

    assert health_delta(before, after, paths=["app/c.py"]).verdict == "neutral"
    touched = health_delta(before, after, paths=["app/b.py"])
    assert touched.verdict == "regression"
    assert touched.files == ("app/a.py", "app/b.py")


def test_paths_find_go_cycles_through_the_package_directory(git_repo):
    base = {"go.mod": "module example.com/m\n", "a/a.go": 'package a\n\nimport "example.com/m/b"\n',
            "b/b.go": "package b\n"}
    delta = delta_of(git_repo, base, {"b/b.go": 'package b\n\nimport "example.com/m/a"\n'},
                     paths=["b/b.go"])

    assert delta.verdict == "regression"
    assert delta.modules_entering_cycles == ("a", "b")


def test_the_reasons_behind_the_verdict_come_first_and_other_changes_follow(git_repo):
    delta = delta_of(git_repo, CYCLE_FREE, {"app/b.py": "from app import a\n" + functions(31)})

    assert delta.verdict == "regression"
    assert delta.files == ("app/b.py",)                      # the new god file decided it
    assert delta.reasons[0].startswith("god files 0 -> 1")
    assert delta.reasons[1].startswith("import-time cycles 0 -> 1")


def test_moving_an_import_into_the_function_is_an_improvement(git_repo):
    """construct/architecture/import-at-the-edge: the cycle stops running at import time, which is
    what the guard and `health` count; the every-edge cycle that remains is named, not counted."""
    at_import = {**CLICK_STYLE, "pkg/_neo_y.py": "from . import _neo_x\n\n\ndef g():\n    return _neo_x\n"}
    delta = delta_of(git_repo, at_import, CLICK_STYLE)

    assert delta.verdict == "improvement"
    assert delta.cycles_delta == -1 and delta.every_edge_cycles_delta == 0
    assert delta.modules_leaving_cycles == ("pkg/_neo_x.py", "pkg/_neo_y.py")
    assert delta.reasons[0].startswith("import-time cycles 1 -> 0")
    assert any("through deferred imports 0 -> 1" in reason for reason in delta.reasons)
    assert delta.to_dict()["every_edge_cycles_delta"] == 0


def test_a_new_cycle_through_a_deferred_import_is_not_a_regression(git_repo):
    after = {"app/b.py": "X = 1\n\n\ndef later():\n    from app import a\n    return a\n"}
    delta = delta_of(git_repo, CYCLE_FREE, after)

    assert delta.verdict == "neutral"
    assert delta.cycles_delta == 0 and delta.every_edge_cycles_delta == 1
    assert delta.reasons == ("cycles through deferred imports 0 -> 1 (they do not run at import time; "
                             "not counted)",)


def test_with_every_edge_counted_a_deferred_cycle_decides_the_verdict(git_repo):
    """`neo.guardCycles all`: the guard blocks cycles through deferred imports, and verdicts
    count them too, so moving the import into the function is no longer progress."""
    after = {"app/b.py": "X = 1\n\n\ndef later():\n    from app import a\n    return a\n"}
    new_deferred = delta_of(git_repo, CYCLE_FREE, after, every_edge=True)
    assert new_deferred.verdict == "regression" and new_deferred.cycles_delta == 1
    assert new_deferred.reasons[0].startswith("import cycles 0 -> 1")
    assert not any("not counted" in reason for reason in new_deferred.reasons)   # they are counted here
    at_import = {**CLICK_STYLE, "pkg/_neo_y.py": "from . import _neo_x\n\n\ndef g():\n    return _neo_x\n"}
    moved = delta_of(git_repo, at_import, CLICK_STYLE, every_edge=True)
    assert moved.verdict == "neutral"


def test_health_diff_follows_the_guard_cycles_setting(git_repo, monkeypatch, capsys):
    import json

    from neo_git.cli import main
    from tests.helpers.git import git

    commit_files(git_repo, CYCLE_FREE, "before")
    commit_files(git_repo, {"app/b.py": "X = 1\n\n\ndef later():\n    from app import a\n    return a\n"}, "after")
    monkeypatch.chdir(git_repo)
    capsys.readouterr()
    assert main(["health", "--diff", "HEAD~1", "HEAD", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "neutral"
    git(git_repo, "config", "neo.guardCycles", "all")
    assert main(["health", "--diff", "HEAD~1", "HEAD", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "regression"


TWO_CYCLES = {"m/__init__.py": "", "m/a.py": "from m import b\n", "m/b.py": "from m import a\n",
              "m/c.py": "from m import d\n", "m/d.py": "from m import c\n"}
ONE_CYCLE = {"m/b.py": "from m import a, c\n", "m/d.py": "from m import c, a\n"}


def test_two_cycles_merging_with_the_same_modules_is_a_regression(git_repo):
    """Fewer cycles, the same modules: the edges that joined them are new, nothing was untangled."""
    delta = delta_of(git_repo, TWO_CYCLES, ONE_CYCLE)
    assert (delta.cycles_delta, delta.modules_in_cycles_delta) == (-1, 0)
    assert delta.verdict == "regression"
    assert "cycles merged: m/a.py, m/b.py, m/c.py, m/d.py" in delta.reasons[0]
    assert delta.files == ("m/a.py", "m/b.py", "m/c.py", "m/d.py")    # the verdict names who caused it


def test_with_every_edge_counted_deferred_imports_merging_two_cycles_are_a_regression(git_repo):
    joined = {"m/b.py": "from m import a\n\n\ndef f():\n    from m import c\n",
              "m/d.py": "from m import c\n\n\ndef g():\n    from m import a\n"}
    delta = delta_of(git_repo, TWO_CYCLES, joined, every_edge=True)
    assert delta.cycles_delta == -1 and delta.verdict == "regression"


def test_a_cycle_split_in_two_is_an_improvement(git_repo):
    delta = delta_of(git_repo, {**TWO_CYCLES, **ONE_CYCLE}, TWO_CYCLES)
    assert (delta.cycles_delta, delta.modules_in_cycles_delta) == (1, 0)
    assert delta.verdict == "improvement"
    assert "cycles split: m/a.py, m/b.py, m/c.py, m/d.py" in delta.reasons[0]
    assert delta.files == ("m/a.py", "m/b.py", "m/c.py", "m/d.py")


def test_a_package_renamed_with_its_cycle_is_neutral(git_repo):
    import subprocess

    commit_files(git_repo, {"m/__init__.py": "", "m/a.py": "from m import b\n", "m/b.py": "from m import a\n"}, "before")
    repo = pygit2.Repository(str(git_repo))
    first = repo.head.target
    subprocess.run(["git", "mv", "m", "n"], cwd=git_repo, check=True)
    second = commit_files(git_repo, {"n/a.py": "from n import b\n", "n/b.py": "from n import a\n"}, "rename")
    delta = health_delta(snapshot_commit(repo, first), snapshot_commit(repo, second))
    assert delta.verdict == "neutral", delta.reasons


def test_deferred_edges_merging_two_import_time_cycles_count_one_deferred_cycle(git_repo):
    """Two import-time cycles joined by a deferred import: one every-edge cycle that needs the
    deferred edge (never a negative count)."""
    base = {"m/__init__.py": "", "m/a.py": "from m import b\n", "m/b.py": "from m import a\n",
            "m/c.py": "from m import d\n", "m/d.py": "from m import c\n"}
    joined = {"m/b.py": "from m import a\n\n\ndef f():\n    from m import c\n",
              "m/d.py": "from m import c\n\n\ndef g():\n    from m import a\n"}
    delta = delta_of(git_repo, base, joined)
    assert delta.verdict == "neutral" and delta.cycles_delta == 0
    assert delta.reasons == ("cycles through deferred imports 0 -> 1 (they do not run at import time; "
                             "not counted)",)
