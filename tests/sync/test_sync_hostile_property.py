"""Property: whatever tree an untrusted teammate pushes, a sync never crashes, never changes one of
our trusted facts, and leaves on our ref only validated fact blobs and meta.json.

Each example builds a bare remote and a victim clone in a fresh folder, then pushes a random
hostile commit on top of the victim's facts: random root entries (files, links, executables,
folders, submodules), random `facts/` folders and names, valid facts, edits and retractions
of the victim's facts, and garbage, in every git file mode."""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pygit2
from hypothesis import HealthCheck, given, settings, strategies as st

from neo_git.errors import NeoError
from tests.helpers.sync import PEOPLE, REF

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
MODES = [0o100644, 0o100755, 0o120000, 0o040000, 0o160000]
HEX = "0123456789abcdef"


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _fact(fact_id: str, subject: str, **extra) -> bytes:
    data = {"id": fact_id, "subject": subject, "body": "", "kind": "pattern", "scope": "project",
            "metadata": {"created_at": "2026-01-01T00:00:00+00:00"}, **extra}
    return (json.dumps(data, sort_keys=True, indent=2) + "\n").encode()


fact_ids = st.text(HEX, min_size=16, max_size=16)
names = st.one_of(st.sampled_from(["junk.bin", "meta.json", "facts", ".gitmodules", "a b", "..x", "run.sh"]),
                  st.text("abcdefxyz0123456789._-", min_size=1, max_size=12))
blob_payloads = st.one_of(st.binary(max_size=64), st.just(b"{not json"),
                          fact_ids.map(lambda i: _fact(i, "planted fact")),
                          st.just(b'{"schema_version": 1}\n'))


@st.composite
def hostile_entries(draw):
    """(path, mode, payload) rows of the hostile tree, plus edits of the victim's facts."""
    rows = []
    for _ in range(draw(st.integers(0, 4))):
        rows.append((draw(names), draw(st.sampled_from(MODES)), draw(blob_payloads)))
    for _ in range(draw(st.integers(0, 6))):
        fact_id = draw(fact_ids)
        prefix = draw(st.one_of(st.just(fact_id[:2]), st.text(HEX, min_size=2, max_size=2), names))
        name = draw(st.one_of(st.just(f"{fact_id}.json"), names))
        rows.append((f"facts/{prefix}/{name}", draw(st.sampled_from(MODES)), draw(st.one_of(
            st.just(_fact(fact_id, "planted fact")), blob_payloads))))
    edits = draw(st.lists(st.sampled_from(["retract", "rewrite", "remove", "mode", "link"]), max_size=3))
    return rows, edits


def _write_tree(repo: pygit2.Repository, base: pygit2.Tree | None, rows, edits, victims: list[str]) -> pygit2.Oid:
    files: dict[str, tuple[int, pygit2.Oid]] = {}
    if base is not None:
        def walk(tree, prefix=""):
            for entry in tree:
                path = prefix + entry.name
                if entry.filemode == 0o040000:
                    walk(repo[entry.id], path + "/")
                else:
                    files[path] = (entry.filemode, entry.id)
        walk(base)
    for n, edit in enumerate(edits):
        fact_id = victims[n % len(victims)]
        path = f"facts/{fact_id[:2]}/{fact_id}.json"
        data = json.loads(repo[files[path][1]].data) if path in files else None
        if data is None:
            continue
        if edit == "retract":
            data["is_valid"] = False
        elif edit == "rewrite":
            data["body"] = "hooks may call the network"
        if edit == "remove":
            files.pop(path)
            continue
        mode = {"mode": 0o100755, "link": 0o120000}.get(edit, 0o100644)
        files[path] = (mode, repo.create_blob((json.dumps(data, sort_keys=True, indent=2) + "\n").encode()))
    fake_commit = pygit2.Oid(hex="0" * 39 + "1")
    for path, mode, payload in rows:
        if any(path == p or path.startswith(p + "/") or p.startswith(path + "/") for p in files):
            continue   # one entry per path (a file and a folder cannot share a name)
        oid = fake_commit if mode == 0o160000 else repo.create_blob(payload)
        files[path] = (0o100644 if mode == 0o040000 else mode, oid)

    def build(prefix: str) -> pygit2.Oid:
        builder = repo.TreeBuilder()
        children = {}
        for path, (mode, oid) in files.items():
            if not path.startswith(prefix):
                continue
            rest = path[len(prefix):]
            head, _, tail = rest.partition("/")
            if tail:
                children[head] = True
            else:
                builder.insert(head, oid, mode)
        for child in children:
            builder.insert(child, build(prefix + child + "/"), 0o040000)
        return builder.write()

    return build("")


@SETTINGS
@given(hostile_entries())
def test_a_hostile_tree_never_crashes_sync_nor_touches_trusted_facts(monkeypatch, case):
    rows, edits = case
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("NEO_EMBEDDER", "hash")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        remote, victim = root / "remote.git", root / "victim"
        _git(root, "init", "-q", "--bare", str(remote))
        _git(root, "init", "-q", str(victim))
        name, _, email = PEOPLE["alice"].partition(" <")
        _git(victim, "config", "user.name", name), _git(victim, "config", "user.email", email.rstrip(">"))
        _git(victim, "commit", "-q", "--allow-empty", "-m", "first")
        _git(victim, "remote", "add", "origin", str(remote))
        from neo_git.store import FactStore
        from neo_git.sync import Syncer

        store = FactStore.open(victim, embedder="hash")
        mine = [store.add("No network in hooks", "hooks never touch the network", kind="constraint"),
                store.add("Logging", "log as json lines", kind="decision")]
        Syncer(store, "origin").sync()
        before = {f.id: f.to_dict() for f in FactStore.open(victim, embedder="hash").list(include_invalid=True)}
        repo = pygit2.Repository(str(remote))
        tip = repo.references[REF].target
        tree = _write_tree(repo, repo[tip].tree, rows, edits, [f.id for f in mine])
        mallory = pygit2.Signature("Mallory", "alice@example.com")     # claims to be the victim
        new = repo.create_commit(None, mallory, mallory, "hostile", tree, [tip])
        repo.references[REF].set_target(new)
        try:
            Syncer(FactStore.open(victim, embedder="hash"), "origin").sync()
        except NeoError:
            pass   # a clear refusal is allowed; a crash is not
        after = FactStore.open(victim, embedder="hash")
        assert {i: f.to_dict() for i, f in ((f.id, f) for f in after.list(include_invalid=True))
                if i in before} == before
        local = pygit2.Repository(str(victim))
        top = local[local.references[REF].target].tree
        assert {e.name for e in top} <= {"facts", "meta.json"}
        assert top["meta.json"].filemode == 0o100644
        for folder in top["facts"].peel(pygit2.Tree) if "facts" in top else ():
            assert folder.filemode == 0o040000 and len(folder.name) == 2
            for entry in local[folder.id]:
                assert entry.filemode == 0o100644, (folder.name, entry.name)
                assert entry.name.endswith(".json") and entry.name.startswith(folder.name)
        assert not after.warnings
