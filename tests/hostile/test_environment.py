"""Case 4: a strange machine or repository gives `fatal:` + `hint:` (exit 1), never exit 3."""
from __future__ import annotations

import os

import pytest

from neo_git.store.parse_cache import parse_cache_path
from tests.helpers.git import commit_files, git
from tests.helpers.plumbing import neo, read_only, ref_state


def _fatal(result):
    assert result.code == 1, result
    assert result.err.startswith("fatal: ") and "\nhint: " in result.err, result.err


def test_sha256_repository(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "sha256"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(repo))
    monkeypatch.chdir(repo)
    result = neo(capsys, "list")
    _fatal(result)
    assert "sha256" in result.err


def test_reftable_repository(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "reftable"
    git(tmp_path, "init", "-q", str(repo))
    # git 2.39 cannot create one (`--ref-format` came in 2.45): set the extension by hand.
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.refStorage", "reftable")
    monkeypatch.chdir(repo)
    result = neo(capsys, "list")
    _fatal(result)
    assert "reftable" in result.err and "files" in result.err


def test_neo_home_is_a_file(team_repo, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("NEO_HOME", str(blocker))
    for argv in (["list"], ["add", "--scope", "global", "Global rule", "body"]):
        result = neo(capsys, *argv)
        _fatal(result)
        assert "not-a-folder" in result.err


def test_read_only_neo_home_on_a_global_add(team_repo, isolated_env, capsys):
    home = isolated_env / ".neo"
    (home / "facts").mkdir(parents=True, exist_ok=True)
    with read_only(home):
        result = neo(capsys, "add", "--scope", "global", "Global rule", "body")
    _fatal(result)
    assert str(home) in result.err


def test_read_only_git_neo_on_a_read_command(team_repo, capsys):
    repo, ids = team_repo
    assert neo(capsys, "recall", "http").code == 0  # caches and access counts exist now
    neo_dir = repo / ".git" / "neo"
    with read_only(neo_dir):
        recalled = neo(capsys, "recall", "outbound http client")
        listed = neo(capsys, "list")
        shown = neo(capsys, "show", ids[0])
    assert recalled.code == 0, recalled.err
    assert "HTTP client" in recalled.out
    assert listed.code == 0 and shown.code == 0, (listed.err, shown.err)


def test_read_only_git_neo_before_any_state_exists(repo_with_commit, monkeypatch, capsys):
    """A fresh clone whose .git is read-only: reads answer, writes say why they cannot."""
    monkeypatch.chdir(repo_with_commit)
    git_dir = repo_with_commit / ".git"
    with read_only(git_dir):
        listed = neo(capsys, "list")
        added = neo(capsys, "add", "A fact", "body")
    assert listed.code == 0, listed.err
    _fatal(added)


def test_read_only_objects_folder(team_repo, capsys):
    repo, _ = team_repo
    before = ref_state(repo)
    with read_only(repo / ".git" / "objects"):
        result = neo(capsys, "add", "Another fact", "with a body")
    _fatal(result)
    assert "objects" in result.err
    assert ref_state(repo) == before


@pytest.mark.parametrize("target", ["", "."])
def test_export_to_a_directory_or_nothing(team_repo, capsys, target):
    result = neo(capsys, "export", target)
    _fatal(result)


def test_export_to_a_missing_folder_is_refused(team_repo, capsys, tmp_path):
    result = neo(capsys, "export", str(tmp_path / "no" / "such" / "facts.json"))
    _fatal(result)
    assert not (tmp_path / "no").exists()


def test_export_to_a_named_directory(team_repo, capsys, tmp_path):
    result = neo(capsys, "export", str(tmp_path))
    _fatal(result)
    assert "directory" in result.err


@pytest.mark.parametrize("cache", ["vectors", "access", "access-log", "parse"])
def test_a_cache_file_replaced_by_a_directory(team_repo, isolated_env, capsys, cache):
    repo, ids = team_repo
    assert neo(capsys, "recall", "http").code == 0
    if cache == "vectors":
        (path,) = (isolated_env / ".neo" / "cache" / "vectors").rglob("vectors.bin")
    elif cache == "access":
        path = repo / ".git" / "neo" / "access.json"   # written when the access log is folded
    elif cache == "access-log":
        path = repo / ".git" / "neo" / "access.log"    # what each recall appends to
    else:
        path = parse_cache_path(repo / ".git", "refs/neo/facts")
    path.unlink(missing_ok=True)
    path.mkdir()
    (path / "keep").write_text("x")
    for argv in (["recall", "outbound http"], ["add", "New fact here", "some body"], ["list"]):
        result = neo(capsys, *argv)
        assert result.code in (0, 1), (argv, result.err)
        if result.code == 1:
            _fatal(result)
    assert (path / "keep").exists(), "the folder in the way is never deleted"


def test_health_cache_replaced_by_a_directory(team_repo, capsys):
    repo, _ = team_repo
    commit_files(repo, {"app.py": "def main():\n    return 1\n"})
    cache = repo / ".git" / "neo" / "health.sqlite"
    if cache.exists():
        cache.unlink()
    cache.mkdir()
    result = neo(capsys, "health")
    assert result.code in (0, 1), result.err
    if result.code == 1:
        _fatal(result)


def test_an_unexpected_os_error_is_a_fatal_naming_the_file(team_repo, capsys):
    """Full disks and the like: whatever OSError escapes names its file, exit 1."""
    repo, _ = team_repo
    session = repo / ".git" / "neo" / "session.json"
    session.parent.mkdir(exist_ok=True)
    session.write_text('{"version": "2.0", "facts": []}')
    with read_only(session.parent):
        result = neo(capsys, "add", "--scope", "session", "Session fact", "body")
    _fatal(result)


def test_export_to_a_device_or_pipe_writes_through_it(team_repo, capsys, tmp_path):
    """`export /dev/stdout` style targets: written to, never replaced by a regular file."""
    import stat
    import threading

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received = []

    def reader():
        with open(pipe, "rb") as handle:
            received.append(handle.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    result = neo(capsys, "export", str(pipe))
    thread.join(30)  # the reader ends when export closes the pipe (a replaced pipe leaves it waiting)
    assert result.code == 0, result.err
    assert stat.S_ISFIFO(os.stat(pipe).st_mode), "the pipe was replaced by a file"
    assert b'"version": "2.0"' in received[0]
