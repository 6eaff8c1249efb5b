"""The current answer first (issue 21): a wh-question's echo ranks after the facts that answer
it, and recall's families start at the embedder's own family threshold."""
from __future__ import annotations

import pytest

from neo_git import ranking
from neo_git.embed import family_threshold, get_embedder, related_threshold
from neo_git.embed.hashing import HashEmbedder
from neo_git.facts import Fact, FactKind, FactScope, new_fact_id
from neo_git.recall import assemble
from tests.helpers.store import memory_store


@pytest.mark.parametrize("query, wh", [
    ("What pricing have we offered to TechCorp?", True),
    ("so, which cloud provider did we pick?", True),
    ("  How do we load the config?", True),
    ("Why is Postgres the default?", True),
    ("Do we work with TechCorp?", False),
    ("Is the deploy frozen on Fridays?", False),
    ("whatever happened to the retry rule", False),   # a word starting with "what" is not a wh-word
    ("fix the retry in load_config", False),
])
def test_wh_questions_are_told_from_yes_no_questions_and_requests(query, wh):
    assert ranking.wh_question(query) is wh


def _fact(subject: str, body: str = "") -> Fact:
    return Fact(id=new_fact_id(), kind=FactKind.DECISION, scope=FactScope.PROJECT, subject=subject, body=body)


def test_a_short_statement_the_question_repeats_is_an_echo():
    asked = ranking._echo_words("What features are confirmed for the Customer Portal project?")
    assert ranking.echoes(_fact("global_project", "Customer Portal Redesign"), asked)      # 2 of 3 words
    assert ranking.echoes(_fact("Customer Portal"), asked)                                 # no body: the subject
    assert not ranking.echoes(_fact("confirmed_features", "User dashboard, Order history"), asked)
    assert not ranking.echoes(_fact("global_budget", "$200,000"), asked)
    long_body = "The Customer Portal project has confirmed features " + "and more words " * 10
    assert not ranking.echoes(_fact("portal", long_body), asked)    # a long statement says more than the question


def test_the_fact_a_wh_question_names_ranks_after_the_one_that_answers_it():
    store = memory_store()
    # one batch: the three hold together (no review question between them to hold one back)
    customer, quote, _ = store.add_many([{"subject": "global_customer", "body": "TechCorp"},
                                         {"subject": "global_current_quote", "body": "Pricing offered: $50 per unit"},
                                         {"subject": "global_office", "body": "Berlin"}])
    asked = store.recall("What pricing have we offered to TechCorp?", k=3)
    ids = [f.id for f in asked.valid_facts]
    assert quote.id in ids and customer.id in ids
    assert ids.index(quote.id) < ids.index(customer.id)
    confirm = store.recall("Do we work with TechCorp?", k=3)   # a yes/no question is answered by the echo
    assert confirm.valid_facts[0].id == customer.id


def test_an_echo_is_still_returned_when_nothing_else_is_relevant():
    store = memory_store()
    customer = store.add("global_customer", "TechCorp")
    asked = store.recall("What pricing have we offered to TechCorp?", k=3)
    assert [f.id for f in asked.valid_facts] == [customer.id]


def test_demoting_echoes_keeps_scores_and_the_order_of_everything_else():
    pool = [_fact("a", "alpha service uses retries"), _fact("customer", "TechCorp"), _fact("b", "beta"),
            _fact("c", "[INVALIDATED] was wrong")]
    ranked = [(1, 0.9), (0, 0.5), (2, 0.4), (3, 0.3)]
    out = ranking.demote_echoes(ranked, pool, "what did we quote TechCorp?")
    assert out == [(0, 0.5), (2, 0.4), (1, 0.9), (3, 0.3)]            # the retraction stays last
    assert ranking.demote_echoes(ranked, pool, "did we quote TechCorp?") == ranked


def test_the_hash_embedder_has_its_own_family_threshold_and_others_fall_back():
    embedder = get_embedder("hash")
    assert family_threshold(embedder) == 0.27 < related_threshold(embedder)

    class Plain:
        id, dim, supersede_threshold, possible_threshold = "plain", 4, 0.8, 0.4
    assert family_threshold(Plain()) == 0.4


