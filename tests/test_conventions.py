"""What a git subcommand is expected to do: `git neo --help` opens a manual, `--version` says
what runs, empty results say so and what to do, labels line up."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from neo_git.cli import main
from tests.helpers.git import git

ROOT = Path(__file__).resolve().parent.parent
MAN = ROOT / "man" / "git-neo.1"


def _manual_commands() -> set[str]:
    text = MAN.read_text(encoding="utf-8")
    section = text.split(".SH COMMANDS", 1)[1].split("\n.SH ", 1)[0]
    names = set()
    for line in section.splitlines():
        if line.startswith((".B ", ".BR ")):
            names |= {word for word in re.findall(r'[a-z][a-z-]*', line.split(" ", 1)[1].split("\\")[0])}
    return names


def test_the_manual_lists_every_command():
    from neo_git.cli.parser import build_parser

    _, commands = build_parser()
    assert set(commands) <= _manual_commands(), sorted(set(commands) - _manual_commands())


@pytest.mark.timeout(120)
def test_git_neo_help_opens_the_manual_of_an_installed_copy(tmp_path):
    """git turns `git neo --help` into `man git-neo`; man looks in <prefix>/share/man for each
    <prefix>/bin on PATH, where pip puts the page (data_files share/man/man1)."""
    if shutil.which("man") is None:
        pytest.skip("no `man` on this machine: git's --help needs it")
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__",
                                                                 "tests", "benchmarks", ".venv*"))
    prefix = tmp_path / "prefix"
    # --ignore-installed: with --prefix alone pip uninstalls the copy this test runs from.
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--no-compile", "--ignore-installed", "--prefix", str(prefix), str(source)],
                          capture_output=True, text=True, timeout=100, env={**os.environ, "PIP_NO_INDEX": "1"})
    assert proc.returncode == 0, proc.stderr
    assert (prefix / "share" / "man" / "man1" / "git-neo.1").is_file()
    assert (Path(sys.executable).parent / "git-neo").exists()       # this environment's copy untouched
    env = {**{k: v for k, v in os.environ.items() if k not in ("MANPATH", "MANPAGER", "PAGER")},
           "PATH": f"{prefix / 'bin'}:/usr/bin:/bin", "MANPAGER": "cat", "MANWIDTH": "100"}
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    proc = subprocess.run(["git", "neo", "--help"], cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "GIT-NEO(1)" in proc.stdout and "team-shared, self-correcting memory" in proc.stdout
    assert "EXIT STATUS" in proc.stdout


def test_version_names_the_embedder_in_use(repo_with_commit, monkeypatch, capsys):
    from neo_git import __version__

    monkeypatch.chdir(repo_with_commit)
    monkeypatch.setenv("NEO_EMBEDDER", "hash")
    assert main(["--version"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"git-neo version {__version__}"
    assert re.fullmatch(r"embedder: hash-v\d+-\d+ \(set by \$NEO_EMBEDDER\)", lines[1]), lines[1]
    monkeypatch.delenv("NEO_EMBEDDER")
    git(repo_with_commit, "config", "neo.embedder", "bogus")
    assert main(["--version"]) == 0
    assert "embedder: unusable: unknown embedder 'bogus'" in capsys.readouterr().out


def test_empty_results_say_so_and_what_to_do(repo_with_commit, monkeypatch, capsys):
    monkeypatch.chdir(repo_with_commit)
    assert main(["list"]) == 0
    assert capsys.readouterr().out == 'no facts yet: git neo add "Subject" "What is true and why" (see `git neo add -h`)\n'
    assert main(["list", "--untrusted"]) == 0
    assert capsys.readouterr().out.startswith("no unverified claims: every fact here was written by you")
    assert main(["recall", "how do we deploy?"]) == 0
    assert capsys.readouterr().out.startswith('no facts yet: git neo add "Subject"')
    assert main(["add", "--kind", "decision", "Deploys", "We deploy on Tuesdays."]) == 0
    capsys.readouterr()
    assert main(["list", "--kind", "constraint"]) == 0
    assert capsys.readouterr().out == "no valid facts with --kind constraint\n"


def test_show_aligns_every_label(repo_with_commit, monkeypatch, capsys):
    monkeypatch.chdir(repo_with_commit)
    assert main(["add", "--kind", "decision", "HTTP client", "We use requests."]) == 0
    old = capsys.readouterr().out.split()[2].rstrip(":")
    assert main(["add", "--kind", "decision", "HTTP client", "We use httpx.", "--supersedes", old]) == 0
    capsys.readouterr()
    assert main(["show", old]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines()[1:] if re.match(r"^[A-Z][a-z ]+:", line)]
    assert any(line.startswith("Superseded by: ") for line in lines)
    columns = {len(line.split(":", 1)[0]) + 1 + (len(line.split(":", 1)[1]) - len(line.split(":", 1)[1].lstrip()))
               for line in lines}
    assert len(columns) == 1, lines                                # every value starts in the same column
