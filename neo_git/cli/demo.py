"""`git neo demo`: the whole loop on a throwaway repository, offline, in a few seconds."""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path


def register(sub) -> dict[str, str]:
    """Add demo."""
    p = sub.add_parser("demo", help="run the offline demo on a throwaway repository")
    p.add_argument("--keep", action="store_true", help="keep the demo repository and print its path")
    return {"demo": "cmd_demo"}

APP = {
    "app/__init__.py": "",
    "app/http.py": (
        "import httpx\n\nfrom app import config\n\n\n"
        "def fetch(url):\n    return httpx.get(url, timeout=config.TIMEOUT)\n"
    ),
    # config imports http back: an import cycle the demo's second commit removes.
    "app/config.py": "from app.http import fetch\n\nTIMEOUT = 30\nHEALTH_URL = 'http://localhost/health'\n\n\ndef ping():\n    return fetch(HEALTH_URL)\n",
    "app/hooks.py": (
        "from app.http import fetch\n\n\n"
        "def post_commit(paths):\n    for path in paths:\n        if path.endswith('.py'):\n"
        "            if 'skip' not in path:\n                print(path)\n"
    ),
}


def _git(repo: Path, *args: str) -> str:
    from neo_git.gitrun import git_output

    return git_output(args, cwd=repo, env={
        "GIT_AUTHOR_NAME": "Demo", "GIT_AUTHOR_EMAIL": "demo@example.com",
        "GIT_COMMITTER_NAME": "Demo", "GIT_COMMITTER_EMAIL": "demo@example.com"})


def _step(title: str, argv: list[str]) -> None:
    from neo_git.cli import main

    # Printed exactly as a shell needs it, so a line copied from the demo runs as shown.
    print(f"\n$ {shlex.join(['git', 'neo', *argv])}    # {title}", flush=True)
    code = main(argv)
    sys.stdout.flush()
    if code != 0:
        raise SystemExit(code)


def cmd_demo(args: argparse.Namespace) -> int:
    """Create a small repository, remember facts about it, supersede one, recall, measure health."""
    work = Path(tempfile.mkdtemp(prefix="git-neo-demo-"))
    repo = work / "repo"
    old_cwd, old_home = os.getcwd(), os.environ.get("NEO_HOME")
    os.environ["NEO_HOME"] = str(work / "neo-home")  # never touch the user's ~/.neo
    try:
        repo.mkdir()
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "config", "user.name", "Demo")
        _git(repo, "config", "user.email", "demo@example.com")
        for name, text in APP.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text, encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "A tiny app")
        os.chdir(repo)
        print(f"Demo repository: {repo}" + ("" if args.keep else
                                             " (deleted when the demo ends; `git neo demo --keep` keeps it)"))
        _step("set up refs/neo/facts", ["init"])
        _step("a constraint: always recalled", ["add", "--kind", "constraint", "No network calls in hooks",
                                                 "Post-commit work must never touch the network."])
        _step("a decision", ["add", "--kind", "decision", "HTTP client",
                             "We use httpx with a 10 s timeout for all outbound calls."])
        _step("the same decision, said differently: supersedes the first",
              ["add", "--kind", "decision", "HTTP client", "All outbound HTTP goes through httpx, timeout 30 s."])
        _step("what memory says about a question", ["recall", "which HTTP client and timeout do we use?"])
        decision = _latest_superseded()
        if decision:
            _step("why the old decision is no longer current", ["why", decision])
            _step("the chain, oldest first", ["history", decision])
        print("\n$ git log --oneline refs/neo/facts    # the audit trail is plain git")
        print(_git(repo, "log", "--oneline", "refs/neo/facts"), end="")
        _step("code health from git objects: import cycles, god files, nesting", ["health"])
        _step("a curated pattern for what health found", ["construct", "search", "break an import cycle", "-k", "1"])
        fixed = ("import os\n\nTIMEOUT = int(os.environ.get('APP_TIMEOUT', '30'))\n"
                 "HEALTH_URL = 'http://localhost/health'\n")
        (work / "suggested_config.py").write_text(fixed, encoding="utf-8")
        _step("advice, recorded so git-neo can learn whether it ships",
              ["suggest", "--file", "app/config.py", "--code-file", str(work / "suggested_config.py"),
               "--fact", _current_decision(), "--description", "config stops importing http; timeout from the environment"])
        (repo / "app" / "config.py").write_text(fixed, encoding="utf-8")
        _git(repo, "commit", "-q", "-am", "config no longer imports http")
        print(f"\n$ {shlex.join(['git', 'commit', '-am', 'config no longer imports http'])}"
              "    # the post-commit hook does the rest")
        _process_head(repo)
        _step("the advice shipped as written, and the code got healthier", ["outcomes"])
        _step("so the decision it relied on gained confidence", ["show", _current_decision()])
        _step("did that commit make the code healthier?", ["health", "--diff", "HEAD~1", "HEAD"])
        print("\nDone. Everything above ran offline on a throwaway repository.")
        if args.keep:
            print(f"Kept: {repo} (NEO_HOME={work / 'neo-home'})")
        return 0
    finally:
        os.chdir(old_cwd)
        if old_home is None:
            os.environ.pop("NEO_HOME", None)
        else:
            os.environ["NEO_HOME"] = old_home
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _process_head(repo: Path) -> None:
    """What the installed post-commit hook hands to its background worker, run here in-process
    so the demo can show the result at once."""
    from neo_git.identity import open_repository
    from neo_git.outcomes.processing import process_commits

    opened = open_repository(repo)
    process_commits(opened, [str(opened.head.target)])


def _current_decision() -> str:
    from neo_git.store import FactStore

    return next(f.id for f in FactStore.open().list(kind="decision"))


def _latest_superseded() -> str | None:
    from neo_git.store import FactStore

    retired = [f for f in FactStore.open().list(include_invalid=True) if f.superseded_by]
    return retired[-1].id if retired else None
