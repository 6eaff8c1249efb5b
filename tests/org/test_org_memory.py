"""Org memory through a git remote: connect moves the org file into a bare repository under
NEO_HOME, sync shares it between machines, disconnect gives every fact back to the file."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from neo_git.facts import FactScope
from neo_git.store.filestore import FileStore
from tests.helpers.git import git
from tests.helpers.org import org_ids, org_tree


def test_connect_moves_the_org_file_into_the_org_memory_and_pushes_it(org):
    before = org.store("alice").add("Secrets live in Vault", "Never commit credentials; read them from Vault.",
                                    kind="constraint", scope="org")
    org_file = org.home("alice") / "facts" / "facts_org_acme.json"
    assert org_file.exists()
    report = org.connect("alice")
    assert report["imported"] == 1 and not org_file.exists()
    assert FileStore(report["file_moved_to"]).load().facts.keys() == {before.id}   # the backup
    store = org.store("alice")
    assert org_ids(store) == {before.id}
    assert store.get(before.id).body == before.body
    assert [f.id for f in store.recall("where do credentials go").constraints] == [before.id]
    shown = git(org.root, f"--git-dir={org.remote}", "show", f"refs/neo/facts:facts/{before.id[:2]}/{before.id}.json")
    assert json.loads(shown)["scope"] == "org"
    assert org_tree(org.remote) == org_tree(org.memory("alice"))


def test_an_org_fact_written_on_one_machine_is_seen_in_another_repository_after_its_sync(org):
    org.connect("alice")
    org.connect("bob")
    mine = org.store("alice").add("Postgres 16 everywhere", "All services use Postgres 16.",
                                  kind="decision", scope="org")
    assert mine.id not in org_ids(org.store("bob"))
    org.sync("alice")
    assert mine.id not in org_ids(org.store("bob"))     # not before bob's own sync
    report = org.sync("bob")
    assert report.facts in ("fast-forward", "created") and report.plan.added == [mine.id]
    # Any repository of the org on bob's machine sees it: the org memory is per NEO_HOME.
    other_repo = org.store("bob", "bob-frontend")
    assert other_repo.get(mine.id).subject == "Postgres 16 everywhere"
    result = other_repo.recall("which database version do services use", k=3)
    assert mine.id in [f.id for f in result.valid_facts]
    # Alice is not trusted on bob's machine: her org fact is a claim there, as a project fact would be.
    assert mine.id in result.untrusted
    theirs = other_repo.add("Deploys on Tuesdays", "Production deploys happen on Tuesdays.", kind="decision",
                            scope="org")
    org.sync("bob")
    org.sync("alice")
    assert org_ids(org.store("alice")) == org_ids(org.store("bob")) == {mine.id, theirs.id}
    assert org_tree(org.memory("alice")) == org_tree(org.memory("bob")) == org_tree(org.remote)


def test_disconnect_gives_every_fact_back_to_the_file_and_keeps_the_history(org):
    org.connect("alice")
    store = org.store("alice")
    old = store.add("Lint with ruff", "ruff check in CI.", kind="decision", scope="org")
    new = store.add("Lint with ruff", "ruff check and ruff format in CI.", kind="decision", scope="org")
    assert new.supersedes == old.id
    from neo_git.org import disconnect

    report = disconnect(org.store("alice"))
    assert report["facts"] == 2 and report["unpushed"] is True
    assert not org.memory("alice").exists()
    kept = org.home("alice") / "org" / os.path.basename(report["history_kept_at"])
    assert "supersede" in git(org.root, f"--git-dir={kept}", "log", "--format=%s", "refs/neo/facts")
    after = org.store("alice")
    assert type(after.backends[FactScope.ORG]).__name__ == "FileStore"
    facts = {f.id: f for f in after.list(scope="org", include_invalid=True)}
    assert set(facts) == {old.id, new.id}
    assert facts[old.id].superseded_by == new.id and not facts[old.id].is_valid
    # Reconnecting brings the file's facts back into a fresh org memory.
    org.connect("alice")
    assert org_ids(org.store("alice")) == {old.id, new.id}


def test_without_a_connection_recall_reads_the_file_and_loads_no_org_code(org):
    repo = org.machine("alice")
    org.store("alice").add("Use UTC", "Timestamps are UTC everywhere.", kind="decision", scope="org")
    code = ("import sys, json; from neo_git.store import FactStore; from neo_git.facts import FactScope; s = FactStore.open('.', embedder='hash'); "
            "r = s.recall('are timestamps UTC everywhere'); "
            "print(json.dumps([type(s.backends[FactScope.ORG]).__name__, "
            "[m for m in sys.modules if m.startswith('neo_git.org')], [f.subject for f in r.valid_facts]]))")
    env = {**os.environ, "NEO_HOME": str(org.home("alice"))}
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    backend, modules, subjects = json.loads(out)
    assert backend == "FileStore" and modules == [] and subjects == ["Use UTC"]


def test_the_commands(org, cli):
    repo, home = org.machine("alice"), org.home("alice")
    code, out, err = cli(repo, home, "org", "status")
    assert code == 0 and "not connected" in out
    code, out, err = cli(repo, home, "org", "sync")
    assert code == 1 and "fatal:" in err and "git neo org connect" in err
    code, out, err = cli(repo, home, "org", "connect", str(org.remote))
    assert code == 0, err
    code, out, err = cli(repo, home, "org", "connect", str(org.root / "elsewhere.git"))
    assert code == 1 and "already connected" in err and "disconnect" in err
    code, out, err = cli(repo, home, "add", "--scope", "org", "--kind", "decision", "Python 3.12", "Services run 3.12.")
    assert code == 0, err
    code, out, err = cli(repo, home, "sync", "--org", "--json")
    assert code == 0, err
    assert json.loads(out)["pushed"] == ["refs/neo/facts"] and json.loads(out)["notes"] == "not shared here"
    code, out, err = cli(repo, home, "sync", "origin", "--org")
    assert code == 1 and "fatal:" in err
    code, out, err = cli(repo, home, "org", "status", "--json")
    assert json.loads(out)["connected"] is True and json.loads(out)["facts"] == 1
    code, out, err = cli(repo, home, "org", "disconnect")
    assert code == 0 and "1 facts" in out and "untouched" in out
    lonely = org.root / "lonely"
    git(org.root, "init", "-q", str(lonely))
    code, out, err = cli(lonely, home, "org", "connect", str(org.remote))
    assert code == 1 and "--org NAME" in err


def test_a_teammates_unverified_change_to_an_org_fact_is_held_listed_and_decided_by_review(org, cli):
    """The org sync holds an unverified retraction of a fact alice trusts, as the project sync
    does; `git neo review` lists it (scope org) and `review accept|reject` decides it."""
    org.connect("alice"), org.connect("bob")
    alice = org.store("alice")
    kept = alice.add("Services log JSON", "every service logs one JSON object per line", kind="decision",
                     scope="org")
    taken = alice.add("Tracing header", "propagate the traceparent header", kind="decision", scope="org")
    org.sync("alice"), org.sync("bob")
    bob = org.store("bob")
    bob.invalidate(kept.id, "we log text now")
    bob.invalidate(taken.id, "tracing is off")
    org.sync("bob")

    report = org.sync("alice")

    assert any("held 2 change(s)" in w for w in report.warnings)
    assert org.store("alice").get(kept.id).is_valid
    code, out, _ = cli(org.machine("alice"), org.home("alice"), "review", "--json")
    incoming = {i["id"]: i for i in json.loads(out) if i["type"] == "incoming"}
    assert code == 0 and set(incoming) == {kept.id, taken.id}
    assert incoming[kept.id]["scope"] == "org" and "retracts this fact" in incoming[kept.id]["why"]
    listed = cli(org.machine("alice"), org.home("alice"), "review")[1]
    assert f"{kept.id} Services log JSON  [org]" in listed and f"git neo review accept | reject {kept.id[:8]}" in listed
    assert cli(org.machine("alice"), org.home("alice"), "review", "reject", kept.id)[0] == 0
    assert cli(org.machine("alice"), org.home("alice"), "review", "accept", taken.id)[0] == 0
    alice = org.store("alice")
    assert alice.get(kept.id).is_valid and not alice.get(taken.id).is_valid
    assert not [i for i in alice.review() if i["type"] == "incoming"]
