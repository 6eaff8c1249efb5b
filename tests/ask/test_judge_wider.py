"""`git neo review --judge --wider`: the judge also reads pairs no rule proposed (each recent fact's
most similar earlier long facts), through the real SDK clients against the loopback servers. Only
`updated` / `contradicts` reach the shared ref, as ordinary possible supersessions; every answer
is remembered in the clone, so no pair is asked twice."""
from __future__ import annotations

import json

import numpy as np

from neo_git.cli import main
from neo_git.facts import Fact, FactKind, FactScope
from neo_git.store.review.candidates import RECORD, candidate_pairs, judged, pair_key
from neo_git.store.supersession import LONG_CANDIDATES, Thresholds
from tests.helpers.ask import (
    FAKE_OPENAI_KEY,
    LONG,
    answering,
    configure_provider,
    quoted_facts,
)
from tests.helpers.git import git

UPDATED = {"verdict": "updated", "reason": "the event pipeline replaces the RabbitMQ decision"}


def _unproposed_pair(repo):
    """Two long decisions that read alike but whose newer text says nothing about replacing the
    older one: the write policy proposes nothing (no evidence), so only a judge can find it."""
    from neo_git.store import FactStore
    from neo_git.store.base import Change

    store = FactStore.open(repo)
    old = store.add("Use RabbitMQ for messaging", LONG + " We use RabbitMQ.", kind="decision")
    new = store.add_detailed("Event pipeline design", LONG + " Events go through Kafka topics.", kind="decision")
    assert not new.possible and new.superseded is None and store.review() == []
    # Written a day earlier (the two adds share a second, and facts of one second have no order).
    old = old.evolve(metadata={"created_at": "2026-01-01T00:00:00+00:00"})
    store.transact("project", lambda facts: Change(facts=(old,), message="older"))
    return old, new.fact


def _tip(repo) -> str:
    return git(repo, "rev-parse", "refs/neo/facts").strip()


