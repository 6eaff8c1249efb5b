"""Sharing is opt-in per remote: `sync`/`push` go only to the remote chosen with `--remote`
(recorded in `neo.remote`); pulling needs no choice; a remote you cannot push to says so."""
from __future__ import annotations

import json
import stat

from tests.helpers.git import git
from tests.helpers.sync import REF

NOTES = "refs/notes/neo"


def _fresh_clone(team, who: str):
    """A clone as `git clone` leaves it: no neo.remote (the Team helper chooses origin)."""
    path = team.clone(who)
    git(path, "config", "--unset", "neo.remote")
    return path


def _remote_refs(team) -> str:
    return git(team.remote, "for-each-ref", "--format=%(refname)", "refs/neo", "refs/notes")


def test_first_sync_to_an_unchosen_origin_refuses_and_says_what_would_go_where(team, cli):
    alice = _fresh_clone(team, "alice")
    team.store("alice").add("Retry policy", "Retry 429s with backoff.", kind="decision")
    head = git(alice, "rev-parse", "HEAD").strip()
    git(alice, "notes", "--ref=neo", "add", "-m", '{"v":1,"id":"a","ts":1}', head)
    for argv in (("sync",), ("sync", "origin"), ("push",), ("push", "origin")):
        code, out, err = cli(alice, *argv)
        assert code == 1, argv
        first, hint = err.splitlines()[:2]
        assert first.startswith("fatal: no remote is chosen for sharing facts yet: this would push "
                                f"{REF} (1 fact) and {NOTES} (1 note) to origin ({team.remote})"), first
        assert "`git neo sync --remote origin`" in hint and "`git neo pull origin`" in hint
    assert _remote_refs(team) == ""                                # nothing reached the remote
    assert git(alice, "config", "--get", "neo.remote", check=False) == ""


def test_sync_with_remote_records_the_choice_and_later_syncs_need_no_name(team, cli):
    alice = _fresh_clone(team, "alice")
    team.store("alice").add("Retry policy", "Retry 429s with backoff.", kind="decision")
    code, out, _ = cli(alice, "sync", "--remote", "origin")
    assert code == 0 and "facts are shared with origin from now on (neo.remote)" in out
    assert f"pushed to origin: {REF}" in out
    assert git(alice, "config", "--get", "neo.remote").strip() == "origin"
    assert git(team.remote, "rev-parse", REF) == git(alice, "rev-parse", REF)
    team.store("alice").add("Timeouts", "Every outbound call has a 10 s timeout.", kind="decision")
    code, out, _ = cli(alice, "push")
    assert code == 0 and git(team.remote, "rev-parse", REF) == git(alice, "rev-parse", REF)
    code, out, _ = cli(alice, "sync", "--json")
    assert code == 0 and json.loads(out)["remote"] == "origin"


def test_another_remote_than_the_chosen_one_is_refused(team, cli, tmp_path):
    alice = _fresh_clone(team, "alice")
    upstream = tmp_path / "upstream.git"
    git(tmp_path, "init", "-q", "--bare", str(upstream))
    git(alice, "remote", "add", "upstream", str(upstream))
    team.store("alice").add("Retry policy", "Retry 429s with backoff.", kind="decision")
    assert cli(alice, "sync", "--remote", "origin")[0] == 0
    code, _, err = cli(alice, "sync", "upstream")
    assert code == 1
    assert f"fatal: upstream is not the remote chosen for sharing facts (neo.remote is origin): this would push {REF}" in err
    assert "`git neo sync --remote upstream` makes upstream the one instead" in err
    assert git(upstream, "for-each-ref", "refs/neo") == ""
    code, _, err = cli(alice, "sync", "origin", "--remote", "upstream")
    assert code == 1 and "two remotes named" in err


def test_pull_needs_no_choice_and_records_none(team, cli):
    team.clone("alice")                              # alice shares with origin
    team.store("alice").add("Retry policy", "Retry 429s with backoff.", kind="decision")
    team.sync("alice")
    bob = _fresh_clone(team, "bob")
    code, out, _ = cli(bob, "pull")
    assert code == 0 and "facts: created" in out
    assert [f.subject for f in team.store("bob").list()] == ["Retry policy"]
    assert git(bob, "config", "--get", "neo.remote", check=False) == ""


def test_install_remote_records_the_choice_and_uninstall_takes_it_back(team, cli):
    alice = _fresh_clone(team, "alice")
    code, out, _ = cli(alice, "install", "--remote", "origin")
    assert code == 0 and "facts are shared with origin from now on (neo.remote)" in out
    assert git(alice, "config", "--get", "neo.remote").strip() == "origin"
    team.store("alice").add("Retry policy", "Retry 429s with backoff.", kind="decision")
    assert cli(alice, "sync")[0] == 0 and git(team.remote, "rev-parse", REF).strip()
    code, out, _ = cli(alice, "install", "--uninstall", "--remote", "origin")
    assert code == 0 and "no longer shared with origin" in out
    assert git(alice, "config", "--get", "neo.remote", check=False) == ""
    assert cli(alice, "push")[0] == 1


def test_an_upstream_you_cannot_push_to_fails_with_a_clear_message(team, cli, tmp_path):
    """What GitHub's ssh says to someone without write access, from a receive-pack that refuses."""
    alice = _fresh_clone(team, "alice")
    denied = tmp_path / "deny-receive-pack"
    denied.write_text("#!/bin/sh\necho 'ERROR: Permission to acme/api.git denied to alice.' >&2\nexit 1\n")
    denied.chmod(denied.stat().st_mode | stat.S_IXUSR)
    git(alice, "config", "remote.origin.receivepack", str(denied))
    team.store("alice").add("Retry policy", "Retry 429s with backoff.", kind="decision")
    tip = git(alice, "rev-parse", REF)
    code, out, err = cli(alice, "sync", "--remote", "origin")
    assert code == 1 and "Traceback" not in err
    assert err.startswith("fatal: you cannot push to origin: ERROR: Permission to acme/api.git denied to alice.")
    assert "hint: nothing was pushed and your local facts are unchanged" in err and "`git neo pull origin`" in err
    assert git(alice, "rev-parse", REF) == tip and _remote_refs(team) == ""
