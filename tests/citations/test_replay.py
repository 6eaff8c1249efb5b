"""A replay on real history: functions of git-neo itself, cited at an old commit of its own history
(tests/citations/fixtures/replay.bundle, see make_replay_bundle.py), walked forward commit by
commit through the real commit worker. At every commit each citation's recorded state must say
what actually happened to the function: `changed` exactly when its code differs from the cited
code (compared by Python's own `ast`, which ignores whitespace and comments, independently of
tree-sitter), `verified` otherwise; and every commit at which a state flips must be one that
`git log -L :FUNC:FILE` lists as changing the function."""
from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers.git import git

BUNDLE = Path(__file__).parent / "fixtures" / "replay.bundle"
ANCHOR_INDEX = 1          # cite at the second commit of the bundle
MAX_CITED = 40


def _show(repo: Path, commit: str, path: str) -> str | None:
    proc = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=repo, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=30)
    return proc.stdout if proc.returncode == 0 else None


def _functions(source: str) -> dict[str, ast.AST]:
    """Qualified name -> def node (top-level functions and methods of top-level classes)."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{item.name}"] = item
    return out


def _shape(source: str | None, name: str) -> str | None:
    """The function's code as `ast` sees it (comments and layout gone), without its own name
    (git-neo follows a renamed function as moved); None when absent."""
    if source is None:
        return None
    try:
        node = _functions(source).get(name)
    except SyntaxError:
        return None
    if node is None:
        return None
    return ast.dump(node, include_attributes=False).replace(f"name='{node.name}'", "name=_", 1)


def _log_l(repo: Path, path: str, name: str, end: str) -> set[str]:
    short = name.rsplit(".", 1)[-1]
    out = git(repo, "log", "-L", f":def {short}(:{path}", "--format=%H", "-s", end, check=False)
    return set(re.findall(r"^[0-9a-f]{40}$", out, re.M))


@pytest.mark.timeout(600)
def test_citations_follow_real_history_as_log_l_and_ast_see_it(tmp_path):
    from neo_git.identity import open_repository
    from neo_git.outcomes.processing import process_commits
    from neo_git.store import FactStore

    repo = tmp_path / "replay"
    git(tmp_path, "clone", "-q", str(BUNDLE), str(repo))
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("*.py diff=python\n")   # log -L finds defs
    git(repo, "config", "neo.autoGc", "false")
    commits = git(repo, "rev-list", "--reverse", "main").split()
    assert len(commits) > 20
    anchor, walk, final = commits[ANCHOR_INDEX], commits[ANCHOR_INDEX + 1:], commits[-1]
    git(repo, "checkout", "-q", anchor)

    # a few dozen functions, each with a unique `def name(` at the anchor and at the end
    targets: list[tuple[str, str]] = []
    for path in git(repo, "ls-tree", "-r", "--name-only", anchor).split():
        if not path.endswith(".py"):
            continue
        start, end = _show(repo, anchor, path), _show(repo, final, path)
        if start is None or end is None:
            continue
        for name in sorted(_functions(start)):
            short = name.rsplit(".", 1)[-1]
            unique = all(len(re.findall(rf"def {re.escape(short)}\(", text)) == 1 for text in (start, end))
            if unique and name in _functions(end):
                targets.append((path, name))
    targets = targets[::max(1, len(targets) // MAX_CITED)][:MAX_CITED]
    assert len(targets) >= 24

    store = FactStore.open(repo)
    store.init()
    facts = store.add_many([{"subject": f"About {path}:{name}", "body": f"What {name} does ({i}).",
                             "kind": "decision", "cites": [f"{path}:{name}"]}
                            for i, (path, name) in enumerate(targets)])
    ids = {(path, name): fact.id for (path, name), fact in zip(targets, facts)}
    cited = {target: _shape(_show(repo, anchor, target[0]), target[1]) for target in targets}

    r = open_repository(repo)
    states: dict[tuple[str, str], list[str]] = {t: ["verified"] for t in targets}   # as cited
    flips: dict[tuple[str, str], list[str]] = {t: [] for t in targets}
    for commit in walk:
        [result] = process_commits(r, [commit], catch_up=False)
        assert not result.errors, result.errors
        stored = {f.id: f for f in FactStore.open(repo).list()}
        for target in targets:
            citation = stored[ids[target]].metadata.citations[0]
            state = citation["state"]
            if states[target][-1] != state:
                flips[target].append(commit)
            states[target].append(state)
            now = _shape(_show(repo, commit, citation["path"]), citation.get("symbol") or target[1])
            expected = "verified" if now == cited[target] else "changed"
            assert state == expected, (target, commit, state, expected)

    changed_any, layout_only = 0, 0
    for target in targets:
        touched = _log_l(repo, target[0], target[1], final)
        for commit in flips[target]:
            assert commit in touched, (target, commit, "flipped at a commit log -L does not list")
        changed_any += "changed" in states[target]
        before_flip = walk[:walk.index(flips[target][0])] if flips[target] else walk
        layout_only += len(touched.intersection(before_flip))   # log -L saw an edit, the code was the same
    assert changed_any >= 3    # real history changed some of them, and it was seen
    print(f"{len(targets)} functions over {len(walk)} commits: {changed_any} changed, "
          f"{sum(len(f) for f in flips.values())} state changes, each at a commit log -L lists; "
          f"{layout_only} edits log -L lists before them kept the code as cited (verified)")
