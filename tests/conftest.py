"""Test isolation: every test gets its own HOME, NEO_HOME and git config, a fixed
identity, and no network beyond loopback."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest

import neo_git.citations  # noqa: F401 - registers the cite resolver with the store (neo_git/citing.py), as the CLI does
from tests.helpers.git import commit_files, git

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Tester",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Tester",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "HF_HUB_OFFLINE": "1",
    "NEO_EMBEDDER": "",
}
# What git-neo (or git under it) reads from the environment, which a developer's shell or a CI
# job may have set: removed for every test (a test that wants one sets it).
LEAKY_ENV = (
    "NEO_DISABLE", "NEO_DIR", "NEO_HOOK_SYNC", "NEO_HOOK_TRACE", "NEO_AGENT_HOOK_TIMEOUT_MS",
    "GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "GIT_CEILING_DIRECTORIES", "GIT_NAMESPACE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "CODEX_HOME", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
    "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    """A fresh HOME / NEO_HOME / global git config per test, fixed identity."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Ada Tester\n\temail = ada@example.com\n"
        "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NEO_HOME", str(home / ".neo"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for key, value in GIT_ENV.items():
        if value:
            monkeypatch.setenv(key, value)
        else:
            monkeypatch.delenv(key, raising=False)
    for key in LEAKY_ENV:
        monkeypatch.delenv(key, raising=False)
    yield home


_real_connect = socket.socket.connect


def _loopback_only(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and not host.startswith("/"):
        raise OSError(f"test tried to reach the network: {address!r}")
    return _real_connect(self, address)


@pytest.fixture(autouse=True, scope="session")
def no_network():
    """Block outbound sockets except loopback and unix sockets for the whole session."""
    socket.socket.connect = _loopback_only
    yield
    socket.socket.connect = _real_connect


@pytest.fixture
def git_repo(tmp_path) -> Path:
    """An empty throwaway repository (no commits yet) with branch main."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    return repo


@pytest.fixture
def repo_with_commit(git_repo) -> Path:
    """A repository with one commit (README.md)."""
    commit_files(git_repo, {"README.md": "hello\n"}, "initial")
    return git_repo
