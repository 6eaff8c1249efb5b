"""`git neo review [accept|reject]`, `git neo invalidate`, and the possible supersessions that
`add --json` and `recall --json` expose."""
from __future__ import annotations

import json

import pytest

from neo_git.cli import main
from tests.helpers.store import POSSIBLE_NEW, POSSIBLE_OLD


@pytest.fixture
def repo(repo_with_commit, monkeypatch):
    monkeypatch.chdir(repo_with_commit)
    monkeypatch.setenv("NEO_EMBEDDER", "hash")
    return repo_with_commit


def run(capsys, *argv, code=0):
    got = main(list(argv))
    out = capsys.readouterr()
    assert got == code, out.err
    return out


def run_json(capsys, *argv):
    return json.loads(run(capsys, *argv).out)


def test_add_and_recall_json_expose_possible_supersessions(repo, capsys):
    old = run_json(capsys, "add", "-k", "decision", "--json", *POSSIBLE_OLD)
    new = run_json(capsys, "add", "-k", "decision", "--json", *POSSIBLE_NEW)
    assert new["superseded"] is None and new["rule"] is None
    assert [link["id"] for link in new["possibly_supersedes"]] == [old["id"]]
    recalled = run_json(capsys, "recall", "--json", "When do login sessions expire?")
    assert {"constraints", "valid_facts", "invalidated", "known_unknowns", "environment"} <= set(recalled)
    assert {"id": new["id"], "candidate": old["id"]}.items() <= recalled["possible_supersessions"][0].items()
    listed = run_json(capsys, "review", "--json")
    assert [(i["id"], i["candidate"]) for i in listed] == [(new["id"], old["id"])]
    text = run(capsys, "review").out
    assert f"{new['id']} may supersede {old['id']}" in text and "Login sessions" in text


def test_review_accept_supersedes_and_restore_undoes(repo, capsys):
    old = run_json(capsys, "add", "-k", "decision", "--json", *POSSIBLE_OLD)
    new = run_json(capsys, "add", "-k", "decision", "--json", *POSSIBLE_NEW)
    done = run_json(capsys, "review", "accept", new["id"][:8], "--json")
    assert done == {"id": new["id"], "superseded": old["id"], "rule": "review"}
    why = run_json(capsys, "why", old["id"], "--json")
    assert why["rule"] == "review" and why["superseded_by"] == new["id"]
    assert "nothing to review" in run(capsys, "review").out
    run(capsys, "restore", old["id"])
    assert len(run_json(capsys, "review", "--json")) == 1


def test_review_reject_is_remembered(repo, capsys):
    old = run_json(capsys, "add", "-k", "decision", "--json", *POSSIBLE_OLD)
    new = run_json(capsys, "add", "-k", "decision", "--json", *POSSIBLE_NEW)
    assert run_json(capsys, "review", "reject", new["id"], old["id"][:6], "--json") == \
        {"id": new["id"], "distinct_from": old["id"]}
    assert run_json(capsys, "review", "--json") == []
    shown = run_json(capsys, "show", new["id"], "--json")
    assert shown["metadata"]["distinct_from"] == [old["id"]] and "possibly_supersedes" not in shown["metadata"]


def test_review_errors_are_clear(repo, capsys):
    new = run_json(capsys, "add", "-k", "decision", "--json", "Lonely", "Nothing else is like it.")
    err = run(capsys, "review", "accept", code=1).err
    assert "needs the id" in err and "hint:" in err
    assert f"nothing to review about {new['id']}" in run(capsys, "review", "accept", new["id"], code=1).err
    assert run(capsys, "review", "maybe", code=2)


def test_invalidate_needs_a_reason_and_keeps_it(repo, capsys):
    fact = run_json(capsys, "add", "-k", "decision", "--json", "Build", "We build with Make.")
    run(capsys, "invalidate", fact["id"], code=2)  # --reason is required
    gone = run_json(capsys, "invalidate", fact["id"][:6], "--reason", "we moved to Bazel", "--json")
    assert gone["is_valid"] is False and gone["metadata"]["invalidation"]["detail"] == "we moved to Bazel"
    assert run_json(capsys, "list", "--json") == []
    assert "we moved to Bazel" in run_json(capsys, "why", fact["id"], "--json")["explanation"]


LONG = " ".join(["context decision consequences service queue retries message broker handler pipeline"] * 6)


