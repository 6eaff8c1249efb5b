"""`git neo doctor` knows what breaks a first hour: hooks gone, stale or no longer chained,
git-neo reachable only through an active virtualenv, an agent config whose command is not on
PATH or runs a git-neo without the `mcp` extra, several remotes with facts and none chosen —
each reported with the exact fix, and the fix it names works."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from neo_git.cli import main
from tests.helpers.git import commit_files, git

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = str(Path(sys.executable).parent)
SYSTEM_PATH = "/usr/bin:/bin"


def doctor(capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["doctor"])
    return code, capsys.readouterr().out


@pytest.fixture
def repo(repo_with_commit, monkeypatch):
    monkeypatch.chdir(repo_with_commit)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + SYSTEM_PATH)
    return repo_with_commit


def test_hooks_gone_stale_replaced_or_with_an_unrunnable_chained_hook(repo, capsys):
    hooks = repo / ".git" / "hooks"
    (hooks / "post-merge").write_text("#!/bin/sh\necho mine\n")        # the user's own hook: gets chained
    (hooks / "post-merge").chmod(0o755)
    assert main(["install"]) == 0
    assert doctor(capsys) == (0, "git-neo doctor: no problems found\n")
    (hooks / "post-commit").unlink()
    (hooks / "post-rewrite").write_text((hooks / "post-rewrite").read_text().replace("nice -n 10", "nice -n 5"))
    (hooks / "post-merge.neo-chained").chmod(0o644)
    (hooks / "pre-commit").rename(hooks / "pre-commit.saved")
    (hooks / "pre-commit").write_text("#!/bin/sh\nexec lint-staged\n")  # another tool took the hook over
    (hooks / "pre-commit").chmod(0o755)
    code, out = doctor(capsys)
    assert code == 1
    assert f"problem: the post-commit hook is gone from {hooks}: git-neo's post-commit work does not run" in out
    assert "the post-rewrite shim in" in out and "is not the one this git-neo ships" in out
    assert f"your own post-merge hook ({hooks / 'post-merge.neo-chained'}) is not executable" in out
    assert f"`chmod +x {hooks / 'post-merge.neo-chained'}` if it should run" in out
    assert f"{hooks / 'pre-commit'} is no longer git-neo's shim (something replaced it)" in out
    assert "`git neo install` keeps it (as pre-commit.neo-chained)" in out
    assert main(["doctor", "--fix"]) == 1                            # the two that are ours to fix, fixed
    out = capsys.readouterr().out
    assert "fixed:   the post-commit hook is gone" in out and "fixed:   the post-rewrite shim" in out
    assert "git-neo hook shim" in (hooks / "post-commit").read_text()
    assert main(["install"]) == 0                                    # the hint's command chains lint-staged
    os.chmod(hooks / "post-merge.neo-chained", 0o755)
    assert doctor(capsys) == (0, "git-neo doctor: no problems found\n")
    assert (hooks / "pre-commit.neo-chained").read_text() == "#!/bin/sh\nexec lint-staged\n"


def _hint_command(out: str) -> str:
    return re.search(r"`((?:mkdir|ln) [^`]+)`", out).group(1)


def test_git_neo_only_in_the_active_virtualenv_and_the_link_that_fixes_it(repo, capsys, monkeypatch, tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "git-neo").symlink_to(Path(VENV_BIN) / "git-neo")
    home = Path(os.environ["HOME"])
    (home / "bin").mkdir()
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("PATH", os.pathsep.join([str(venv / "bin"), SYSTEM_PATH, str(home / "bin")]))
    assert main(["install"]) == 0
    err = capsys.readouterr().err                                    # install says so at once
    assert f"warning: git-neo is on PATH only while the virtualenv {venv} is active" in err and "hint: `ln -s " in err
    code, out = doctor(capsys)
    assert code == 1 and f"git-neo is on PATH only while the virtualenv {venv} is active" in out
    command = _hint_command(out)
    assert command.startswith("ln -s ") and command.endswith(f" {home / 'bin' / 'git-neo'}")
    subprocess.run(["sh", "-c", command], check=True)                # the fix, as printed
    assert doctor(capsys) == (0, "git-neo doctor: no problems found\n")
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    monkeypatch.delenv("VIRTUAL_ENV")
    code, out = doctor(capsys)
    assert code == 1 and "git-neo is not on PATH here: commits made from this shell skip git-neo's hooks" in out
    assert f"`mkdir -p {home / '.local' / 'bin'} && ln -s " in out and "add " in out


@pytest.fixture
def python_without_mcp(tmp_path) -> Path:
    """A real environment without the `mcp` extra: a venv that sees this one's packages except
    mcp (and git-neo from the source tree), with a `git-neo` console script of its own."""
    venv = tmp_path / "nomcp"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    shown = tmp_path / "site-without-mcp"
    shown.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(("mcp", "__editable__", "git_neo")):
            (shown / entry.name).symlink_to(entry)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "shown.pth").write_text(f"{ROOT}\n{shown}\n")
    script = venv / "bin" / "git-neo"
    script.write_text(f"#!{venv / 'bin' / 'python'}\nfrom neo_git.cli import run\nrun()\n")
    script.chmod(0o755)
    assert subprocess.run([str(venv / "bin" / "python"), "-c", "import mcp"], capture_output=True).returncode != 0
    return venv


def test_agent_install_refuses_in_an_environment_without_mcp(repo, python_without_mcp):
    proc = subprocess.run([str(python_without_mcp / "bin" / "git-neo"), "agent", "install", "claude"], cwd=repo,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "needs the `mcp` extra" in proc.stderr
    assert f"hint: install it: `{python_without_mcp / 'bin' / 'python'} -m pip install " in proc.stderr
    assert not (repo / ".mcp.json").exists()


def test_agent_config_command_missing_or_without_mcp(repo, capsys, monkeypatch, python_without_mcp):
    assert main(["agent", "install", "claude"]) == 0
    assert main(["agent", "install", "codex"]) == 0
    assert doctor(capsys) == (0, "git-neo doctor: no problems found\n")
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    code, out = doctor(capsys)
    assert code == 1
    line = next(line for line in out.splitlines() if "start `git-neo` for" in line)
    assert line.endswith(" start `git-neo` for Claude Code and Codex, and it is not on PATH here: Claude Code "
                         "and Codex cannot start git-neo's MCP server or its hooks")
    for name in (".mcp.json", ".claude/settings.json", ".codex/config.toml"):
        assert str(repo / name) in line
    monkeypatch.setenv("PATH", str(python_without_mcp / "bin") + os.pathsep + SYSTEM_PATH)
    code, out = doctor(capsys)
    assert code == 1
    assert (f"the git-neo Claude Code and Codex starts ({python_without_mcp / 'bin' / 'git-neo'}) lacks the `mcp` "
            "extra: `git neo mcp` exits at once inside Claude Code and Codex") in out
    assert f"install it: `{python_without_mcp / 'bin' / 'python'} -m pip install " in out
    assert main(["agent", "install", "claude", "--uninstall"]) == 0
    assert main(["agent", "install", "codex", "--uninstall"]) == 0
    assert doctor(capsys) == (0, "git-neo doctor: no problems found\n")


def test_several_remotes_with_facts_and_none_chosen(repo, capsys):
    head = commit_files(repo, {"a.txt": "a\n"}, "a")
    for name in ("origin", "upstream"):
        git(repo, "remote", "add", name, f"/nowhere/{name}.git")
    git(repo, "update-ref", "refs/remotes/origin/neo/facts", head)
    assert doctor(capsys)[0] == 0                                    # one remote with facts: sync would ask
    git(repo, "update-ref", "refs/remotes/upstream/neo/facts", head)
    code, out = doctor(capsys)
    assert code == 1
    assert "2 remotes carry facts (origin, upstream) and none is chosen for sharing yours (neo.remote)" in out
    assert "choose one: `git neo sync --remote origin` or `git neo sync --remote upstream`" in out
    git(repo, "config", "neo.remote", "origin")
    assert doctor(capsys)[0] == 0
    git(repo, "remote", "remove", "origin")
    code, out = doctor(capsys)
    assert code == 1 and "neo.remote names 'origin', which is not a remote any more" in out
    assert "choose another: `git neo sync --remote upstream`" in out
