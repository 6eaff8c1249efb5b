"""Shared helpers for the fact-store tests: opening a store, distinct texts,
reading the ref with plain git, and planting blobs on the ref with plumbing."""
from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path

from neo_git.facts import Fact, FactScope
from neo_git.store.refstore import RefStore
from tests.helpers.git import git

REF = "refs/neo/facts"
PYTHON = sys.executable
HTTP_OLD = "We use httpx with a 10 s timeout for all outbound calls."
HTTP_NEW = "All outbound HTTP goes through httpx, timeout 30 s."


def open_store(path, **caps):
    """A FactStore on the hash embedder (deterministic), with optional lowered caps."""
    from neo_git.store import FactStore

    store = FactStore.open(path, embedder="hash")
    for scope, cap in caps.items():
        store.caps[FactScope(scope)] = cap
    return store


def memory_store(**caps):
    """An in-memory FactStore (no repository, no files) on the hash embedder, with optional
    lowered caps: for tests of the write policy and recall that do not test storage."""
    from neo_git.store import FactStore

    store = FactStore.in_memory(embedder="hash")
    for scope, cap in caps.items():
        store.caps[FactScope(scope)] = cap
    return store


def random_word(rng: random.Random, length: int = 9) -> str:
    """A made-up lower-case word: the hash embedder sees it as one rare token."""
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(length))


def distinct_text(rng: random.Random) -> tuple[str, str]:
    """A (subject, body) pair that shares no words with any other call."""
    return f"{random_word(rng)} {random_word(rng)}", " ".join(random_word(rng) for _ in range(5))


def ref_paths(repo: Path, rev: str = REF) -> list[str]:
    """Every file path in the tree of *rev*."""
    return git(repo, "ls-tree", "-r", "--name-only", rev).split()


def ref_fact_ids(repo: Path, rev: str = REF) -> set[str]:
    """Fact ids stored on the ref (by file name)."""
    return {Path(p).stem for p in ref_paths(repo, rev) if p.startswith("facts/")}


def show_blob(repo: Path, fact_id: str, rev: str = REF) -> str:
    """`git show REF:facts/ab/abcd….json`."""
    return git(repo, "show", f"{rev}:facts/{fact_id[:2]}/{fact_id}.json")


def commit_messages(repo: Path, rev: str = REF) -> list[str]:
    """Subjects of the ref's commits, newest first."""
    return git(repo, "log", "--format=%s", rev).splitlines()


def plant_blob(repo: Path, path: str, content: bytes, message: str = "teammate: bad fact") -> str:
    """Add *content* at *path* on the ref with git plumbing only (a temp index), as a
    teammate's push would; returns the blob id."""
    tmp_index = Path(repo) / ".git" / "neo-test-index"
    env = {"GIT_INDEX_FILE": str(tmp_index)}
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=content,
                          capture_output=True, check=True, timeout=30).stdout.decode().strip()
    parent = git(repo, "rev-parse", "--verify", "-q", REF, check=False).strip()
    if parent:
        git(repo, "read-tree", REF, env=env)
    else:
        git(repo, "read-tree", "--empty", env=env)
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = git(repo, "write-tree", env=env).strip()
    args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
    commit = git(repo, *args).strip()
    git(repo, "update-ref", REF, commit, *([parent] if parent else []))
    os.unlink(tmp_index)
    return blob


def read_global_file(home: Path) -> dict:
    """The parsed `~/.neo/facts/facts_global.json`."""
    return json.loads((Path(os.environ["NEO_HOME"]) / "facts" / "facts_global.json").read_bytes())


def neo_home() -> Path:
    return Path(os.environ["NEO_HOME"])


def snapshot_tree(root: Path) -> dict[str, bytes]:
    """Every file under *root* with its bytes (for "nothing changed" checks)."""
    root = Path(root)
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run_cli(args: list, cwd: Path, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """The real `git-neo` entry point in a subprocess; *args* may contain bytes."""
    code = "from neo_git.cli import run; run()"
    return subprocess.run([PYTHON, "-c", code, *args], cwd=cwd, capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def random_write(store, op: str, seed: int, scope: str = "project") -> str | None:
    """One random write of a convergence test to *scope* ("add", "supersede", "confidence" or
    "restore", seeded); returns the id of a fact it added, if any."""
    from neo_git.errors import NeoError
    from neo_git.store import Change

    rng = random.Random(seed)
    facts = sorted(store.list(scope=scope, include_invalid=True), key=lambda f: f.id)
    valid = [f for f in facts if f.is_valid]
    if op == "add" or not facts:
        return store.add(*distinct_text(rng), kind="decision", scope=scope).id
    if op == "supersede" and valid:
        return store.add(*distinct_text(rng), kind="decision", scope=scope, supersedes=rng.choice(valid).id).id
    if op == "confidence":
        target = rng.choice(facts)
        value = round(rng.random(), 2)
        store.transact(scope, lambda current: Change(
            facts=(current[target.id].evolve(metadata={"confidence": value}),), message="confidence"))
    elif op == "restore":
        retired = [f for f in facts if not f.is_valid]
        if retired:
            try:
                store.restore(rng.choice(retired).id)
            except NeoError:
                pass  # its successor is gone, or it was restored meanwhile
    return None


def assert_no_supersession_cycle(facts: dict) -> None:
    """Following superseded_by from any fact (id -> Fact) never comes back to it."""
    for start in facts:
        seen, node = set(), start
        while node is not None and node in facts:
            assert node not in seen, f"cycle through {node}"
            seen.add(node)
            node = facts[node].superseded_by


POSSIBLE_OLD = ("Cache layer", "Redis caches the session tokens for an hour.")
# In the review band (hash cosine 0.415) with evidence: the newer statement says it changed ("now").
POSSIBLE_NEW = ("Login sessions", "Session tokens now live in Memcached for an hour.")


def populated_store(repo):
    """A store on *repo* with 43 project facts (one superseded, one dependent): enough subtrees
    for the parse cache to be written."""
    store = open_store(repo)
    rng = random.Random(1)
    base = store.add("HTTP client", "We use httpx with a 10 s timeout.", kind="decision", tags=["seed"])
    store.add("Retry", "tenacity around httpx, three attempts.", depends_on=[base.id], source_file="a.py")
    store.add("HTTP client", "All outbound HTTP goes through httpx, timeout 30 s.", kind="decision")
    for _ in range(40):  # enough subtrees for the cache to be written
        store.add(*distinct_text(rng), confidence=rng.random())
    return store


def cold_facts(store) -> dict[str, Fact]:
    """The project facts as a reader without this process's memory reads them (the caches on disk)."""
    backend = store.project_store
    return RefStore(backend.repo, backend.common_dir, backend.signature).load().facts


def close_records(store):
    """Three long records of one project, and a newer one that states a change about the most
    similar of them (`change`) and says nothing about the other two."""
    shared = " ".join(["service deploy pipeline build artifact staging"] * 8)
    best = store.add("Nightly build schedule", shared + " " + shared + " Nightly builds run at midnight.",
                     kind="decision")
    second = store.add("Artifact retention", shared + " Artifacts are kept for thirty days.", kind="decision")
    third = store.add("Staging promotion", shared + " Staging is promoted by hand.", kind="decision")
    return best, second, third, shared + " " + shared + " We no longer run builds at night on a schedule."