def test_an_updated_verdict_puts_the_pair_in_the_queue_and_it_is_not_asked_again(repo, llm, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    old, new = _unproposed_pair(repo)
    configure_provider(repo, llm, "openai")
    assert main(["review", "--judge"]) == 0                          # without --wider: nothing to ask
    assert "nothing to judge" in capsys.readouterr().out and llm.requests == []
    llm.queue(json.dumps(UPDATED))
    assert main(["review", "--judge", "--wider"]) == 0
    out = capsys.readouterr().out
    assert f"{new.id[:8]} / {old.id[:8]}: updated — the event pipeline replaces" in out and "nothing retired" in out
    [request] = llm.requests
    quoted = quoted_facts(request)
    assert quoted["older"]["subject"] == "Use RabbitMQ for messaging" and quoted["newer"]["subject"] == \
        "Event pipeline design" and "passages" not in quoted
    from neo_git.store import FactStore

    store = FactStore.open(repo)
    [item] = store.review()
    assert (item["id"], item["candidate"], item["evidence"]) == (new.id, old.id, ["judge"])
    assert item["judge"]["verdict"] == "updated" and item["judge"]["model"] == "openai:gpt-5-mini"
    assert "found by the review judge" in item["why"] and store.get(old.id).is_valid
    tip = _tip(repo)
    assert main(["review", "--judge", "--wider", "--json"]) == 0   # linked and remembered: not asked again
    assert json.loads(capsys.readouterr().out) == [] and len(llm.requests) == 1 and _tip(repo) == tip
    assert store.accept(new.id).id == old.id                         # a person decides as for any item
    assert FactStore.open(repo).get(new.id).supersedes == old.id


def test_a_distinct_verdict_writes_nothing_to_the_ref_and_is_remembered(repo, llm, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    old, new = _unproposed_pair(repo)
    configure_provider(repo, llm, "openai")
    tip = _tip(repo)
    llm.queue(json.dumps({"verdict": "distinct", "reason": "messaging and event design are separate"}))
    assert main(["review", "--judge", "--wider", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert (row["id"], row["candidate"], row["verdict"], row["superseded"]) == (new.id, old.id, "distinct", None)
    assert _tip(repo) == tip                                         # the shared ref did not move
    neo_dir = repo / ".git" / "neo"
    assert judged(neo_dir)[pair_key(new.id, old.id)]["verdict"] == "distinct"
    assert main(["review", "--judge", "--wider"]) == 0 and len(llm.requests) == 1
    # A damaged record loses nothing but the memory of what was asked: the pair is asked again.
    (neo_dir / RECORD).write_text("{not json", encoding="utf-8")
    llm.queue(json.dumps({"verdict": "distinct", "reason": "still separate"}))
    assert main(["review", "--judge", "--wider"]) == 0 and len(llm.requests) == 2
    assert pair_key(new.id, old.id) in judged(neo_dir)


def test_auto_mode_supersedes_a_pair_the_judge_found_and_restore_undoes_it(repo, llm, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    old, new = _unproposed_pair(repo)
    configure_provider(repo, llm, "openai")
    git(repo, "config", "neo.reviewJudge", "auto")
    llm.queue(json.dumps(UPDATED))
    assert main(["review", "--judge", "--wider", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["superseded"] == old.id
    from neo_git.store import FactStore

    store = FactStore.open(repo)
    assert not store.get(old.id).is_valid and store.why(old.id)["rule"] == "judge"
    store.restore(old.id)
    [item] = FactStore.open(repo).review()                           # back as a reviewed proposal
    assert (item["candidate"], item["evidence"], item["judge"]["verdict"]) == (old.id, ["judge"], "updated")
    assert main(["review", "--judge", "--wider"]) == 0 and len(llm.requests) == 1


def test_limit_and_flags(repo, llm, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    _unproposed_pair(repo)
    configure_provider(repo, llm, "openai")
    assert main(["review", "--judge", "--wider", "--limit", "0"]) == 0 and llm.requests == []
    assert main(["review", "--wider"]) == 2
    assert "--wider go with --judge" in capsys.readouterr().err
    assert main(["review", "--judge", "--wider", "--limit", "-1"]) == 2
    assert main(["review", "--judge", "--limit", "5"]) == 2 and main(["review", "--limit", "5"]) == 2
    assert "--limit goes with --wider" in capsys.readouterr().err and llm.requests == []


def test_the_help_names_the_default_limit(capsys):
    """The CLI states the default without importing the judge (`git neo -h` stays light)."""
    from neo_git.ask.judge import WIDER_LIMIT

    try:
        main(["review", "-h"])
    except SystemExit:
        pass
    assert f"(default {WIDER_LIMIT})" in " ".join(capsys.readouterr().out.split())


def _fact(i: int, words: int, kind: FactKind = FactKind.DECISION, **meta) -> Fact:
    return Fact.from_dict({"id": f"{i:016x}", "subject": ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")[i] + " plan", "body": " ".join(["word"] * words),
                           "kind": kind.value, "scope": FactScope.PROJECT.value,
                           "metadata": {"created_at": f"2026-01-{i + 1:02d}T00:00:00Z", **meta}})


def test_candidates_are_the_few_most_similar_earlier_long_facts_of_the_kind():
    """Pure: newest first; earlier facts only; the same kind; at most LONG_CANDIDATES looked at
    per fact (skipped ones count), from the long threshold; short pairs are the write policy's."""
    thresholds = Thresholds(0.9, 0.3, "test")
    facts = [_fact(0, 80), _fact(1, 80), _fact(2, 80), _fact(3, 80), _fact(4, 80, FactKind.PATTERN), _fact(5, 80)]
    # fact 5 against 0..4: cosines 0.8, 0.7, 0.6, 0.5 (another kind: 4)
    vectors = np.zeros((6, 8), dtype=np.float32)
    vectors[:, 0] = 1.0
    for i, cos in enumerate((0.8, 0.7, 0.6, 0.5, 0.95)):
        vectors[i] = [cos, np.sqrt(1 - cos * cos), 0, 0, 0, 0, 0, 0]
    vectors[:, 2:] = 0
    got = [(new.id[-1], old.id[-1]) for new, old, _ in candidate_pairs(facts, vectors, thresholds, newest=1)]
    assert got == [("5", "0"), ("5", "1"), ("5", "2")][:LONG_CANDIDATES]
    judged_pairs = {pair_key(facts[5].id, facts[0].id)}
    got = [(new.id[-1], old.id[-1]) for new, old, _ in candidate_pairs(facts, vectors, thresholds, judged_pairs, 1)]
    assert got == [("5", "1"), ("5", "2")]                          # a judged pair still counts as looked at
    short = [_fact(i, 5) for i in range(4)] + [_fact(4, 5, FactKind.PATTERN), _fact(5, 5)]
    assert list(candidate_pairs(short, vectors, thresholds, newest=1)) == []
    high = Thresholds(0.9, 0.3, "test", long_possible=0.75)
    assert [old.id[-1] for _, old, _ in candidate_pairs(facts, vectors, high, newest=1)] == ["0"]
    kept_apart = [*facts[:5], _fact(5, 80, distinct_from=[facts[0].id])]
    assert [old.id[-1] for _, old, _ in candidate_pairs(kept_apart, vectors, thresholds, newest=1)] == ["1", "2"]


def test_auto_mode_never_lets_a_claim_retire_a_trusted_fact(repo, llm, monkeypatch, capsys):
    """A newer fact by an author not trusted here (a claim) that the judge finds `updated`: in auto
    mode the verdict is recorded and a person decides; the trusted older fact stays."""
    from neo_git.store import FactStore
    from neo_git.store.base import Change

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    store = FactStore.open(repo)
    old = store.add("Use RabbitMQ for messaging", LONG + " We use RabbitMQ.", kind="decision")
    old = old.evolve(metadata={"created_at": "2026-01-01T00:00:00+00:00"})
    store.transact("project", lambda facts: Change(facts=(old,), message="older"))
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "mallory@example.com")
    new = FactStore.open(repo).add("Event pipeline design", LONG + " Events go through Kafka topics.",
                                   kind="decision")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "ada@example.com")
    assert new.id in FactStore.open(repo).untrusted() and old.id not in FactStore.open(repo).untrusted()
    configure_provider(repo, llm, "openai")
    git(repo, "config", "neo.reviewJudge", "auto")
    llm.queue(json.dumps(UPDATED))
    assert main(["review", "--judge", "--wider"]) == 0
    assert "kept for you to decide: the newer fact is an unverified claim" in capsys.readouterr().out
    store = FactStore.open(repo)
    assert store.get(old.id).is_valid and store.get(new.id).supersedes is None
    [item] = store.review(types=("possible_supersession",))
    assert item["judge"]["verdict"] == "updated" and item["candidate"] == old.id
    assert main(["review", "--judge", "--json"]) == 0 and json.loads(capsys.readouterr().out) == []


def _remember_many(neo_dir: str, writer: int) -> None:
    from neo_git.store.review.candidates import remember

    for n in range(15):
        remember(neo_dir, {pair_key(f"{writer:08x}{n:08x}", "0" * 16): {"verdict": "distinct", "model": "m"}})


def test_answers_remembered_by_several_processes_at_once_are_all_kept(tmp_path):
    """Two terminals judging at once: the record is locked and merged, no answer is lost."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_remember_many, args=(str(tmp_path), w)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert len(judged(tmp_path)) == 4 * 15


def test_earlier_means_an_earlier_second_whatever_the_stamp_says_it_in():
    from neo_git.store.review.candidates import _seconds

    assert _seconds("2026-01-01T00:00:00Z") == _seconds("2026-01-01T00:00:00+00:00") \
        == _seconds("2026-01-01T02:00:00+02:00") < _seconds("2026-01-01T00:00:01Z")
    assert _seconds("yesterday") == float("-inf")
    assert _seconds("2026-01-01T00:00:00.900Z") == _seconds("2026-01-01T00:00:00.100Z")   # one second


def test_an_unwritable_record_of_answers_warns_and_keeps_the_verdict(repo, llm, monkeypatch, capsys):
    """The verdict is on the ref before the clone's record of answers is written: a record that
    cannot be written (a read-only or damaged .git/neo) costs a question next time, not the run."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    old, new = _unproposed_pair(repo)
    configure_provider(repo, llm, "openai")
    (repo / ".git" / "neo" / RECORD).mkdir(parents=True)            # a folder where the file should be
    llm.queue(json.dumps(UPDATED))
    assert main(["review", "--judge", "--wider"]) == 0
    out, err = capsys.readouterr()
    assert f"{new.id[:8]} / {old.id[:8]}: updated" in out and "warning:" in err and RECORD in err
    from neo_git.store import FactStore

    [item] = FactStore.open(repo).review()
    assert (item["id"], item["candidate"], item["judge"]["verdict"]) == (new.id, old.id, "updated")


def _chain(repo):
    """Three long decisions on one subject, a day apart and no rule linking them: the judge may
    well call the newest an update of both earlier ones."""
    from neo_git.store import FactStore
    from neo_git.store.base import Change

    store = FactStore.open(repo)
    first = store.add("Use RabbitMQ for messaging", LONG + " We use RabbitMQ.", kind="decision")
    second = store.add("Use NATS for messaging", LONG + " We use NATS streaming.", kind="decision")
    third = store.add("Event pipeline design", LONG + " Events go through Kafka topics.", kind="decision")
    first = first.evolve(metadata={"created_at": "2026-01-01T00:00:00+00:00"})
    second = FactStore.open(repo).get(second.id).evolve(metadata={"created_at": "2026-01-02T00:00:00+00:00"})
    store.transact("project", lambda facts: Change(facts=(first, second), message="older"))
    assert FactStore.open(repo).review() == []
    return first, second, third


def test_auto_mode_retires_at_most_one_fact_per_newer_fact(repo, llm, monkeypatch, capsys):
    """A fact supersedes one fact (`supersedes` is one id): a second `updated` verdict for the same
    newer fact is recorded for a person, not accepted over the first (which would leave the first
    retired fact pointing at a successor that no longer names it, and its restore undoing nothing)."""
    from neo_git.store import FactStore

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    facts = _chain(repo)
    configure_provider(repo, llm, "openai")
    git(repo, "config", "neo.reviewJudge", "auto")
    llm.responder = answering(lambda newer, older: UPDATED)
    assert main(["review", "--judge", "--wider", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(llm.requests) == 2   # the newest fact's two candidates are one question
    store = FactStore.open(repo)
    now = {f.id: store.get(f.id) for f in facts}
    for fact in now.values():                     # every pointer answered by the other side
        if fact.superseded_by is not None:
            assert now[fact.superseded_by].supersedes == fact.id
    assert sum(1 for r in rows if r["superseded"]) == sum(1 for f in now.values() if not f.is_valid) >= 1
    assert any(r["verdict"] == "updated" and not r["superseded"] and not r["error"] for r in rows)
    [item] = store.review()                                           # the second update: a person decides
    assert item["judge"]["verdict"] == "updated" and now[item["candidate"]].is_valid


def test_a_pair_whose_fact_was_retired_during_the_run_is_asked_again_once_it_is_back(repo, llm, monkeypatch,
                                                                                     capsys):
    """An answer that could not be recorded (the older fact was retired by an earlier verdict of the
    run) is not remembered as answered: when a person restores that fact, the pair is asked."""
    from neo_git.store import FactStore

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    first, second, third = _chain(repo)

    def verdict(newer: str, older: str) -> dict:   # the newest replaces the first; the second is apart
        return {"verdict": "distinct", "reason": "apart"} if {newer, older} == {third.subject, second.subject} \
            else UPDATED

    llm.responder = answering(verdict)
    configure_provider(repo, llm, "openai")
    git(repo, "config", "neo.reviewJudge", "auto")
    assert main(["review", "--judge", "--wider", "--json"]) == 0
    rows = {(r["id"], r["candidate"]): r for r in json.loads(capsys.readouterr().out)}
    assert rows[(third.id, first.id)]["superseded"] == first.id
    assert rows[(second.id, first.id)]["error"].startswith("no longer open")
    FactStore.open(repo).restore(first.id)                           # the person disagrees with the judge
    asked = len(llm.requests)
    assert main(["review", "--judge", "--wider", "--json"]) == 0
    assert [(r["id"], r["candidate"]) for r in json.loads(capsys.readouterr().out)] == [(second.id, first.id)]
    assert len(llm.requests) == asked + 1


def test_the_judges_tokens_are_counted_by_stats_apart_from_ask(repo, llm, monkeypatch, capsys):
    """Each question to the judge is a model call someone pays for: `git neo stats` sums them
    (even an unreadable reply's), apart from `ask`'s effort table and its estimated saving."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    _unproposed_pair(repo)
    configure_provider(repo, llm, "openai")
    llm.queue("not json at all")
    assert main(["review", "--judge", "--wider"]) == 0
    llm.queue(json.dumps(UPDATED))
    assert main(["review", "--judge", "--wider"]) == 0               # asked again: the reply was unreadable
    capsys.readouterr()
    assert main(["stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["judge"]["calls"] == 2 and stats["judge"]["tokens_in"] > 0
    assert stats["calls"] == 0 and stats["questions"] == 0 and stats["estimated_saving_tokens"] == 0
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert "no `git neo ask` calls" in out and "review judge (`git neo review --judge`): 2 calls" in out
