"""Snapshots of commits and of the index, measured from git objects in real repositories."""
from __future__ import annotations

import io
import json
import sqlite3
import stat
import sys
from pathlib import Path

import pygit2
import pytest

from neo_git.errors import NeoError
from neo_git.health import metrics
from neo_git.health.measure import snapshot_commit, snapshot_index
from neo_git.health.progress import Progress
from tests.helpers.git import commit_files, git
from tests.helpers.health import MIXED, STEPS, functions, nested

ROOT = Path(__file__).resolve().parents[2]


def lines(count: int) -> str:
    return "x = 1\n" * count


def snap(path: Path, rev: str = "HEAD") -> dict:
    return snapshot_commit(pygit2.Repository(str(path)), rev).to_dict()


def staged(path: Path) -> dict:
    return snapshot_index(pygit2.Repository(str(path))).to_dict()


@pytest.fixture
def count_analyses(monkeypatch):
    """Count real analyze_source calls (the parse work a scan does)."""
    calls: list[str] = []
    real = metrics.analyze_source

    def counting(path, source):
        calls.append(path)
        return real(path, source)

    monkeypatch.setattr(metrics, "analyze_source", counting)
    return calls


# --- revisions and the index ------------------------------------------------------

def test_head_and_an_older_tagged_revision(git_repo):
    first = commit_files(git_repo, {"app.py": functions(2)}, "v1")
    git(git_repo, "tag", "v1")
    second = commit_files(git_repo, {"lib.py": functions(3), "README.md": "docs\n"}, "v2")

    head, old = snap(git_repo), snap(git_repo, "v1")

    assert (head["rev"], head["files"], head["functions"]) == (second, 2, 5)
    assert head["per_language"]["python"]["files"] == 2
    assert (old["rev"], old["files"], old["functions"]) == (first, 1, 2)
    assert snap(git_repo, "HEAD~1")["rev"] == first


def test_staged_content_counts_and_unstaged_edits_do_not(repo_with_commit):
    commit_files(repo_with_commit, {"app.py": functions(2)})
    (repo_with_commit / "app.py").write_text(functions(31), encoding="utf-8")
    git(repo_with_commit, "add", "app.py")
    (repo_with_commit / "app.py").write_text(functions(1), encoding="utf-8")  # not staged

    index = staged(repo_with_commit)

    assert index["rev"] == "index"
    assert [g["path"] for g in index["god_files"]] == ["app.py"]
    assert index["functions"] == 31
    assert snap(repo_with_commit)["functions"] == 2  # HEAD is unchanged


def test_git_index_file_names_the_index_relative_to_cwd(repo_with_commit, monkeypatch):
    commit_files(repo_with_commit, {"old.py": functions(1)}, "old")
    git(repo_with_commit, "tag", "old")
    commit_files(repo_with_commit, {"new.py": functions(2)}, "new")
    git(repo_with_commit, "read-tree", "old", env={"GIT_INDEX_FILE": "other-index"})

    monkeypatch.chdir(repo_with_commit)
    monkeypatch.setenv("GIT_INDEX_FILE", "other-index")
    from_other = staged(repo_with_commit)
    monkeypatch.delenv("GIT_INDEX_FILE")
    from_default = staged(repo_with_commit)

    assert sorted(from_other["per_language"]) == ["python"] and from_other["files"] == 1
    assert from_other["functions"] == 1
    assert from_default["files"] == 2


def test_pre_commit_hook_sees_what_commit_dash_a_records(repo_with_commit, tmp_path):
    commit_files(repo_with_commit, {"app.py": functions(2)})
    out = tmp_path / "hook.json"
    hook = repo_with_commit / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        "#!/bin/sh\n"
        f"PYTHONPATH='{ROOT}' '{sys.executable}' -c "
        "'import sys; from neo_git.cli import main; sys.exit(main(sys.argv[1:]))' "
        f"health --staged --json > '{out}'\n",
        encoding="utf-8",
    )
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    (repo_with_commit / "app.py").write_text(functions(40), encoding="utf-8")  # tracked, not staged

    git(repo_with_commit, "commit", "-q", "-a", "-m", "grow")

    seen = json.loads(out.read_text(encoding="utf-8"))
    # `commit -a` stages into a temporary index named by GIT_INDEX_FILE; .git/index is stale then.
    assert seen["functions"] == 40
    assert [g["path"] for g in seen["god_files"]] == ["app.py"]


# --- cache ------------------------------------------------------------------------

