"""Two facts about different code that read alike never supersede by similarity alone (rule 3):
both cite code (`metadata.citations`), none of one's citations may be the code of the other's, so
the newer one is stored next to the older with a review link saying why (issue 18's request)."""
from __future__ import annotations

import json

import pytest

from neo_git.cli import main
from neo_git.facts import Fact
from neo_git.store import FactStore
from neo_git.store.evidence import cites_other_code
from tests.helpers.git import commit_files

CODE = ("import time\n\n\n"
        "def retry(call, attempts=3):\n"
        "    for attempt in range(attempts):\n"
        "        try:\n"
        "            return call()\n"
        "        except OSError:\n"
        "            time.sleep(2 ** attempt)\n"
        "    return call()\n\n\n"
        "class Queue:\n"
        "    def push(self, item):\n"
        "        return item\n\n"
        "    def pop(self):\n"
        "        return None\n")
OLD = ("Retry failed calls", "retry() retries a failed call three times with exponential backoff starting at 1 s.")
# The newer fact gives the backoff a new start (2 s): a new value beside the same words (store/evidence.py).
NEW = ("Retries with backoff", "retry() retries a failed call 3 times, exponential backoff from 2 s.")


@pytest.fixture
def repo(repo_with_commit):
    commit_files(repo_with_commit, {"src/client.py": CODE, "src/worker.py": CODE})
    return repo_with_commit


def test_alike_facts_citing_different_code_are_both_kept_with_a_review_item(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo)
    store = FactStore.open(repo)
    old = store.add(*OLD, kind="decision", cites=["src/client.py:retry"])
    result = store.add_detailed(*NEW, kind="decision", cites=["src/worker.py:retry"])
    assert result.superseded is None and store.get(old.id).is_valid
    [link] = result.possible
    assert link.id == old.id and "different_code" in list(link.evidence)
    assert link.similarity >= store.embedder.supersede_threshold   # similarity alone would have retired it
    assert main(["review", "--json"]) == 0
    [item] = [i for i in json.loads(capsys.readouterr().out) if i["type"] == "possible_supersession"]
    assert item["candidate"] == old.id and "cite different code" in item["why"]


def test_the_same_alike_facts_about_the_same_code_still_supersede(repo):
    store = FactStore.open(repo)
    old = store.add(*OLD, kind="decision", cites=["src/client.py:retry"])
    result = store.add_detailed(*NEW, kind="decision", cites=["src/client.py"])   # the whole file holds it
    assert result.superseded is not None and result.superseded.id == old.id and result.rule == "similarity"


def test_a_fact_without_citations_still_supersedes_a_cited_one(repo):
    store = FactStore.open(repo)
    old = store.add(*OLD, kind="decision", cites=["src/client.py:retry"])
    assert store.add_detailed(*NEW, kind="decision").superseded.id == old.id


def _cited(*citations: dict) -> Fact:
    return Fact.from_dict({"id": "0" * 16, "subject": "s", "body": "", "kind": "decision", "scope": "project",
                           "metadata": {"citations": [{"state": "verified", **c} for c in citations]}})


@pytest.mark.parametrize(("left", "right", "other"), [
    ({"path": "a.py", "symbol": "retry"}, {"path": "b.py", "symbol": "retry"}, True),
    ({"path": "a.py", "symbol": "Queue.push"}, {"path": "a.py", "symbol": "Queue.pop"}, True),
    ({"path": "a.py", "symbol": "Queue"}, {"path": "a.py", "symbol": "Queue.pop"}, False),   # one inside the other
    ({"path": "a.py", "span": [1, 10]}, {"path": "a.py", "span": [11, 20]}, True),
    ({"path": "a.py", "span": [1, 10]}, {"path": "a.py", "span": [10, 20]}, False),
    ({"path": "a.py"}, {"path": "a.py", "symbol": "retry"}, False),                        # the whole file
])
def test_which_citations_name_other_code(left, right, other):
    assert cites_other_code(_cited(left), _cited(right)) is other
    assert cites_other_code(_cited(left, {"path": "c.py"}), _cited(right, {"path": "c.py"})) is False
    assert cites_other_code(_cited(left), _cited()) is False   # no citations: nothing to compare