def test_a_review_item_quotes_the_words_its_evidence_rests_on(repo, capsys):
    """A person decides from the newer record's own words, not from a label: the item shows where
    it names the older record and where it states the change (`quotes` in --json)."""
    old = run_json(capsys, "add", "-k", "decision", "--json", "Keep sessions in Redis",
                   "## Context\n\n" + LONG + " Sessions live in Redis with a one-day expiry.")
    new = run_json(capsys, "add", "-k", "decision", "--json", "Signed cookie sessions",
                   "## Context\n\n" + LONG + " This revisits keep sessions in Redis: the session moves into a "
                   "signed cookie, and we no longer keep sessions in Redis.")
    item, = run_json(capsys, "review", "--json")
    assert item["evidence"] == ["reference", "change"]
    assert "keep sessions in Redis" in item["quotes"]["reference"]
    assert "revisits keep sessions in Redis" in item["quotes"]["change"]
    assert all(len(quote) <= 170 for quote in item["quotes"].values())
    text = run(capsys, "review").out
    assert '  names it: "…' in text and "  says: \"…" in text
    assert "new: Signed cookie sessions — context decision" in text     # not the "## Context" heading
    assert old["id"] in text and new["id"] in text


def test_a_quoted_passage_reaches_the_terminal_escaped(repo, capsys):
    run(capsys, "add", "-k", "decision", "Keep sessions in Redis", LONG + " Sessions live in Redis.")
    run(capsys, "add", "-k", "decision", "Signed cookie sessions",
        LONG + " We no longer keep sessions in Redis \x1b]0;pwned\x07\x1b[31m at all.")
    text = run(capsys, "review").out
    assert "says:" in text and "\x1b" not in text and "\x07" not in text


def test_a_newer_fact_with_several_candidates_is_one_question(repo, capsys):
    """A record that states a change brings its other close records as alternatives: the queue
    asks once about the newer record, lists each candidate with its own command, and after one is
    accepted the alternatives leave the queue."""
    from tests.helpers.store import close_records

    class Adder:   # what close_records needs of a store, through the CLI
        def add(self, subject, body, kind):
            return type("Added", (), run_json(capsys, "add", "-k", kind, "--json", subject, body))

    best, second, third, text = close_records(Adder())
    new = run_json(capsys, "add", "-k", "decision", "--json", "Hermetic builds", text)
    listed = run_json(capsys, "review", "--json")
    assert sorted((i["candidate"], tuple(i["evidence"])) for i in listed) == sorted(
        [(best.id, ("change",)), (second.id, ("alternative",)), (third.id, ("alternative",))])
    out = run(capsys, "review").out
    assert f"{new['id']} may supersede one of 3 facts" in out
    assert out.count("new: Hermetic builds") == 1
    for candidate in (best, second, third):
        assert f"→ git neo review accept | reject {new['id'][:8]} {candidate.id[:8]}" in out
    assert "(1 open, 3 items;" in out
    run(capsys, "review", "accept", new["id"][:8], second.id[:8])
    assert [i["candidate"] for i in run_json(capsys, "review", "--json")] == [best.id]
    out = run(capsys, "review").out
    assert f"{new['id']} may supersede {best.id}" in out and "(1 open;" in out


def test_once_an_alternative_is_accepted_the_command_the_queue_prints_works_and_nothing_names_the_others(
        repo, capsys):
    """After one alternative is accepted the others leave the queue (the question is answered); the
    one item left prints `→ git neo review accept | reject NEW` without a candidate, so that command
    must resolve it, and neither `why` nor recall's `possible_supersessions` may still offer the
    hidden alternatives as open (`git neo review` no longer lists them, accept cannot take them)."""
    from tests.helpers.store import close_records

    class Adder:
        def add(self, subject, body, kind):
            return type("Added", (), run_json(capsys, "add", "-k", kind, "--json", subject, body))

    best, second, third, text = close_records(Adder())
    new = run_json(capsys, "add", "-k", "decision", "--json", "Hermetic builds", text)
    run(capsys, "review", "accept", new["id"][:8], second.id[:8])
    out = run(capsys, "review").out
    assert f"→ git neo review accept | reject {new['id'][:8]} {best.id[:8]}\n" in out
    assert run_json(capsys, "why", new["id"], "--json")["supersedes"] == second.id
    why = run_json(capsys, "why", new["id"], "--json")
    assert [link["id"] for link in why["possibly_supersedes"]] == [best.id] and third.id not in why["explanation"]
    recalled = run_json(capsys, "recall", "--json", "nightly builds schedule")
    assert [p["candidate"] for p in recalled["possible_supersessions"] if p["id"] == new["id"]] == [best.id]
    assert run_json(capsys, "review", "reject", new["id"][:8], "--json") == {"id": new["id"], "distinct_from": best.id}