def test_cache_rescan_parses_nothing_and_a_commit_parses_only_its_changes(git_repo, count_analyses):
    files = {f"m{i}.py": functions(i + 1) for i in range(6)}
    commit_files(git_repo, files)
    first = snap(git_repo)
    assert len(count_analyses) == 6

    count_analyses.clear()
    again = snap(git_repo)
    assert count_analyses == []
    assert again == first

    commit_files(git_repo, {"m0.py": functions(9), "m1.py": lines(3), "new.py": nested(2)})
    count_analyses.clear()
    third = snap(git_repo)
    assert sorted(count_analyses) == ["m0.py", "m1.py", "new.py"]
    assert third["files"] == 7


def test_same_blob_at_two_paths_is_parsed_once_and_labelled_with_each_path(git_repo, count_analyses):
    commit_files(git_repo, {"a/util.py": nested(3), "b/util.py": nested(3)})

    data = snap(git_repo)

    assert len(count_analyses) == 1
    assert [f["path"] for f in data["max_nesting_files"]] == ["a/util.py", "b/util.py"]


def test_corrupt_cache_is_set_aside_and_the_scan_still_works(repo_with_commit, count_analyses):
    commit_files(repo_with_commit, {"app.py": functions(3)})
    expected = snap(repo_with_commit)
    cache = repo_with_commit / ".git" / "neo" / "health.sqlite"
    for extra in cache.parent.glob("health.sqlite-*"):
        extra.unlink()
    cache.write_bytes(b"this is not a database" * 100)

    assert snap(repo_with_commit) == expected
    assert list(cache.parent.glob("health.sqlite.corrupt-*"))
    count_analyses.clear()
    assert snap(repo_with_commit) == expected  # the recreated cache works again
    assert count_analyses == []


def test_locked_cache_does_not_block_the_scan(repo_with_commit):
    commit_files(repo_with_commit, {"app.py": functions(3)})
    snap(repo_with_commit)
    commit_files(repo_with_commit, {"app.py": functions(4)})
    holder = sqlite3.connect(str(repo_with_commit / ".git" / "neo" / "health.sqlite"), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert snap(repo_with_commit)["functions"] == 4
    finally:
        holder.execute("ROLLBACK")
        holder.close()


# --- skip rules ---------------------------------------------------------------------

def test_generated_vendored_binary_and_huge_files_are_skipped_and_counted(git_repo):
    commit_files(git_repo, {
        "app.py": functions(2),
        "huge.py": "x = 1\n" * 190_000,                 # ~1.1 MB
        "blob.py": b"\x00\x01binary\x00" * 10,
        "node_modules/pkg/index.js": "function f() {}\n",
        "web/node_modules/x/y.ts": "export const a = 1;\n",
        "vendor/lib/dep.go": "package lib\n",
        "dist/bundle.js": "function g() {}\n",
        "build/gen.py": functions(1),
        "static/app.min.js": "function h(){}\n",
        "static/packed.js": ("var a=1;" * 1000) + "\n",   # one 8 KB line: minified
        "notes.md": "not code\n",
    })
    (git_repo / "app_link.py").symlink_to("app.py")
    git(git_repo, "add", "app_link.py")
    git(git_repo, "update-index", "--add", "--cacheinfo",
        f"160000,{git(git_repo, 'rev-parse', 'HEAD').strip()},third_party_sub")
    git(git_repo, "commit", "-q", "-m", "link and submodule")

    data = snap(git_repo)

    assert data["files"] == 1 and data["per_language"]["python"]["files"] == 1
    assert data["skipped"] == {"binary": 1, "minified": 2, "submodule": 1, "symlink": 1,
                               "too_large": 1, "vendored": 5}


# --- god files ----------------------------------------------------------------------

def test_god_file_thresholds_are_strictly_more_than_800_lines_or_30_functions(git_repo):
    commit_files(git_repo, {
        "lines800.py": lines(800), "lines801.py": lines(801),
        "funcs30.py": functions(30), "funcs31.py": functions(31),
    })

    data = snap(git_repo)

    assert [(g["path"], g["lines"], g["functions"]) for g in data["god_files"]] == [
        ("funcs31.py", 62, 31), ("lines801.py", 801, 0)]


def test_god_file_thresholds_follow_git_config_and_ignore_bad_values(git_repo):
    commit_files(git_repo, {"mid.py": lines(150), "small.py": functions(5)})
    git(git_repo, "config", "neo.godFileLines", "100")
    git(git_repo, "config", "neo.godFileFunctions", "4")
    assert [g["path"] for g in snap(git_repo)["god_files"]] == ["mid.py", "small.py"]

    git(git_repo, "config", "neo.godFileLines", "lots")
    git(git_repo, "config", "neo.godFileFunctions", "-3")
    data = snap(git_repo)
    assert data["god_files"] == []
    assert data["thresholds"] == {"god_file_lines": 800, "god_file_functions": 30}


# --- cycles and nesting ---------------------------------------------------------------

def test_import_cycle_is_reported_and_type_checking_imports_are_not(git_repo):
    commit_files(git_repo, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "import pkg.a\n",
        "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import d\n",
        "pkg/d.py": "from pkg import c\n",
    })
    repo = pygit2.Repository(str(git_repo))

    data = snapshot_commit(repo).to_dict()
    with_hints = snapshot_commit(repo, include_type_checking=True).to_dict()

    assert data["cycles"] == 1
    assert data["cycle_components"] == [["pkg/a.py", "pkg/b.py"]]
    assert data["modules_in_cycles"] == ["pkg/a.py", "pkg/b.py"]
    assert data["per_language"]["python"]["cycles"] == 1
    assert with_hints["cycles"] == 2


