"""Hostile refs built with git plumbing only (hash-object, mktree, commit-tree, update-ref),
as a teammate's push would bring them, plus a way to run `git neo` in-process."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

from tests.helpers.git import git

REF = "refs/neo/facts"


class Outcome(NamedTuple):
    code: int
    out: str
    err: str


def neo(capsys, *args: str) -> Outcome:
    """`git neo ARGS` in-process (from the current directory); its exit code and output."""
    from neo_git.cli import main

    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def fact_dict(fact_id: str, subject: str = "hostile subject", **fields) -> dict:
    """A well-formed project fact as stored on the ref."""
    base = {
        "id": fact_id, "subject": subject, "body": "", "kind": "pattern", "scope": "project",
        "org_id": "unknown", "project_id": None, "is_valid": True, "superseded_by": None,
        "supersedes": None, "depends_on": [], "needs_review": False, "tags": [],
        "metadata": {"created_at": "2026-01-01T00:00:00+00:00", "confidence": 0.5, "author": "mallory"},
    }
    base.update(fields)
    return base


def blob_bytes(value) -> bytes:
    """Canonical-looking JSON bytes of *value* (bytes pass through)."""
    if isinstance(value, bytes):
        return value
    return (json.dumps(value, sort_keys=True, indent=2) + "\n").encode("utf-8")


def hash_object(repo: Path, data: bytes) -> str:
    """`git hash-object -w --stdin`."""
    return subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=data,
                          capture_output=True, check=True, timeout=30).stdout.decode().strip()


def mktree(repo: Path, entries: list[tuple[str, str, str, str]], missing_ok: bool = False) -> str:
    """`git mktree` from (mode, type, oid, name) rows."""
    text = "".join(f"{mode} {kind} {oid}\t{name}\n" for mode, kind, oid, name in entries)
    args = ["git", "mktree"] + (["--missing"] if missing_ok else [])
    return subprocess.run(args, cwd=repo, input=text.encode(), capture_output=True, check=True,
                          timeout=30).stdout.decode().strip()


def facts_tree(repo: Path, files: dict[str, bytes | str]) -> str:
    """A whole facts ref tree: {"facts/ab/ab….json": bytes or an existing blob id, "meta.json": …}."""
    folders: dict[str, dict] = {}
    for path, content in files.items():
        node = folders
        *parts, name = path.split("/")
        for part in parts:
            node = node.setdefault(part, {})
        node[name] = content if isinstance(content, str) else hash_object(repo, content)

    def write(node: dict) -> str:
        rows = []
        for name, value in node.items():
            if isinstance(value, dict):
                rows.append(("040000", "tree", write(value), name))
            else:
                rows.append(("100644", "blob", value, name))
        return mktree(repo, rows)

    return write(folders)


def push_tree(repo: Path, tree: str, message: str = "teammate: hostile push") -> str:
    """Commit *tree* on top of the facts ref (commit-tree + update-ref), as a push would."""
    parent = git(repo, "rev-parse", "--verify", "-q", REF, check=False).strip()
    commit = git(repo, "commit-tree", tree, "-m", message, *(["-p", parent] if parent else [])).strip()
    git(repo, "update-ref", REF, commit)
    return commit


def current_files(repo: Path) -> dict[str, bytes]:
    """Every blob on the facts ref by path (to add hostile files next to the real ones)."""
    out: dict[str, bytes] = {}
    if not git(repo, "rev-parse", "--verify", "-q", REF, check=False).strip():
        return out
    for line in git(repo, "ls-tree", "-r", REF).splitlines():
        meta, path = line.split("\t", 1)
        out[path] = meta.split()[2]
    return out


def push_files(repo: Path, files: dict[str, bytes | dict | list | str]) -> str:
    """Add (or replace) files on the facts ref, keeping the others; values are bytes, JSON
    values, or existing blob ids."""
    merged = current_files(repo)
    for path, value in files.items():
        merged[path] = value if isinstance(value, (bytes, str)) else blob_bytes(value)
    return push_tree(repo, facts_tree(repo, merged))


def ref_blob(repo: Path, fact_id: str) -> dict:
    """The fact as stored on the ref, parsed."""
    return json.loads(git(repo, "show", f"{REF}:facts/{fact_id[:2]}/{fact_id}.json"))


def ref_state(repo: Path) -> str:
    """The ref's tip (a changed tip means something was written)."""
    return git(repo, "rev-parse", REF).strip()


def _set_writable(path: Path, writable: bool, root: bool) -> None:
    if root:
        subprocess.run(["chattr", "-R", "-i" if writable else "+i", str(path)], check=writable is False,
                       capture_output=True)
        return
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        mode = p.stat().st_mode
        p.chmod(mode | 0o200 if writable else mode & ~0o222)


@contextlib.contextmanager
def read_only(*paths: Path):
    """Make *paths* (recursively) unwritable for this process, even as root: `chattr +i`
    (the immutable flag binds root too) when running as root, `chmod a-w` otherwise."""
    paths = [Path(p) for p in paths]
    root = os.geteuid() == 0
    if root and not shutil.which("chattr"):
        import pytest

        pytest.skip("running as root without chattr: cannot make a folder read-only")
    try:
        for path in paths:
            _set_writable(path, False, root)
        yield
    finally:
        for path in paths:
            _set_writable(path, True, root)


def edit_parse_cache(path: Path, edit) -> None:
    """Change the parse cache's data in place, as a hand edit would (its seal line is kept as it was)."""
    from neo_git.store.parse_cache import decode, encode

    seal, _, body = path.read_bytes().partition(b"\n")
    data = decode(body)
    edit(data)
    path.write_bytes(seal + b"\n" + encode(data))
