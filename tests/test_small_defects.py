"""Issue 37, deliverable 4: the smaller defects a new user met, each as they met it."""
from __future__ import annotations

import os
import subprocess

import pytest

from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import VENV_BIN

PATH = {"PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", "")}


def _git(cwd, *args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env={**os.environ, **PATH, **(env or {})})


def _god_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("god files"))


def test_settings_given_on_gits_command_line_are_read(repo_with_commit):
    repo = repo_with_commit
    commit_files(repo, {"big.py": "".join(f"X{i} = {i}\n" for i in range(150))}, "a module")
    assert _git(repo, "neo", "init").returncode == 0
    plain = _git(repo, "neo", "health")
    assert plain.returncode == 0, plain.stderr
    assert "> 800 lines" in _god_line(plain.stdout) and "big.py" not in plain.stdout.split("god files", 1)[1]
    with_c = _git(repo, "-c", "neo.godFileLines=100", "neo", "health")
    assert "> 100 lines" in _god_line(with_c.stdout) and "big.py" in with_c.stdout, with_c.stdout
    counted = _git(repo, "neo", "health", env={"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "neo.godFileLines",
                                               "GIT_CONFIG_VALUE_0": "120"})
    assert "> 120 lines" in _god_line(counted.stdout), counted.stdout
    git(repo, "config", "neo.godFileLines", "140")        # the command line wins over the stored value
    assert "> 100 lines" in _god_line(_git(repo, "-c", "neo.godFileLines=100", "neo", "health").stdout)
    assert "> 140 lines" in _god_line(_git(repo, "neo", "health").stdout)


@pytest.mark.parametrize("text, expected", [
    ("'neo.a'='1' 'neo.b'='x y'", [("neo.a", "1"), ("neo.b", "x y")]),
    ("'neo.q'='it'\\''s' 'neo.bang'='a'\\!'b'", [("neo.q", "it's"), ("neo.bang", "a!b")]),
    ("'neo.flag'= 'neo.empty'=''", [("neo.flag", None), ("neo.empty", "")]),
    ("'neo.old=v=1' 'neo.oldflag'", [("neo.old", "v=1"), ("neo.oldflag", None)]),
    ("'unterminated", []),
])
def test_git_config_parameters_are_parsed_as_git_writes_them(text, expected):
    from neo_git.config import command_line_config

    assert command_line_config({"GIT_CONFIG_PARAMETERS": text}) == expected


def test_version_into_a_pipe_that_closes_early_prints_no_traceback(tmp_path):
    # Unbuffered (PYTHONUNBUFFERED, as CI and containers often set it), each line is its own
    # write: `head -1` leaves after the first and the next one meets a closed pipe. Buffered,
    # the whole output is one write at exit and the race is not there to lose.
    proc = subprocess.run(["sh", "-c", "git-neo --version | head -1; git-neo help | head -1"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **PATH, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout.startswith("git-neo version ")
    assert proc.stderr == "", proc.stderr


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_list_shows_line_and_paragraph_separators_as_escapes(repo_with_commit, monkeypatch, capsys, separator):
    from neo_git.cli import main

    monkeypatch.chdir(repo_with_commit)
    assert main(["add", f"Layout{separator}FORGED second line", "body"]) == 0
    capsys.readouterr()
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    escape = f"\\x{ord(separator):02x}" if ord(separator) < 0x100 else f"\\u{ord(separator):04x}"
    assert separator not in out and f"Layout{escape}FORGED second line" in out, out


@pytest.mark.parametrize("committed", [False, True], ids=["work-tree", "committed"])
def test_citing_a_file_over_the_limit_says_it_is_too_large(repo_with_commit, monkeypatch, capsys, committed):
    from neo_git.cli import main

    repo = repo_with_commit
    monkeypatch.chdir(repo)
    (repo / "data.json").write_bytes(b"[" + b"1," * (9 << 20) + b"1]\n")    # 18 MB
    if committed:
        git(repo, "add", "data.json")
        git(repo, "commit", "-qm", "data")
    assert main(["add", "Data", "The data file is generated.", "--cite", "data.json"]) == 1
    err = capsys.readouterr().err
    assert "no such file" not in err and "data.json: it is larger than 4 MiB" in err and "hint: " in err, err


SYSTEM_PATH = "/usr/bin:/bin"


@pytest.mark.parametrize("how", ["moved", "copied"])
def test_doctor_after_the_repository_is_moved_or_copied(repo_with_commit, tmp_path, monkeypatch, capsys, how):
    import shutil

    from neo_git.cli import main

    monkeypatch.chdir(repo_with_commit)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + SYSTEM_PATH)
    assert main(["install"]) == 0
    elsewhere = tmp_path / "elsewhere"
    (shutil.move if how == "moved" else shutil.copytree)(str(repo_with_commit), str(elsewhere))
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    code = main(["doctor"])
    out = capsys.readouterr().out
    assert (code, out) == (0, "git-neo doctor: no problems found\n"), out
    (elsewhere / "app.py").write_text("X = 1\n")                  # and the shims there do run
    git(elsewhere, "add", "app.py")
    proc = _git(elsewhere, "commit", "-qm", "app", env={"NEO_HOOK_TRACE": str(tmp_path / "trace")})
    assert proc.returncode == 0 and "guard started" in (tmp_path / "trace").read_text()


def test_doctor_does_not_repeat_the_link_advice_once_followed(repo_with_commit, monkeypatch, capsys):
    import re
    from pathlib import Path

    from neo_git.cli import main

    monkeypatch.chdir(repo_with_commit)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + SYSTEM_PATH)
    assert main(["install"]) == 0
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    capsys.readouterr()
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    command = re.search(r"`(mkdir [^`]+)`", out).group(1)
    subprocess.run(["sh", "-c", command], check=True)              # the advice, followed
    assert main(["doctor"]) == 1                                   # PATH still lacks the folder
    out = capsys.readouterr().out
    local = Path(os.environ["HOME"]) / ".local" / "bin"
    assert "ln -s" not in out and f"{local / 'git-neo'} is in place: add {local} to the PATH" in out


