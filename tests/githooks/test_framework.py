"""The pre-commit framework: the published hooks, installed the framework's way."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import commit_files, git
from tests.outcome_helpers import BASE, RETRY, VENV_BIN, note, setup_repo, suggest

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
    git(repo, "config", "core.hooksPath", str(repo / ".git" / "hooks"))   # pre-commit wants it unset or default
    git(repo, "config", "--unset", "core.hooksPath")
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


@pytest.fixture(scope="module")
def snapshot_of_this_repo(tmp_path_factory) -> Path:
    """This checkout as it is now (uncommitted edits included), committed in a scratch
    repository, so both try-repo runs below use one revision and share one environment."""
    dest = tmp_path_factory.mktemp("neo-src") / "git-neo"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "snapshot")
    return dest


def test_try_repo_neo_guard_blocks_a_new_cycle_and_passes_otherwise(repo_with_commit, snapshot_of_this_repo,
                                                                    tmp_path_factory):
    """The real thing: pre-commit builds a virtualenv and pip-installs git-neo from the
    snapshot (≈30 s with a warm pip cache, once per session; the second run reuses it)."""
    repo = repo_with_commit
    env = {**os.environ, "PATH": VENV_BIN + os.pathsep + os.environ["PATH"],
           "PRE_COMMIT_HOME": str(tmp_path_factory.getbasetemp() / "pre-commit-home"),
           "PIP_CACHE_DIR": os.path.join(REAL_HOME, ".cache", "git-neo-tests", "pip"),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    commit_files(repo, {"src/a.py": "def a():\n    return 1\n", "src/b.py": "def b():\n    return 2\n"}, "modules")

    def try_repo() -> subprocess.CompletedProcess:
        return subprocess.run([PRE_COMMIT, "try-repo", str(snapshot_of_this_repo), "neo-guard"], cwd=repo, env=env,
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