def test_max_nesting_names_the_files_and_lines_that_reach_it(git_repo):
    commit_files(git_repo, {"flat.py": nested(1), "deep.py": "\n\n" + nested(4)})

    data = snap(git_repo)

    assert data["max_nesting"] == 4
    assert data["max_nesting_files"] == [{"path": "deep.py", "line": 7, "language": "python"}]


# --- awkward repositories -------------------------------------------------------------

def test_empty_repository_has_no_head_to_measure_but_an_empty_index(git_repo):
    with pytest.raises(NeoError) as caught:
        snapshot_commit(pygit2.Repository(str(git_repo)))
    assert "no commits" in caught.value.message
    assert "--staged" in caught.value.hint
    assert staged(git_repo)["files"] == 0


def test_unknown_revision_is_a_user_error(repo_with_commit):
    with pytest.raises(NeoError) as caught:
        snap(repo_with_commit, "no-such-branch")
    assert caught.value.message == "unknown revision 'no-such-branch'"


def test_commit_with_only_deletions(git_repo):
    commit_files(git_repo, {"a.py": functions(1), "b.py": functions(2)})
    commit_files(git_repo, {"a.py": None, "b.py": None}, "delete everything")

    data = snap(git_repo)

    assert (data["files"], data["lines"], data["god_files"], data["max_nesting"]) == (0, 0, [], 0)


def test_merge_commit_is_measured_as_its_tree(git_repo):
    commit_files(git_repo, {"base.py": functions(1)})
    git(git_repo, "checkout", "-q", "-b", "side")
    commit_files(git_repo, {"side.py": functions(2)}, "side")
    git(git_repo, "checkout", "-q", "main")
    commit_files(git_repo, {"main.py": functions(3)}, "main")
    git(git_repo, "merge", "-q", "--no-edit", "side")

    data = snap(git_repo)

    assert len(git(git_repo, "rev-list", "--parents", "-n1", "HEAD").split()) == 3
    assert (data["files"], data["functions"]) == (3, 6)


def test_detached_head(git_repo):
    first = commit_files(git_repo, {"a.py": functions(1)})
    commit_files(git_repo, {"b.py": functions(1)})
    git(git_repo, "checkout", "-q", "--detach", first)

    data = snap(git_repo)

    assert (data["rev"], data["files"]) == (first, 1)


def test_non_utf8_and_syntax_errors_are_measured_not_fatal(git_repo):
    commit_files(git_repo, {
        "latin1.py": "# caf\xe9\n".encode("latin-1") + functions(2).encode(),
        "broken.py": functions(2) + "def oops(:\n    if x\n",
    })

    data = snap(git_repo)

    assert data["files"] == 2
    assert data["files_with_parse_errors"] == ["broken.py"]
    assert data["per_language"]["python"]["functions"] >= 4


# --- progress -------------------------------------------------------------------------

class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_appears_only_after_a_second_and_is_erased():
    now = [0.0]
    stream = _Tty()
    bar = Progress(10, stream=stream, clock=lambda: now[0])
    bar.advance(3)
    assert stream.getvalue() == ""          # fast scans show nothing
    now[0] = 1.5
    bar.advance(2)
    drawn = stream.getvalue()
    assert drawn.startswith("\r") and "5/10" in drawn
    bar.close()
    assert stream.getvalue().endswith("\r") and stream.getvalue().count("\r") == 3


