"""Fixtures for the sync tests."""
from __future__ import annotations

import pytest

from tests.helpers.sync import Team


@pytest.fixture
def team(tmp_path, monkeypatch) -> Team:
    """A bare remote; each clone's own user.name/user.email decides who writes (not the
    test-wide identity in the environment)."""
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("NEO_EMBEDDER", "hash")
    return Team(tmp_path)


@pytest.fixture
def cli(monkeypatch, capsys):
    """Run `git neo …` in-process in a directory: (exit code, stdout, stderr)."""
    from neo_git.cli import main

    def run(cwd, *args):
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err
    return run
