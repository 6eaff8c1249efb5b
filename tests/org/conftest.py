"""Fixtures for the org memory tests."""
from __future__ import annotations

import pytest

from tests.helpers.org import Org


@pytest.fixture
def org(tmp_path, monkeypatch) -> Org:
    """A bare org remote; identities come from each repository's own config."""
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("NEO_EMBEDDER", "hash")
    return Org(tmp_path)


@pytest.fixture
def cli(monkeypatch, capsys):
    """Run `git neo …` in-process in a directory with a NEO_HOME: (exit code, stdout, stderr)."""
    from neo_git.cli import main

    def run(cwd, home, *args):
        monkeypatch.chdir(cwd)
        monkeypatch.setenv("NEO_HOME", str(home))
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err
    return run