def test_two_instructions_on_one_matter_in_other_words_put_the_newer_first():
    # Cosine 0.29 (hash): under the review band, so no review item, but a family for recall.
    def fact(n, minute, subject, body):
        return Fact.from_dict({"id": f"{n:016x}", "subject": subject, "body": body, "kind": "decision",
                               "scope": "project", "metadata": {"created_at": f"2025-12-05T14:0{minute}:00+00:00"}})

    facts = [fact(1, 1, "instruction_a", "[INDIVIDUAL] Eva (Senior Engineer): The feature will take 3 weeks to "
                  "build properly"),
             fact(2, 2, "instruction_b", "[VP] Victor (VP Engineering): Ship the feature by Friday, scope down if "
                  "needed")]
    embedder = HashEmbedder()
    vectors = embedder.embed([f.text for f in facts])
    assert family_threshold(embedder) <= float(vectors[0] @ vectors[1]) < related_threshold(embedder)
    query = "What's the delivery timeline for the feature?"
    cosines = vectors @ embedder.embed([query])[0]
    assert cosines[0] > cosines[1]
    for threshold, first in ((related_threshold(embedder), facts[0]), (family_threshold(embedder), facts[1])):
        ctx = assemble(query, facts, cosines, k=2, vectors=vectors, family_threshold=threshold)
        assert ctx.valid_facts[0].id == first.id


def test_demoting_an_echo_keeps_ranks_tie_order_among_the_other_facts():
    # Scores within ranking.TIE are a tie that `rank` gives to the newer fact; moving an echo
    # must not re-sort the others by their raw scores.
    from datetime import datetime, timezone

    import numpy as np

    from neo_git.recall import _Layout

    def fact(n, minute, subject, body):
        return Fact.from_dict({"id": f"{n:016x}", "subject": subject, "body": body, "kind": "decision",
                               "scope": "project", "metadata": {"created_at": f"2025-12-05T14:0{minute}:00+00:00"}})

    facts = [fact(1, 1, "quote_a", "older alpha answer"), fact(2, 2, "quote_b", "newer beta answer"),
             fact(3, 3, "customer", "TechCorp")]
    layout = _Layout(facts)
    ranked = ranking.rank(np.array([0.5000004, 0.5000001, 0.9]), layout, datetime.now(timezone.utc), {}, None)
    assert [i for i, _ in ranked] == [2, 1, 0]              # the newer of the tied pair first
    out = ranking.demote_echoes(ranked, layout.pool, "what did we quote TechCorp?")
    assert [i for i, _ in out] == [1, 0, 2]


def test_an_echo_with_a_negative_score_is_never_raised_above_a_fact_that_answers():
    # With the relevance floor off (neo.relevanceFloor) a ranked fact may score below 0; an echo's
    # score times ECHO_WEIGHT would then be *higher* than its own.
    pool = [_fact("a", "alpha service uses retries"), _fact("b", "beta rollout plan"), _fact("customer", "TechCorp")]
    ranked = [(0, 0.2), (1, -0.1), (2, -0.3)]
    assert ranking.demote_echoes(ranked, pool, "what did we quote TechCorp?") == ranked


def test_a_newer_echo_does_not_take_the_answers_place_through_its_family():
    """The echo resembles the answer (cosine ~0.5, a family): newest-first must not undo the demotion."""
    from neo_git.embed.hashing import HashEmbedder

    facts = [Fact.from_dict({"id": f"{n:016x}", "subject": subject, "body": body, "kind": "decision",
                             "scope": "project", "metadata": {"created_at": f"2025-12-05T14:0{n}:00+00:00"}})
             for n, subject, body in ((1, "global_current_quote", "Pricing offered to TechCorp: $50 per unit"),
                                      (2, "global_customer", "TechCorp"))]
    embedder = HashEmbedder()
    vectors = embedder.embed([f.text for f in facts])
    assert float(vectors[0] @ vectors[1]) >= family_threshold(embedder)   # one family
    query = "What pricing have we offered to TechCorp?"
    cosines = vectors @ embedder.embed([query])[0]
    ctx = assemble(query, facts, cosines, k=2, vectors=vectors, family_threshold=family_threshold(embedder))
    assert [f.id for f in ctx.valid_facts] == [facts[0].id, facts[1].id]
    confirm = assemble("Do we quote TechCorp?", facts, vectors @ embedder.embed(["Do we quote TechCorp?"])[0], k=2,
                       vectors=vectors, family_threshold=family_threshold(embedder))
    assert confirm.valid_facts[0].id == facts[1].id    # a yes/no question: the family's newest, as before


def test_except_reads_cleared_positions_as_false():
    flags = ranking.Except([True, True, False, True], frozenset({1}))
    assert [flags[i] for i in range(4)] == [True, False, False, True] and len(flags) == 4 and flags[0:2] == [True, False]