def test_doctor_hint_is_only_about_what_it_found(repo_with_commit, monkeypatch, capsys):
    from neo_git.cli import main

    monkeypatch.chdir(repo_with_commit)
    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + SYSTEM_PATH)
    assert main(["install"]) == 0
    (repo_with_commit / ".git" / "hooks" / "post-commit").unlink()  # a hooks problem, nothing about the ref
    capsys.readouterr()
    assert main(["doctor"]) == 1
    err = capsys.readouterr().err
    assert "facts ref" not in err and "`git neo doctor --fix` repairs 1 of them" in err, err


def test_help_install_says_what_install_writes(repo_with_commit, tmp_path, monkeypatch, capsys):
    """The fetch refspecs are forced (a teammate's force-push of the notes must not make every
    later `git fetch` fail; they write tracking refs only), and the help says so."""
    from neo_git.cli import main

    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo_with_commit, "remote", "add", "origin", str(remote))
    monkeypatch.chdir(repo_with_commit)
    assert main(["help", "install"]) == 0
    helptext = " ".join(capsys.readouterr().out.split())
    assert "never a forced" not in helptext and "forced refspecs into tracking refs only" in helptext
    assert main(["install", "--remote", "origin"]) == 0
    specs = git(repo_with_commit, "config", "--get-all", "remote.origin.fetch").split()
    neo_specs = [s for s in specs if "neo" in s]
    assert neo_specs and all(s.startswith("+") and ":refs/remotes/" in s or ":refs/notes/remotes/" in s
                             for s in neo_specs)


def test_readme_counts_the_codex_hooks_install_writes():
    import re
    from pathlib import Path

    from neo_git.agents.install import CODEX_HOOKS

    readme = Path(__file__).resolve().parent.parent.joinpath("README.md").read_text(encoding="utf-8")
    words = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
    said = re.search(r"trust git-neo's (\w+)", readme).group(1)
    assert words[said] == len(CODEX_HOOKS)
    for event, _, _ in CODEX_HOOKS:
        assert f"`{event}`" in readme.split("trust git-neo's", 1)[1][:300]


def test_outcomes_wait_shows_the_outcome_of_a_commit_made_a_moment_ago(repo_with_commit, tmp_path):
    """The README's outcome example pasted in one go: the worker runs in the background."""
    repo = repo_with_commit
    env = {"NEO_HOOK_SYNC": ""}
    assert _git(repo, "neo", "install", env=env).returncode == 0
    commit_files(repo, {"fetch.py": "def fetch(get, url):\n    return get(url)\n"}, "fetch")
    suggested = "def fetch(get, url, attempts=3):\n    for _ in range(attempts - 1):\n        try:\n" \
                "            return get(url)\n        except OSError:\n            continue\n    return get(url)\n"
    (tmp_path / "suggested.py").write_text(suggested)
    fact = _git(repo, "neo", "add", "-q", "--kind", "pattern", "Retries", "Retry network calls.").stdout.strip()
    assert _git(repo, "neo", "suggest", "--file", "fetch.py", "--code-file", str(tmp_path / "suggested.py"),
                "--fact", fact).returncode == 0
    (repo / "fetch.py").write_text(suggested)
    assert _git(repo, "commit", "-qam", "retry", env=env).returncode == 0
    proc = _git(repo, "neo", "outcomes", "--wait", env=env)
    assert proc.returncode == 0 and "ACCEPTED" in proc.stdout and "pending:" not in proc.stdout, proc.stdout
    assert proc.stderr == "", proc.stderr
    log = _git(repo, "log", "-1", "--notes=neo")
    assert "is invalid" not in log.stderr and '"verdict":"accepted"' in log.stdout


def test_outcomes_wait_gives_up_with_a_warning(repo_with_commit, monkeypatch, capsys):
    from neo_git.cli import main

    monkeypatch.chdir(repo_with_commit)
    assert main(["install"]) == 0
    commit_files(repo_with_commit, {"a.py": "X = 1\n"}, "no worker ran for this one", env={"NEO_DISABLE": "1"})
    capsys.readouterr()
    assert main(["outcomes", "--wait", "0.3"]) == 0
    assert "has not finished with HEAD within 0.3 s" in capsys.readouterr().err


def test_the_readme_and_the_demo_say_the_demo_deletes_its_repository_unless_kept():
    from pathlib import Path

    readme = Path(__file__).resolve().parent.parent.joinpath("README.md").read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    assert "demo --keep" in quickstart and "deleted" in quickstart
    demo = Path(__file__).resolve().parent.parent.joinpath("neo_git", "cli", "demo.py").read_text(encoding="utf-8")
    assert "`git neo demo --keep` keeps it" in demo
