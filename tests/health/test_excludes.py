"""Tests, generated and vendored files and neo.healthExclude globs are measured but not judged."""
from __future__ import annotations

import json

import pygit2
import pytest

from neo_git.cli import main
from neo_git.health.excludes import compile_glob, excluded_paths, is_test_path
from neo_git.health.measure import snapshot_commit
from tests.helpers.git import commit_files, git


def functions(n: int) -> str:
    return "".join(f"def test_{i}():\n    assert {i}\n\n\n" for i in range(n))


def god_paths(repo, **options) -> list[str]:
    return [m.path for m in snapshot_commit(pygit2.Repository(str(repo)), **options).god_files]


def test_a_test_module_with_60_functions_is_not_a_god_file_the_same_file_elsewhere_is(git_repo):
    commit_files(git_repo, {"tests/test_options.py": functions(60), "src/options.py": functions(60)})
    assert god_paths(git_repo) == ["src/options.py"]
    assert god_paths(git_repo, include_excluded=True) == ["src/options.py", "tests/test_options.py"]


@pytest.mark.parametrize("path", [
    "test_options.py", "pkg/options_test.py", "conftest.py", "tests/helpers.py", "a/test/b.py",
    "pkg/server_test.go", "src/app.test.ts", "web/x.spec.js", "ui/__tests__/button.tsx",
    "src/test/java/com/acme/Foo.java", "src/main/java/com/acme/FooTest.java", "lib/x.spec.mjs",
])
def test_test_conventions(path):
    assert is_test_path(path)


@pytest.mark.parametrize("path", ["src/options.py", "contest.py", "testing_utils.py", "latest.py",
                                  "src/attestation.go", "src/main/java/com/acme/Tester.java", "spec.ts"])
def test_not_tests(path):
    assert not is_test_path(path)


def test_linguist_attributes_and_config_globs_are_counted_per_rule(git_repo, monkeypatch, capsys):
    big = functions(40)
    commit_files(git_repo, {
        ".gitattributes": "gen/** linguist-generated\n*.pb.py linguist-generated=true\n"
                          "third/** linguist-vendored\nthird/ours.py -linguist-vendored\n",
        "gen/api.py": big, "proto/msg.pb.py": big, "third/lib.py": big, "third/ours.py": big,
        "legacy/old.py": big, "tests/test_big.py": big, "app.py": big,
    })
    git(git_repo, "config", "--add", "neo.healthExclude", "legacy/")
    monkeypatch.chdir(git_repo)
    assert main(["health", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [g["path"] for g in data["god_files"]] == ["app.py", "third/ours.py"]
    assert data["excluded"] == {"linguist-generated": 2, "linguist-vendored": 1, "neo.healthExclude": 1, "tests": 1}
    assert main(["health"]) == 0
    text = capsys.readouterr().out
    assert ("not judged as god files or by the guard: neo.healthExclude 1, linguist-generated 2, "
            "linguist-vendored 1, tests 1 (--include-tests judges them too)") in text
    assert main(["health", "--include-tests", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["god_files"]) == 7


def test_attributes_come_from_the_measured_commit_not_the_work_tree(git_repo):
    commit_files(git_repo, {"gen/api.py": functions(40)})
    (git_repo / ".gitattributes").write_text("gen/** linguist-generated\n")   # not committed
    assert god_paths(git_repo) == ["gen/api.py"]
    (git_repo / ".git" / "info" / "attributes").write_text("gen/** linguist-generated\n")  # local: git honours it
    assert god_paths(git_repo) == []


def test_deeper_attribute_files_and_later_lines_win():
    files = {".gitattributes": b"*.py linguist-generated\n", "keep/.gitattributes": b"*.py !linguist-generated\n"}
    found = excluded_paths(["a.py", "keep/b.py", "keep/deeper/c.py"], files.get)
    assert found == {"a.py": "linguist-generated"}


@pytest.mark.parametrize("pattern, path, expected", [
    ("*.pb.go", "a/b/x.pb.go", True), ("*.pb.go", "x.go", False),
    ("docs/**/*.py", "docs/a/b/c.py", True), ("docs/**/*.py", "src/docs/c.py", False),
    ("/build.py", "build.py", True), ("/build.py", "sub/build.py", False),
    ("generated/", "a/generated/x.py", True), ("a/gen/", "b/a/gen/x.py", False),
    ("src/*.py", "src/x/y.py", False), ("[ab].py", "b.py", True),
])
def test_glob_rules(pattern, path, expected):
    assert compile_glob(pattern)(path) is expected
