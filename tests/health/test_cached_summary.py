"""cached_summary: health numbers for recall, read from the cache alone or not at all."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from neo_git.cli import main
from neo_git.health import cached_summary
from neo_git.health.measure import snapshot_commit
from tests.helpers.git import commit_files
from tests.helpers.health import functions, nested

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(git_repo) -> Path:
    commit_files(git_repo, {
        "app/__init__.py": "",
        "app/a.py": "from app import b\n" + nested(4),
        "app/b.py": "from app import a\n",
        "app/big.py": functions(31),
        "web/main.js": "function go() { if (x) { return 1; } }\n",
    })
    return git_repo


def cache_file(repo_path: Path) -> Path:
    return repo_path / ".git" / "neo" / "health.sqlite"


def test_nothing_before_any_scan_and_the_call_creates_no_cache(project):
    repo = pygit2.Repository(str(project))

    assert cached_summary(repo) is None
    assert not cache_file(project).exists()


def test_after_git_neo_health_the_summary_matches_the_report(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    assert main(["health", "--json"]) == 0
    capsys.readouterr()
    repo = pygit2.Repository(str(project))

    summary = cached_summary(repo)

    full = snapshot_commit(repo).to_dict()
    assert summary == {
        "rev": full["rev"][:12], "files": full["files"], "cycles": full["cycles"],
        "modules_in_cycles": len(full["modules_in_cycles"]), "god_files": len(full["god_files"]),
        "max_nesting": full["max_nesting"], "import_time_cycles": full["import_time_cycles"],
        "modules_in_import_time_cycles": len(full["modules_in_import_time_cycles"]),
    }
    assert summary["rev"] == str(repo.head.target)[:12]
    assert (summary["files"], summary["cycles"], summary["modules_in_cycles"],
            summary["god_files"], summary["max_nesting"]) == (5, 1, 2, 1, 4)


def test_an_older_measured_revision_is_found_by_name(project):
    repo = pygit2.Repository(str(project))
    first = snapshot_commit(repo).to_dict()
    commit_files(project, {"app/b.py": "X = 1\n"})

    assert cached_summary(repo, "HEAD~1")["cycles"] == first["cycles"] == 1
    assert cached_summary(repo, "no-such-rev") is None


def test_a_new_commit_without_a_scan_has_no_summary(project):
    repo = pygit2.Repository(str(project))
    snapshot_commit(repo)
    commit_files(project, {"app/c.py": functions(2)})

    assert cached_summary(repo) is None
    snapshot_commit(repo)
    assert cached_summary(repo)["files"] == 6


def test_an_unborn_head_has_no_summary(git_repo):
    assert cached_summary(pygit2.Repository(str(git_repo))) is None


def test_a_corrupt_cache_reads_as_none_and_is_left_as_it_is(project):
    repo = pygit2.Repository(str(project))
    snapshot_commit(repo)
    cache_file(project).write_bytes(b"not a database at all" * 100)

    assert cached_summary(repo) is None
    assert cache_file(project).read_bytes() == b"not a database at all" * 100  # not moved aside


def test_another_analyzer_version_reads_as_none_without_pruning(project, monkeypatch):
    from neo_git.health import versions

    repo = pygit2.Repository(str(project))
    snapshot_commit(repo)
    with monkeypatch.context() as patch:
        patch.setattr(versions, "_VERSIONS", {"analyzer": "a-newer-one", "state": "another"})
        assert cached_summary(repo) is None

    assert cached_summary(repo) is not None  # the stored state of this version is still there


def test_the_summary_neither_imports_tree_sitter_nor_scans(project):
    snapshot_commit(pygit2.Repository(str(project)))
    script = (
        "import json, sys, pygit2\n"
        "from neo_git.health import cached_summary\n"
        f"summary = cached_summary(pygit2.Repository({str(project)!r}))\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0].startswith('tree_sitter'))\n"
        "print(json.dumps({'summary': summary, 'loaded': loaded,\n"
        "                  'metrics': 'neo_git.health.metrics' in sys.modules}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL, check=True)

    result = json.loads(done.stdout)
    assert result["summary"] is not None and result["summary"]["files"] == 5
    assert result["loaded"] == [] and result["metrics"] is False
