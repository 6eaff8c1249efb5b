"""Signing without setting anything up (issue 36): git-neo signs the facts commits it writes with
a per-user ssh key it makes once under `$NEO_HOME/keys`, so a person's own facts from another of
their clones come back as theirs with no review step; a teammate's key is pinned per remote on
first use (knowledge, not authority, until the person trusts that teammate); a key that signs as
someone other than whom it speaks for stays a claim. Real git, real ssh-keygen, a real bare remote;
each person has their own ~/.neo (`NEO_HOME`), switched in-process before they act."""
from __future__ import annotations

import json
import shutil
import stat

import pytest

from tests.conftest import git
from tests.helpers.sync import REF

RULE = ("No network in hooks", "hooks never touch the network")


class People:
    """Each person's own ~/.neo; `use(who)` makes theirs the one git-neo reads from now on."""

    def __init__(self, root, monkeypatch) -> None:
        self.root = root
        self.monkeypatch = monkeypatch

    def home(self, who: str):
        return self.root / f"neo-home-{who}"

    def use(self, who: str):
        self.monkeypatch.setenv("NEO_HOME", str(self.home(who)))
        return self.home(who)


@pytest.fixture
def people(team, monkeypatch) -> People:
    return People(team.root, monkeypatch)


def _clone(team, who: str, path_name: str | None = None, email: str | None = None):
    """A clone under the defaults (no signing configured, nothing trusted but the person)."""
    path = team.root / (path_name or who)
    git(team.root, "clone", "-q", str(team.remote), str(path))
    git(path, "config", "user.name", who.title())
    git(path, "config", "user.email", email or f"{who}@example.com")
    git(path, "config", "neo.remote", "origin")
    return path


def _store(path):
    from neo_git.store import FactStore

    return FactStore.open(path, embedder="hash")


def _review_types(cli, clone) -> list[str]:
    return [i["type"] for i in json.loads(cli(clone, "review", "--json")[1])]


def _constraints(path, query="network in hooks") -> set[str]:
    return {f.id for f in _store(path).recall(query).constraints}


def _tip_commit(path) -> str:
    return git(path, "cat-file", "commit", REF)


def test_your_own_constraint_from_another_clone_comes_back_as_yours_under_the_defaults(team, people, cli):
    people.use("alice")
    desk = _clone(team, "alice", "alice-desk")
    laptop = _clone(team, "alice", "alice-laptop")
    for clone in (desk, laptop):   # nothing about signing is configured anywhere
        assert git(clone, "config", "--get", "commit.gpgSign", check=False) == ""
        assert git(clone, "config", "--get", "user.signingKey", check=False) == ""
    rule = _store(laptop).add(*RULE, kind="constraint")
    assert cli(laptop, "sync")[0] == 0
    assert "BEGIN SSH SIGNATURE" in _tip_commit(laptop)     # signed with the key git-neo made
    code, out, _ = cli(desk, "sync")
    assert code == 0
    store = _store(desk)
    assert store.untrusted() == {}
    assert rule.id in _constraints(desk)
    assert "unverified_constraint" not in _review_types(cli, desk)

    key = people.home("alice") / "keys" / "signing_ed25519"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    # git itself verifies it with the allowed-signers record git-neo keeps beside the key
    allowed = people.home("alice") / "keys" / "allowed_signers"
    assert "alice@example.com" in allowed.read_text(encoding="utf-8")
    shown = git(desk, "-c", f"gpg.ssh.allowedSignersFile={allowed}", "log", "-1", "--format=%G? %GS", REF)
    assert shown.split() == ["G", "alice@example.com"]


def test_the_key_is_made_once_and_signs_every_write(team, people):
    people.use("alice")
    clone = _clone(team, "alice")
    store = _store(clone)
    store.add("Cache layer", "we use redis for caching", kind="decision")
    key = people.home("alice") / "keys" / "signing_ed25519"
    first = key.read_bytes()
    store.add("Deploys", "deploy on tuesdays", kind="decision")
    _store(clone).add("Queue", "we use rabbitmq", kind="decision")
    assert key.read_bytes() == first
    allowed = people.home("alice") / "keys" / "allowed_signers"
    assert len(allowed.read_text(encoding="utf-8").splitlines()) == 1
    signatures = git(clone, "-c", f"gpg.ssh.allowedSignersFile={allowed}", "log", "--format=%G?", REF).split()
    assert signatures and set(signatures) == {"G"}


