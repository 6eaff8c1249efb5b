"""The README is executable: every code block runs, as pasted and in order, so the README
cannot drift from what git-neo does.

How the blocks run: one `bash` session (`set -eo pipefail`: a failing command fails its
block), started in a fresh throwaway repository that is a clone of a bare `origin` with a
small Python app, under the test's isolated HOME/NEO_HOME and with no git-neo on PATH until
the README installs it. `sh`/`bash` blocks run as written; `python` blocks run through the
`python3` on PATH, in the session's current directory; a block the shell cannot run by
itself (the pre-commit YAML) names its file in a marker right above it, and is written to
that file at that point. `/path/to/git-neo` is the README's name for "your clone of
git-neo": the test makes one (this checkout's files, uncommitted edits included, committed
in a new repository) and puts its path there. That is the only substitution. (The stand-in leaves out tests/ and benchmarks/.)

Markers (HTML comments on the line right above a block, visible in the README's source):

    <!-- readme-test: skip (why: what the test machine cannot have) -->
    <!-- readme-test: file PATH -->
    <!-- readme-test: in-clone -->     (the block says "in your clone of git-neo": it runs there,
                                        in a subshell, so the next block is back in the repository)
    <!-- readme-test: hooks-in-background -->   (the hooks' worker runs in the background, as a
                                        user has it: NEO_HOOK_SYNC is unset for the block)

Anything else fails the test, as does a block without a language or a skip without a reason.

The machine, not the README: `python3` is a fresh virtualenv that sees this environment's
installed packages (so `pip install /path/to/git-neo` needs no network and builds in a
second; its `pip.conf` says `no-index` and no build isolation); the pre-commit command is
this environment's; hooks run in the foreground (`NEO_HOOK_SYNC=1`); no provider key is set.
The pre-commit framework builds its hooks' environment once per content of this checkout
(cached under NEO_TEST_CACHE or ~/.cache/git-neo-tests, like the try-repo test's pip cache);
NEO_SKIP_TRY_REPO=1 skips that build (pre-commit still reads the YAML, clones the rev and
checks the hook ids, with `SKIP=<the hook ids>`).
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.helpers.git import commit_files, git

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CLONE_PLACEHOLDER = "/path/to/git-neo"
REAL_HOME = os.path.expanduser("~")        # read at import, before the test isolation swaps HOME
CACHE = Path(os.environ.get("NEO_TEST_CACHE") or os.path.join(REAL_HOME, ".cache", "git-neo-tests"))
PIP_CACHE = CACHE / "pip"                  # shared with the try-repo test
SHELL_LANGS = {"sh", "bash", "shell"}
MARKER = re.compile(r"^<!--\s*readme-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^```\s*([A-Za-z0-9_+-]*)\s*$")
FIXED_DATE = "2024-01-01T00:00:00+00:00"   # the clone's commit id depends only on its content


@dataclass(frozen=True)
class Block:
    """One fenced block of the README."""

    lang: str
    text: str
    line: int                              # 1-based line of the opening fence
    marker: str | None                     # what the readme-test comment above it says

    @property
    def skip_reason(self) -> str | None:
        """The reason of a `skip (…)` marker."""
        match = re.fullmatch(r"skip\s*\((.+)\)", self.marker or "")
        return match.group(1).strip() if match else None

    @property
    def in_clone(self) -> bool:
        """An `in-clone` marker: the block runs in the clone of git-neo."""
        return self.marker == "in-clone"

    @property
    def hooks_in_background(self) -> bool:
        """A `hooks-in-background` marker: the block runs without NEO_HOOK_SYNC, pasted in one go."""
        return self.marker == "hooks-in-background"

    @property
    def file(self) -> str | None:
        """The path of a `file PATH` marker."""
        match = re.fullmatch(r"file\s+(\S+)", self.marker or "")
        return match.group(1) if match else None


def readme_blocks(text: str | None = None) -> list[Block]:
    """Every fenced block of the README, with the marker right above it."""
    lines = (README.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        above = MARKER.match(lines[start - 1]) if start else None
        blocks.append(Block(fence.group(1).lower(), "\n".join(body) + "\n", start + 1,
                            above.group(1) if above else None))
        i += 1
    return blocks


def _problems(blocks: list[Block]) -> list[str]:
    problems = []
    for b in blocks:
        where = f"README.md:{b.line}"
        if b.marker is not None and b.skip_reason is None and b.file is None and not b.in_clone \
                and not b.hooks_in_background:
            problems.append(f"{where}: unknown readme-test marker {b.marker!r} "
                            "(use `skip (reason)`, `file PATH`, `in-clone` or `hooks-in-background`)")
        if b.skip_reason is not None:
            continue
        if not b.lang:
            problems.append(f"{where}: a block without a language (```sh, ```python, ```yaml …)")
        elif b.lang not in SHELL_LANGS and b.lang != "python" and b.file is None:
            problems.append(f"{where}: a ```{b.lang} block needs `<!-- readme-test: file PATH -->` above it "
                            "(or a skip with its reason)")
        if b.lang in SHELL_LANGS:
            for number, line in enumerate(b.text.splitlines(), b.line + 1):
                code = line.split(" #", 1)[0]
                if re.search(r"(?<![\w\"'`])<[A-Za-z][\w-]*>", code) or re.search(r"\s\[[A-Za-z-]+\]", code):
                    problems.append(f"README.md:{number}: a placeholder the shell cannot run: {line.strip()}")
    return problems


def test_every_block_is_runnable_or_says_why_not():
    """Cheap, and first: the form of every block (the long test below runs them)."""
    blocks = readme_blocks()
    assert blocks and not _problems(blocks), "\n".join(_problems(blocks))
    assert any(b.lang == "yaml" and b.file == ".pre-commit-config.yaml" for b in blocks)


def test_the_lint_catches_what_would_not_run():
    sample = ("```\nls\n```\n<!-- readme-test: skip () -->\n```sh\nx\n```\n```yaml\na: 1\n```\n"
              "```sh\ngit neo why <id>\ngit neo construct validate [PATH]\n```\n<!-- readme-test: maybe -->\n```sh\nx\n```\n")
    problems = "\n".join(_problems(readme_blocks(sample)))
    for expected in ("without a language", "needs `<!-- readme-test: file PATH -->`", "git neo why <id>",
                     "validate [PATH]", "unknown readme-test marker 'skip ()'", "unknown readme-test marker 'maybe'"):
        assert expected in problems


# --- the run ------------------------------------------------------------------------------

# Left out of the stand-in clone: nothing the README runs from a clone needs them, and editing
# a test would otherwise rebuild pre-commit's environment of the hooks.
NOT_CLONED = ("tests/", "benchmarks/")


def _checkout_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                         check=True, timeout=60).stdout.decode()
    return sorted(name for name in out.split("\0")
                  if name and not name.startswith(NOT_CLONED) and (ROOT / name).is_file())


def _content_key(files: list[str]) -> str:
    digest = hashlib.sha256()
    for name in files:
        path = ROOT / name
        digest.update(f"{name}\0{path.stat().st_mode & 0o111}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def _make_clone(dest: Path, files: list[str]) -> None:
    """This checkout's files, committed in a new repository at *dest* (a stand-in for a clone)."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for name in files:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    env = {"GIT_AUTHOR_DATE": FIXED_DATE, "GIT_COMMITTER_DATE": FIXED_DATE}
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "git-neo", env=env)