def test_progress_is_silent_when_stderr_is_not_a_terminal_or_disabled():
    now = [5.0]
    piped = io.StringIO()
    quiet = _Tty()
    for bar in (Progress(4, stream=piped, clock=lambda: now[0] - 5),
                Progress(4, stream=quiet, enabled=False, clock=lambda: now[0] - 5)):
        now[0] = 20.0
        bar.advance(4)
        bar.close()
    assert piped.getvalue() == "" and quiet.getvalue() == ""


# --- incremental scans give exactly what a scan from scratch gives ------------------

def _compare_with_scratch(repo: pygit2.Repository, monkeypatch, take):
    from neo_git.health import measure

    incremental = take(repo)
    with monkeypatch.context() as patch:
        patch.setattr(measure, "cache_path", lambda _repo: None)   # no cache: everything from scratch
        scratch = take(repo)
    assert incremental.to_dict() == scratch.to_dict()
    assert incremental.graph == scratch.graph
    return incremental


def test_each_new_commit_starts_from_its_parent_and_matches_a_full_scan(git_repo, monkeypatch):
    from neo_git.health import scan as module

    commit_files(git_repo, MIXED)
    repo = pygit2.Repository(str(git_repo))
    snapshot_commit(repo)
    full_scans = []
    real_full = module.Scan._full
    monkeypatch.setattr(module.Scan, "_full", lambda self: full_scans.append(1) or real_full(self))

    cycles = []
    for step in STEPS:
        commit_files(git_repo, step)
        cycles.append(_compare_with_scratch(repo, monkeypatch, snapshot_commit).to_dict()["cycles"])

    assert len(full_scans) == len(STEPS)        # only the from-scratch comparisons scanned fully
    assert cycles[:3] == [1, 2, 3] and cycles[4] == 3  # py, go, ts cycles; the tsconfig change undid @/y


def test_staged_changes_start_from_head_and_match_a_full_scan(git_repo, monkeypatch):
    commit_files(git_repo, MIXED)
    repo = pygit2.Repository(str(git_repo))
    snapshot_commit(repo)
    for name, content in {**STEPS[0], **STEPS[4], "pkg/new.py": "import pkg.a\n"}.items():
        (git_repo / name).write_text(content, encoding="utf-8")
    git(git_repo, "add", "-A")
    git(git_repo, "rm", "-q", "--cached", "src/y.ts")

    staged_now = _compare_with_scratch(repo, monkeypatch, snapshot_index).to_dict()

    assert staged_now["cycles"] == 2 and "src/y.ts" not in str(staged_now)


def test_a_new_analyzer_version_remeasures_everything(git_repo, count_analyses, monkeypatch):
    from neo_git.health import versions as module

    commit_files(git_repo, {"a.py": functions(1), "b.py": nested(2)})
    first = snap(git_repo)
    monkeypatch.setattr(module, "_VERSIONS", {"analyzer": "a-newer-one", "state": "another"})
    count_analyses.clear()

    assert snap(git_repo) == first
    assert sorted(count_analyses) == ["a.py", "b.py"]


def test_a_damaged_stored_state_falls_back_to_a_full_scan(git_repo):
    commit_files(git_repo, {"a.py": functions(1)})
    snap(git_repo)
    cache = sqlite3.connect(str(git_repo / ".git" / "neo" / "health.sqlite"))
    cache.execute("UPDATE snapshot_states SET data = ?", (b"garbage",))
    cache.commit()
    cache.close()
    commit_files(git_repo, {"b.py": functions(2)})

    data = snap(git_repo)

    assert (data["files"], data["functions"]) == (2, 3)
    assert snap(git_repo, "HEAD~1")["functions"] == 1


def test_a_parallel_cold_scan_measures_the_same(git_repo, monkeypatch):
    from neo_git.health import measure

    commit_files(git_repo, {f"pkg/m{i}.py": f"import pkg.m{(i + 1) % 70}\n" + nested(i % 5) + functions(i % 40)
                            for i in range(70)} | {"pkg/__init__.py": ""})
    repo = pygit2.Repository(str(git_repo))
    monkeypatch.setattr(measure, "cache_path", lambda _repo: None)

    parallel = snapshot_commit(repo, workers=2).to_dict()

    assert parallel == snapshot_commit(repo).to_dict()
    assert parallel["files"] == 71 and parallel["cycles"] == 1 and len(parallel["modules_in_cycles"]) == 70