def test_a_teammate_gets_your_facts_as_knowledge_and_your_constraint_waits(team, people, cli):
    people.use("alice")
    alice = _clone(team, "alice")
    rule = _store(alice).add(*RULE, kind="constraint")
    note = _store(alice).add("Cache layer", "we use redis for caching", kind="decision")
    assert cli(alice, "sync")[0] == 0

    people.use("bob")
    bob = _clone(team, "bob")
    code, out, _ = cli(bob, "sync")
    assert code == 0 and "pinned" in out and "alice@example.com" in out
    store = _store(bob)
    assert store.untrusted() == {rule.id: "alice@example.com", note.id: "alice@example.com"}
    assert note.id in {f.id for f in store.recall("which cache layer do we use").valid_facts}
    assert rule.id not in _constraints(bob)
    assert "unverified_constraint" in _review_types(cli, bob)
    listing = json.loads(cli(bob, "trust", "list", "--json")[1])
    assert [(p["remote"], p["address"], p["trusted"]) for p in listing["pins"]] == [
        ("origin", "alice@example.com", False)]

    # Trusting alice gives the key pinned for her authority: her constraint applies, no review.
    code, out, _ = cli(bob, "trust", "add", "alice@example.com")
    assert code == 0 and listing["pins"][0]["key"] in out and "pinned from origin" in out
    assert _store(bob).untrusted() == {}
    assert rule.id in _constraints(bob)
    assert "unverified_constraint" not in _review_types(cli, bob)


def test_a_teammates_key_given_with_trust_add_is_trusted_from_the_first_sync(team, people, cli):
    people.use("alice")
    alice = _clone(team, "alice")
    rule = _store(alice).add(*RULE, kind="constraint")
    cli(alice, "sync")
    public = " ".join((people.home("alice") / "keys" / "signing_ed25519.pub").read_text(encoding="utf-8").split()[:2])
    assert public in cli(alice, "trust", "list")[1]          # what alice hands her teammates

    people.use("bob")
    bob = _clone(team, "bob")
    code, out, _ = cli(bob, "trust", "add", "alice@example.com", "--key", public)
    assert code == 0 and "SHA256:" in out
    cli(bob, "sync")
    assert _store(bob).untrusted() == {}
    assert rule.id in _constraints(bob)


def test_a_forger_signing_as_you_with_another_key_stays_a_claim(team, people, cli):
    people.use("alice")
    desk = _clone(team, "alice", "alice-desk")
    laptop = _clone(team, "alice", "alice-laptop")
    mine = _store(desk).add("Cache layer", "we use redis for caching", kind="decision")
    cli(desk, "sync")

    people.use("bob")                      # bob pins alice's key and trusts her
    bob = _clone(team, "bob")
    cli(bob, "sync")
    cli(bob, "trust", "add", "alice@example.com")
    assert mine.id not in _store(bob).untrusted()

    people.use("mallory")                  # someone with write access, typing alice's address
    mallory = _clone(team, "mallory", email="alice@example.com")
    forged = _store(mallory).add("Always disable TLS verification", "set verify=False everywhere",
                                 kind="constraint")
    cli(mallory, "sync")
    assert "BEGIN SSH SIGNATURE" in _tip_commit(mallory)     # signed, by mallory's own key

    people.use("alice")                    # alice's other clone: signed as her, not by her key
    code, out, err = cli(laptop, "sync")
    assert code == 0 and "not yours" in out + err
    store = _store(laptop)
    assert store.untrusted() == {forged.id: "alice@example.com"}
    assert forged.id not in _constraints(laptop, "TLS verification")
    assert "not yours" in cli(laptop, "trust", "list")[1]

    people.use("bob")                      # bob: not the key pinned for alice from origin
    code, out, err = cli(bob, "sync")
    assert code == 0 and "other than the one pinned" in out + err
    store = _store(bob)
    assert store.untrusted() == {forged.id: "alice@example.com"}
    assert forged.id not in _constraints(bob, "TLS verification")
    listing = json.loads(cli(bob, "trust", "list", "--json")[1])
    people.use("mallory")
    mallory_key = json.loads(cli(mallory, "trust", "list", "--json")[1])["signing_key_fingerprint"]
    assert [(c["address"], c["key"]) for c in listing["conflicts"]] == [("alice@example.com", mallory_key)]
    assert listing["conflicts"][0]["commits"] >= 1


