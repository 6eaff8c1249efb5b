"""The first embedding of a large store streams in batches (issue 35, deliverable 3): no call
embeds more than a batch, decoded facts are not kept, recall answers as it does once every
vector is cached, and a terminal shows progress."""
from __future__ import annotations

import io
import os
import random
import shutil
from pathlib import Path

from neo_git.embed import batches
from neo_git.embed.cache import VectorCache
from neo_git.embed.hashing import HashEmbedder
from tests.helpers.store import open_store, random_word


class CountingEmbedder:
    """The hash embedder, recording the size of every call."""

    def __init__(self) -> None:
        self.inner = HashEmbedder()
        self.id, self.dim = self.inner.id, self.inner.dim
        self.supersede_threshold = self.inner.supersede_threshold
        self.calls: list[int] = []

    def embed(self, texts):
        self.calls.append(len(texts))
        return self.inner.embed(texts)


def _populate(repo, n: int) -> None:
    rng = random.Random(3)
    open_store(repo, project=10**6).add_many(
        [{"subject": f"{random_word(rng, 6)} {random_word(rng, 5)} {i}",
          "body": " ".join(random_word(rng, 5) for _ in range(8))} for i in range(n)])
    shutil.rmtree(Path(os.environ["NEO_HOME"]) / "cache" / "vectors", ignore_errors=True)   # nothing embedded yet


def test_the_first_recall_of_a_store_embeds_in_batches_and_keeps_no_decoded_facts(repo_with_commit):
    from neo_git.store import FactStore

    _populate(repo_with_commit, 700)
    query = open_store(repo_with_commit).list()[123].body   # and the parse cache exists, as for any store used
    shutil.rmtree(Path(os.environ["NEO_HOME"]) / "cache" / "vectors", ignore_errors=True)
    counting = CountingEmbedder()
    first = FactStore.open(repo_with_commit, embedder=counting)
    got = first.recall(query)
    assert sum(counting.calls) >= 700 and max(counting.calls) <= batches.CALL, counting.calls
    assert first._table().decoded < 100, first._table().decoded   # of 700: what recall returned and read
    again = FactStore.open(repo_with_commit, embedder=CountingEmbedder())
    expected = again.recall(query)
    assert got.valid_facts and [f.id for f in got.valid_facts] == [f.id for f in expected.valid_facts]
    assert got.scores == expected.scores
    assert sum(again.embedder.calls) <= 1   # the query at most: every fact's vector was stored


def test_progress_is_shown_on_a_terminal_and_erased(tmp_path, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(batches, "DELAY_SECONDS", 0.0)
    monkeypatch.setattr(batches, "REFRESH_SECONDS", 0.0)
    texts = [f"text number {i} about {i % 7}" for i in range(600)]
    seen: list[int] = []
    stream = Terminal()
    cache = VectorCache(tmp_path / "vectors")
    keys = [bytes([i % 256, i // 256]) * 16 for i in range(600)]
    batches.embed_in_batches(cache, HashEmbedder(), keys, texts.__getitem__,
                             lambda start, vectors: seen.append(start), batch=256, stream=stream)
    assert seen == [0, 256, 512]
    shown = stream.getvalue()
    assert "embedding facts: 32/600" in shown and "embedding facts: 600/600" in shown
    assert shown.endswith("\r")                      # the line is erased at the end
    quiet = io.StringIO()                            # not a terminal: nothing drawn
    batches.embed_in_batches(cache, HashEmbedder(), keys, texts.__getitem__, lambda *a: None, stream=quiet)
    assert quiet.getvalue() == ""


def test_calls_take_fewer_texts_the_longer_they_are():
    short = ["a short fact about retries"] * 100
    assert [last - first for first, last in batches.calls(short)] == [32, 32, 32, 4]
    long = ["word " * 250] * 20                       # ~300 tokens each: past 256, a few per call
    sizes = [last - first for first, last in batches.calls(long)]
    assert sum(sizes) == 20 and max(sizes) <= 8
    mixed = ["x"] * 10 + ["word " * 400] + ["x"] * 10
    spans = batches.calls(mixed)
    assert spans[0] == (0, 10) and spans[-1][1] == 21
    assert all(last - first <= 2 for first, last in spans if first <= 10 < last)   # the long one nearly alone


def test_a_first_recall_holds_neither_every_vector_nor_a_matrix_of_them(repo_with_commit, monkeypatch):
    """Past `REMEMBER_AT` texts the vector cache keeps none of what it stored, and recall's family
    relation (every ranked fact's cosine with the best one) is read from the file a block at a
    time: nothing asks for the vectors of more than a handful of facts at once."""
    from neo_git.store import FactStore, table_vectors

    _populate(repo_with_commit, 700)
    query = open_store(repo_with_commit).list()[123].body
    shutil.rmtree(Path(os.environ["NEO_HOME"]) / "cache" / "vectors", ignore_errors=True)
    monkeypatch.setattr(batches, "REMEMBER_AT", 100)
    monkeypatch.setattr(table_vectors, "KEEP_EMBEDDED", 100)
    asked: list[int] = []
    read = table_vectors.TableVectors.__getitem__

    def counting_read(self, positions):
        out = read(self, positions)
        asked.append(len(out))
        return out

    monkeypatch.setattr(table_vectors.TableVectors, "__getitem__", counting_read)
    first = FactStore.open(repo_with_commit)
    got = first.recall(query)
    assert got.decision is not None and got.decision.known   # the family relation was computed
    kept = sum(len(block) for shelf in first.vector_cache._shelves.values() for block in shelf._blocks)
    assert kept < 100, kept
    assert asked and max(asked) < 100, asked
    expected = FactStore.open(repo_with_commit).recall(query)
    assert [f.id for f in got.valid_facts] == [f.id for f in expected.valid_facts]
    assert got.scores == expected.scores and got.relevance == expected.relevance
