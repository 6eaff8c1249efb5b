"""The pre-commit gate: blocks only what a staged change introduces."""
from __future__ import annotations

import os
import subprocess

from neo_git.cli import main
from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import hook_env

DEEP = ("def f(x):\n    if x:\n        for i in x:\n            while i:\n                if i:\n"
        "                    with x:\n                        return i\n")


def check(repo, monkeypatch, capsys) -> tuple[int, str]:
    monkeypatch.chdir(repo)
    code = main(["health", "--staged", "--check"])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_new_cycle_blocks_and_names_the_modules(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    commit_files(repo, {"pkg/a.py": "def a():\n    return 1\n", "pkg/b.py": "from pkg import a\n"}, "modules")
    (repo / "pkg" / "a.py").write_text("from pkg import b\n\n\ndef a():\n    return 1\n")
    git(repo, "add", "pkg/a.py")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 1
    assert "new import cycle" in text and "pkg/a.py" in text and "pkg/b.py" in text


def test_what_was_already_there_never_blocks(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    commit_files(repo, {"pkg/a.py": "from pkg import b\n", "pkg/b.py": "from pkg import a\n", "deep.py": DEEP},
                 "old debt")
    (repo / "deep.py").write_text(DEEP + "\n\ndef g():\n    return 2\n")     # touched, still as deep
    (repo / "pkg" / "b.py").write_text("from pkg import a\n\nX = 1\n")        # cycle unchanged
    git(repo, "add", "-A")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 0, text


def test_deep_nesting_in_a_touched_file_blocks(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    (repo / "deep.py").write_text(DEEP)
    git(repo, "add", "deep.py")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 1 and "deep.py:6: nesting 5 is above neo.maxNesting=4" in text
    git(repo, "config", "neo.maxNesting", "6")
    assert check(repo, monkeypatch, capsys)[0] == 0


def test_a_new_god_file_blocks(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    git(repo, "config", "neo.godFileFunctions", "3")
    (repo / "big.py").write_text("".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(5)))
    git(repo, "add", "big.py")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 1 and "big.py: becomes a god file" in text


def test_the_shim_blocks_a_real_commit_and_internal_errors_pass(repo_with_commit, monkeypatch):
    repo = repo_with_commit
    monkeypatch.chdir(repo)
    assert main(["install"]) == 0
    (repo / "deep.py").write_text(DEEP)
    git(repo, "add", "deep.py")
    env = {**os.environ, **hook_env(NEO_HOOK_SYNC="1")}
    proc = subprocess.run(["git", "commit", "-qm", "deep"], cwd=repo, env=env, capture_output=True, text=True)
    assert proc.returncode == 1 and "nesting 5" in proc.stderr
    # an internal error (a corrupt index file named by GIT_INDEX_FILE) warns and lets the commit through...
    (repo / "bad-index").write_bytes(b"DIRC" + b"\xff" * 64)
    broken = {**env, "GIT_INDEX_FILE": str(repo / "bad-index")}
    proc = subprocess.run(["git-neo", "hook", "pre-commit"], cwd=repo, env=broken, capture_output=True, text=True)
    assert proc.returncode == 0 and "internal error" in proc.stderr
    # ...unless neo.strict=true
    git(repo, "config", "neo.strict", "true")
    proc = subprocess.run(["git-neo", "hook", "pre-commit"], cwd=repo, env=broken, capture_output=True, text=True)
    assert proc.returncode == 1


# --- import-time cycles, renames, unjudged files (issue 19) ---------------------------

def test_moving_an_import_into_the_function_passes_and_health_still_reports_the_cycle(
        repo_with_commit, monkeypatch, capsys):
    """The click-style reproduction: `construct/architecture/import-at-the-edge` says to move
    the import into the function that uses it; the guard must let that commit through."""
    repo = repo_with_commit
    (repo / "pkg").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "_neo_x.py").write_text("from . import _neo_y\n\n\ndef f():\n    return _neo_y.g()\n")
    (repo / "pkg" / "_neo_y.py").write_text("def g():\n    from . import _neo_x\n    return _neo_x\n")
    git(repo, "add", "-A")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 0, text
    assert main(["health", "--staged"]) == 0
    report = capsys.readouterr().out
    assert "import cycles: 1 (0 at import time, 1 closing only through a deferred import)" in report
    assert "closes only through a deferred import at pkg/_neo_y.py:2" in report
    # the same cycle at import time is blocked, named in import order with its lines
    (repo / "pkg" / "_neo_y.py").write_text("from . import _neo_x\n\n\ndef g():\n    return _neo_x\n")
    git(repo, "add", "-A")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 1 and "pkg/_neo_x.py: new import cycle: pkg/_neo_x.py:1 → pkg/_neo_y.py:1 → pkg/_neo_x.py" in text


def test_guard_cycles_all_blocks_deferred_cycles_too(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    (repo / "a.py").write_text("import b\n")
    (repo / "b.py").write_text("def late():\n    import a\n")
    git(repo, "add", "-A")
    assert check(repo, monkeypatch, capsys)[0] == 0
    git(repo, "config", "neo.guardCycles", "all")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 1 and "new import cycle (through a deferred import): b.py:2 (deferred) → a.py:1 → b.py" in text


def test_renaming_a_module_already_in_a_cycle_is_not_a_new_cycle(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    body = "\n\ndef helper():\n    return 'a long enough body for git to see a rename'\n"
    commit_files(repo, {"pkg/__init__.py": "", "pkg/a.py": "from pkg import b\n" + body,
                        "pkg/b.py": "from pkg import a\n" + body}, "an old cycle")
    git(repo, "mv", "pkg/b.py", "pkg/c.py")
    (repo / "pkg" / "a.py").write_text("from pkg import c\n" + body)
    git(repo, "add", "-A")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 0, text
    # a brand-new module joining the renamed cycle still blocks
    (repo / "pkg" / "d.py").write_text("from pkg import a\n")
    (repo / "pkg" / "c.py").write_text("from pkg import a\nfrom pkg import d\n" + body)
    git(repo, "add", "-A")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 1 and "pkg/d.py: new import cycle" in text


def test_renaming_a_go_package_in_a_cycle_is_not_a_new_cycle(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    commit_files(repo, {
        "go.mod": "module example.com/m\n",
        "a/a.go": 'package a\n\nimport "example.com/m/b"\n\n// A calls into b; long enough to be a rename.\nfunc A() { b.B() }\n',
        "b/b.go": 'package b\n\nimport "example.com/m/a"\n\n// B calls into a; long enough to be a rename.\nfunc B() { a.A() }\n',
    }, "go cycle")
    git(repo, "mv", "b", "c")
    (repo / "a" / "a.go").write_text(
        'package a\n\nimport "example.com/m/c"\n\n// A calls into b; long enough to be a rename.\nfunc A() { c.B() }\n')
    git(repo, "add", "-A")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 0, text


def test_a_big_new_cycle_is_named_in_a_few_lines(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    for i in range(3000):
        (repo / f"m{i}.py").write_text(f"import m{(i + 1) % 3000}\n")
    git(repo, "add", "-A")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 1 and len(text.encode()) < 1000, text
    assert "m0.py: new import cycle: m0.py:1 → m1.py:1 → m2.py:1 → m3.py:1 → m4.py:1 → m5.py:1 → " \
           "… 2994 more modules → m0.py" in text


def test_tests_and_excluded_files_are_not_gated(repo_with_commit, monkeypatch, capsys):
    repo = repo_with_commit
    big = "".join(f"def test_{i}():\n    assert {i}\n\n\n" for i in range(60))
    (repo / "tests").mkdir()
    (repo / "tests" / "test_big.py").write_text(big + DEEP)
    (repo / "gen").mkdir()
    (repo / "gen" / "deep.py").write_text(DEEP)
    git(repo, "config", "neo.healthExclude", "gen/")
    git(repo, "add", "-A")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 0, text
    (repo / "big.py").write_text(big)          # the same file outside tests is a god file
    git(repo, "add", "-A")
    code, text = check(repo, monkeypatch, capsys)
    assert code == 1 and "big.py: becomes a god file" in text and "tests/" not in text and "gen/" not in text


def test_the_guard_process_gives_up_at_its_time_limit(repo_with_commit, monkeypatch):
    """In-process limit (for the pre-commit framework, which has no shim): a scan that cannot
    finish in time warns and lets the commit through, or blocks with neo.strict."""
    repo = repo_with_commit
    for i in range(300):
        (repo / f"m{i}.py").write_text(f"import m{(i + 1) % 300}\n\n\ndef f():\n    return {i}\n")
    git(repo, "add", "-A")
    git(repo, "config", "neo.guardTimeoutMs", "20")
    env = {**os.environ, **hook_env()}
    proc = subprocess.run(["git-neo", "hook", "pre-commit", "--block-exit", "86"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "no answer within 20 ms (neo.guardTimeoutMs), commit allowed" in proc.stderr
    git(repo, "config", "neo.strict", "true")
    proc = subprocess.run(["git-neo", "hook", "pre-commit", "--block-exit", "86", "--timeout-ms", "20"], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 86 and "blocking (neo.strict=true)" in proc.stderr


def test_the_check_works_on_a_conflicted_index_and_stores_the_staged_tree(repo_with_commit, monkeypatch, capsys):
    """A conflicted index cannot be written as a tree: it is measured as an index. A clean one
    is the tree the commit will record, whose state the next commit's guard starts from."""
    import pygit2

    from neo_git.health.cache import MetricsCache, cache_path
    from neo_git.health.versions import analyzer_version, state_version

    repo = repo_with_commit
    commit_files(repo, {"a.py": "X = 1\n"}, "base")
    git(repo, "checkout", "-q", "-b", "other")
    commit_files(repo, {"a.py": "X = 2\n"}, "other")
    git(repo, "checkout", "-q", "main")
    commit_files(repo, {"a.py": "X = 3\n"}, "main")
    git(repo, "merge", "-q", "other", check=False)
    code, text = check(repo, monkeypatch, capsys)
    assert code == 0, text
    git(repo, "merge", "--abort")
    (repo / "b.py").write_text("import a\n")
    git(repo, "add", "b.py")
    assert check(repo, monkeypatch, capsys)[0] == 0
    staged_tree = git(repo, "write-tree").strip()
    with MetricsCache(cache_path(pygit2.Repository(str(repo))), analyzer_version(), state_version()) as cache:
        assert cache.load_state([bytes.fromhex(staged_tree)]) is not None