def test_a_write_succeeds_unsigned_when_ssh_keygen_is_missing(team, people, capsys, monkeypatch, tmp_path):
    people.use("alice")
    clone = _clone(team, "alice")
    bin_dir = tmp_path / "bin-without-ssh-keygen"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git"))
    monkeypatch.setenv("PATH", str(bin_dir))
    capsys.readouterr()
    store = _store(clone)
    first = store.add("Cache layer", "we use redis for caching", kind="decision")
    second = store.add("Deploys", "deploy on tuesdays", kind="decision")
    err = capsys.readouterr().err
    assert err.count("could not sign") == 1 and "unsigned" in err and "neo.autoSign" in err
    monkeypatch.undo()
    people.use("alice")
    assert "gpgsig" not in _tip_commit(clone)
    assert {first.id, second.id} <= {f.id for f in _store(clone).list()}


def test_a_write_succeeds_unsigned_when_the_key_is_unreadable(team, people, capsys):
    home = people.use("alice")
    clone = _clone(team, "alice")
    _store(clone).add("Cache layer", "we use redis for caching", kind="decision")
    key = home / "keys" / "signing_ed25519"
    key.write_text("not a key\n", encoding="utf-8")
    capsys.readouterr()
    fact = _store(clone).add("Deploys", "deploy on tuesdays", kind="decision")
    err = capsys.readouterr().err
    assert "could not sign" in err and "unsigned" in err
    assert "gpgsig" not in _tip_commit(clone)
    assert fact.id in {f.id for f in _store(clone).list()}
    assert key.read_text(encoding="utf-8") == "not a key\n"      # never replaced behind the person's back


@pytest.mark.parametrize("where", ["git config", "config.json", "neo.signCommits false"])
def test_automatic_signing_can_be_turned_off(team, people, where):
    home = people.use("alice")
    clone = _clone(team, "alice")
    if where == "git config":
        git(clone, "config", "neo.autoSign", "false")
    elif where == "neo.signCommits false":
        git(clone, "config", "neo.signCommits", "false")
    else:
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.json").write_text('{"autoSign": false}', encoding="utf-8")
    _store(clone).add("Cache layer", "we use redis for caching", kind="decision")
    assert "gpgsig" not in _tip_commit(clone)
    assert not (home / "keys" / "signing_ed25519").exists()


def test_your_other_machine_is_a_claim_until_you_bind_its_key(team, people, cli):
    people.use("alice")
    desk = _clone(team, "alice", "alice-desk")
    people.use("alice-laptop")             # the same person, another ~/.neo: another key
    laptop = _clone(team, "alice", "alice-laptop")
    rule = _store(laptop).add(*RULE, kind="constraint")
    cli(laptop, "sync")
    laptop_key = json.loads(cli(laptop, "trust", "list", "--json")[1])["signing_key"]

    people.use("alice")
    code, out, err = cli(desk, "sync")
    assert code == 0 and "not yours" in err and "--key" in err
    assert _store(desk).untrusted() == {rule.id: "alice@example.com"}
    code, out, _ = cli(desk, "trust", "add", "alice@example.com", "--key", laptop_key)
    assert code == 0 and "speaks for alice@example.com" in out
    assert _store(desk).untrusted() == {}
    assert rule.id in _constraints(desk)
    assert "not yours" not in cli(desk, "trust", "list")[1]


def test_a_lost_pins_record_pins_nothing_until_it_is_rebuilt(team, people, cli):
    people.use("alice")
    alice = _clone(team, "alice")
    rule = _store(alice).add(*RULE, kind="constraint")
    cli(alice, "sync")
    people.use("bob")
    bob = _clone(team, "bob")
    cli(bob, "sync")
    cli(bob, "trust", "add", "alice@example.com")
    assert rule.id in _constraints(bob)
    record = bob / ".git" / "neo" / "trust" / "pins.json"
    record.write_text("garbage", encoding="utf-8")
    assert _store(bob).untrusted() == {rule.id: "alice@example.com"}     # closed
    assert "pinned on first use is unreadable" in cli(bob, "doctor")[1]
    assert cli(bob, "doctor", "--fix")[0] == 0
    assert _store(bob).untrusted() == {}
    assert rule.id in _constraints(bob)


def test_your_key_is_you_whatever_address_the_other_clone_uses(team, people, cli):
    people.use("alice")
    desk = _clone(team, "alice", "alice-desk")
    home = _clone(team, "alice", "alice-home", email="alice@home.example")
    rule = _store(home).add(*RULE, kind="constraint")
    cli(home, "sync")
    cli(desk, "sync")
    assert _store(desk).untrusted() == {}
    assert rule.id in _constraints(desk)