@pytest.fixture
def clone(tmp_path):
    """The stand-in for the user's clone of git-neo, at a path that depends only on this
    checkout's content, so pre-commit's cache of the hooks' environment (keyed by repository
    path and rev) is reused while the content is the same. One test session at a time per
    content (a lock); folders of other contents untouched for a day are removed."""
    files = _checkout_files()
    key = _content_key(files)
    base = CACHE / "readme"
    base.mkdir(parents=True, exist_ok=True)
    for old in base.iterdir():
        if old.is_dir() and old.name != key and time.time() - old.stat().st_mtime > 86400:
            with open(base / f"{old.name}.lock", "a") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue
                shutil.rmtree(old, ignore_errors=True)
    with open(base / f"{key}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        here = base / key
        here.mkdir(exist_ok=True)
        os.utime(here)
        _make_clone(here / "git-neo", files)
        yield here / "git-neo", here / "pre-commit"


def _scratch_python(where: Path) -> Path:
    """A virtualenv whose python sees this environment's packages, and no git-neo until the
    README installs it (the editable install's finder is not loaded through a .pth line)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    site = Path(subprocess.run([str(where / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "this-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    # pip.conf in the venv (pip's "site" config): nothing from the network, build with what is installed.
    (where / "pip.conf").write_text("[global]\nno-index = true\nno-build-isolation = false\n", encoding="utf-8")
    return where / "bin"


def _user_repository(root: Path) -> Path:
    """A repository of the user's: a clone of a bare origin, with two commits of a small app."""
    origin = root / "origin.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(origin))
    seed = root / "seed"
    git(root, "init", "-q", "-b", "main", str(seed))
    commit_files(seed, {"README.md": "# shop\n", "app/__init__.py": "",
                        "app/http.py": "import urllib.request\n\n\ndef get(url):\n    return urllib.request.urlopen(url)\n"},
                 "a small app")
    commit_files(seed, {"app/orders.py": "from app.http import get\n\n\ndef orders():\n    return get('/orders')\n"},
                 "orders")
    git(seed, "push", "-q", str(origin), "main")
    repo = root / "my-repo"
    git(root, "clone", "-q", str(origin), str(repo))
    return repo


def _script(blocks: list[Block], clone: Path) -> str:
    lines = ["set -eo pipefail",
             'trap \'echo "@@ failed: exit $? at line $LINENO of README block $NEO_README_BLOCK" >&2\' ERR']
    for number, b in enumerate(blocks, 1):
        head = f"README block {number} (README.md:{b.line}, {b.lang or 'no language'})"
        lines.append(f"NEO_README_BLOCK={number}; echo '@@ {head}'; echo '@@ {head}' >&2")
        if b.skip_reason is not None:
            lines.append(f"echo '@@ skipped: {b.skip_reason}'")
            continue
        text = b.text.replace(CLONE_PLACEHOLDER, str(clone))
        if b.file is not None:
            lines += [f"cat > {b.file} <<'NEO_README_FILE'", text.rstrip("\n"), "NEO_README_FILE"]
        elif b.lang == "python":
            lines += ["python3 - <<'NEO_README_PYTHON'", text.rstrip("\n"), "NEO_README_PYTHON"]
        elif b.in_clone:
            lines += [f"( cd {shlex.quote(str(clone))}", text.rstrip("\n"), ")"]
        elif b.hooks_in_background:
            lines += ["unset NEO_HOOK_SYNC", text.rstrip("\n"), "export NEO_HOOK_SYNC=1"]
        else:
            lines.append(text.rstrip("\n"))
    lines.append("echo '@@ README done'")
    return "\n".join(lines) + "\n"


def _hook_ids(blocks: list[Block]) -> list[str]:
    ids = []
    for b in blocks:
        if b.file and b.file.endswith(".pre-commit-config.yaml"):
            for repo in (yaml.safe_load(b.text) or {}).get("repos", []):
                ids += [hook["id"] for hook in repo.get("hooks", [])]
    return ids


@pytest.mark.timeout(900)
def test_every_readme_block_runs_as_pasted(tmp_path, clone):
    clone_path, pre_commit_home = clone
    blocks = readme_blocks()
    assert not _problems(blocks), "\n".join(_problems(blocks))
    bin_dir = _scratch_python(tmp_path / "venv")
    tools = tmp_path / "tools"                    # pre-commit, as if installed with pipx
    tools.mkdir()
    (tools / "pre-commit").symlink_to(Path(sys.executable).parent / "pre-commit")
    repo = _user_repository(tmp_path)
    home = Path(os.environ["HOME"])
    ours = str(Path(sys.executable).parent)
    system = [p for p in os.environ["PATH"].split(os.pathsep) if p and os.path.abspath(p) != os.path.abspath(ours)]
    (tmp_path / "tmp").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO_", "OPENAI_", "ANTHROPIC_", "OLLAMA_",
                                                                      "PIP_", "PRE_COMMIT", "VIRTUAL_ENV"))}
    env.update({
        "PATH": os.pathsep.join([str(bin_dir), str(home / ".local" / "bin"), *system, str(tools)]),
        "VIRTUAL_ENV": str(bin_dir.parent), "NEO_HOME": os.environ["NEO_HOME"], "NEO_HOOK_SYNC": "1",
        "TMPDIR": str(tmp_path / "tmp"), "PIP_CACHE_DIR": str(PIP_CACHE), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PRE_COMMIT_HOME": str(pre_commit_home), "PAGER": "cat", "GIT_PAGER": "cat",
    })
    if os.environ.get("NEO_SKIP_TRY_REPO") == "1":
        env["SKIP"] = ",".join(_hook_ids(blocks))   # pre-commit reads, clones and checks; builds nothing
    script = tmp_path / "readme.sh"
    script.write_text(_script(blocks, clone_path), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    proc = subprocess.run(["bash", str(script)], cwd=repo, env=env, capture_output=True, text=True, timeout=880,
                          stdin=subprocess.DEVNULL)
    (tmp_path / "readme.log").write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr, encoding="utf-8")
    if proc.returncode != 0 or "@@ README done" not in proc.stdout:
        failed = re.findall(r"@@ (README block \d+ \(README\.md:\d+[^)]*\))", proc.stdout)
        number = int(re.search(r"block (\d+)", failed[-1]).group(1)) if failed else 0
        block = blocks[number - 1].text if number else ""
        pytest.fail(f"{failed[-1] if failed else 'the README script'} failed (exit {proc.returncode}):\n{block}\n"
                    f"--- stdout (end) ---\n{proc.stdout[-3000:]}\n--- stderr (end) ---\n{proc.stderr[-4000:]}")
    # What the run did, as a user would check it.
    out = proc.stdout
    assert "Done. Everything above ran offline on a throwaway repository." in out       # the demo
    assert git(repo, "config", "--get", "neo.remote").strip() == "origin"               # chosen, then shared
    assert git(repo.parent / "origin.git", "rev-parse", "refs/neo/facts").strip()
    assert "ACCEPTED" in out                                                            # the outcome loop
    # "Learning from what ships", pasted in one go with the hooks' worker in the background:
    # `outcomes --wait` shows the outcome, not "pending"; the notes ref exists for `git log --notes`.
    learning = next(b for b in blocks if b.hooks_in_background)
    head = f"(README.md:{learning.line}, "
    section, errors = (text.split(head, 1)[1].split("@@ README block", 1)[0] for text in (out, proc.stderr))
    assert "ACCEPTED" in section and "pending:" not in section, section
    assert "is invalid" not in errors and "warning" not in errors, errors
    assert (repo / ".pre-commit-config.yaml").is_file() and "pre-commit" in git(repo, "log", "-1", "--format=%s")
