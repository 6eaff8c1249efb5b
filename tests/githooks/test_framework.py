"""The pre-commit framework: the published hooks, installed the framework's way."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import BASE, RETRY, VENV_BIN, note, setup_repo, suggest

ROOT = Path(__file__).resolve().parents[2]
REAL_HOME = os.path.expanduser("~")        # read at import, before the test isolation swaps HOME
PRE_COMMIT = str(Path(VENV_BIN) / "pre-commit")


def _published() -> dict:
    return {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def test_published_hooks_declare_the_contract():
    hooks = _published()
    assert hooks["neo-guard"]["stages"] == ["pre-commit"]
    outcomes = hooks["neo-outcomes"]
    assert outcomes["stages"] == ["post-commit", "post-merge"]
    assert outcomes["always_run"] is True and outcomes["pass_filenames"] is False


def test_framework_installed_hooks_process_outcomes(repo_with_commit):
    """`pre-commit install --hook-type post-commit --hook-type post-merge` with the published
    neo-outcomes definition (as a local hook, so no virtualenv is built here)."""
    repo = repo_with_commit
    fact_id = setup_repo(repo)
    hook = dict(_published()["neo-outcomes"], language="system")
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [hook]}]}))
    commit_files(repo, {".pre-commit-config.yaml": (repo / ".pre-commit-config.yaml").read_text()}, "config")
    env = {"PATH": VENV_BIN + os.pathsep + os.environ["PATH"], "NEO_HOOK_SYNC": "1",
           "PRE_COMMIT_HOME": str(repo.parent / "pc-home")}
    subprocess.run([PRE_COMMIT, "install", "--hook-type", "post-commit", "--hook-type", "post-merge"], cwd=repo,
                   env={**os.environ, **env}, check=True, capture_output=True, timeout=120)
    suggest(repo, RETRY, [fact_id])
    (repo / "src" / "db.py").write_text(BASE + RETRY)
    git(repo, "commit", "-qam", "adopt", env=env)
    assert [r["verdict"] for r in note(repo) if r["type"] == "outcome"] == ["accepted"]
    git(repo, "checkout", "-q", "-b", "topic", "HEAD~1")
    commit_files(repo, {"src/topic.py": "def topic():\n    return 1\n"}, "topic")   # no hook env: not processed
    topic = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "topic", env=env)
    assert [r["file"] for r in note(repo, topic) if r.get("verdict") == "independent"] == ["src/topic.py"]


# pip's cache outlives the test session (a cache: deleting it only costs time).
PIP_CACHE = Path(os.environ.get("NEO_TEST_CACHE") or os.path.join(REAL_HOME, ".cache", "git-neo-tests")) / "pip"


@pytest.mark.skipif(os.environ.get("NEO_SKIP_TRY_REPO") == "1", reason="NEO_SKIP_TRY_REPO=1: skip the ~1 min try-repo run")
def test_try_repo_neo_guard_blocks_a_new_cycle_and_passes_otherwise(repo_with_commit):
    """The real thing: `pre-commit try-repo` commits this checkout as it is (uncommitted
    edits included) into a scratch repository, builds a virtualenv and pip-installs
    git-neo and its dependencies into it — every run, since try-repo always uses a fresh
    store. Cost: ~10-15 s of CPU per try-repo with a warm pip cache (two runs here; on
    the shared 2-core machine 60-115 s of wall time), ~90 s with a cold one.
    NEO_SKIP_TRY_REPO=1 skips it for a quick local run."""
    repo = repo_with_commit
    env = {**os.environ, "PATH": VENV_BIN + os.pathsep + os.environ["PATH"], "PIP_CACHE_DIR": str(PIP_CACHE),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    commit_files(repo, {"src/a.py": "def a():\n    return 1\n", "src/b.py": "def b():\n    return 2\n"}, "modules")

    def try_repo() -> subprocess.CompletedProcess:
        return subprocess.run([PRE_COMMIT, "try-repo", str(ROOT), "neo-guard"], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=600)

    (repo / "src" / "a.py").write_text("from src import b\n\n\ndef a():\n    return b.b()\n")
    git(repo, "add", "src/a.py")
    passed = try_repo()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    (repo / "src" / "b.py").write_text("from src import a\n\n\ndef b():\n    return a.a()\n")
    git(repo, "add", "src/b.py")
    blocked = try_repo()
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "new import cycle" in blocked.stdout and "src/a.py" in blocked.stdout
