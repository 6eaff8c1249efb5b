"""The on-disk vector cache: round trips, no re-embedding, concurrent appends, torn tails."""
from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import numpy as np
import pytest

from neo_git.embed import cache as cache_module
from neo_git.embed.cache import DATA_FILE, VectorCache
from neo_git.embed.hashing import HashEmbedder
from neo_git.embed.vecfile import HEADER_BYTES, record_size, text_key


class CountingEmbedder:
    """Wraps an embedder and records every text it is asked to embed."""

    def __init__(self, inner=None) -> None:
        self.inner = inner or HashEmbedder()
        self.id = self.inner.id
        self.dim = self.inner.dim
        self.supersede_threshold = self.inner.supersede_threshold
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    @property
    def embedded(self) -> list[str]:
        return [t for call in self.calls for t in call]


TEXTS = [f"Fact {i}\nService{i} calls parse_config with a {i} s timeout." for i in range(50)]


def test_default_root_is_under_neo_home():
    assert VectorCache().root == Path(os.environ["NEO_HOME"]) / "cache" / "vectors"


def test_round_trip_and_cold_reload(tmp_path):
    plain = HashEmbedder()
    counting = CountingEmbedder()
    first = VectorCache(tmp_path).vectors(counting, TEXTS)
    assert first.shape == (50, plain.dim) and first.dtype == np.float32
    assert np.array_equal(first, plain.embed(TEXTS))
    # A new process (a new cache object) reads the rows from disk and embeds nothing.
    cold = CountingEmbedder()
    again = VectorCache(tmp_path).vectors(cold, list(reversed(TEXTS)))
    assert cold.calls == []
    assert np.array_equal(again, first[::-1])


def test_only_missing_texts_are_embedded_once_per_batch(tmp_path):
    cache = VectorCache(tmp_path)
    counting = CountingEmbedder()
    cache.vectors(counting, TEXTS[:10])
    counting.calls.clear()
    out = cache.vectors(counting, TEXTS[5:15] + TEXTS[12:15])  # 5 cached, 5 new, 3 repeated
    assert counting.calls == [TEXTS[10:15]]  # one batch, each new text once
    assert np.array_equal(out, HashEmbedder().embed(TEXTS[5:15] + TEXTS[12:15]))
    assert cache.vectors(counting, []).shape == (0, counting.dim)
    assert _rows(tmp_path / _only_folder(tmp_path), counting.dim) == 15


def test_results_are_copies(tmp_path):
    cache = VectorCache(tmp_path)
    embedder = HashEmbedder()
    out = cache.vectors(embedder, TEXTS[:3])
    out[:] = 0
    assert cache.vectors(embedder, TEXTS[:3]).any()


def _only_folder(root: Path) -> str:
    (folder,) = [p.name for p in root.iterdir()]
    return folder


def _rows(folder: Path, dim: int) -> float:
    """Records in the data file (a fraction means a torn tail)."""
    return ((folder / DATA_FILE).stat().st_size - HEADER_BYTES) / record_size(dim)


def _append_worker(args):
    root, worker, count = args
    cache = VectorCache(Path(root))
    embedder = HashEmbedder()
    texts = [f"worker {worker} fact {i}: handler_{worker}_{i} retries {i} times" for i in range(count)]
    # Many small appends, so the six processes interleave on the lock.
    for start in range(0, count, 10):
        cache.vectors(embedder, texts[start:start + 10])
    return texts


def test_concurrent_appends_from_six_processes(tmp_path):
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    with ctx.Pool(6) as pool:
        results = pool.map(_append_worker, [(str(tmp_path), w, 200) for w in range(6)])
    texts = [t for worker_texts in results for t in worker_texts]
    assert len(set(texts)) == 1200
    folder = tmp_path / _only_folder(tmp_path)
    dim = HashEmbedder().dim
    assert _rows(folder, dim) == 1200
    counting = CountingEmbedder()
    out = VectorCache(tmp_path).vectors(counting, texts)
    assert counting.calls == []  # all 1,200 were cached
    assert np.array_equal(out, HashEmbedder().embed(texts))


def test_torn_tail_is_ignored_on_load_and_cut_on_the_next_append(tmp_path):
    embedder = HashEmbedder()
    VectorCache(tmp_path).vectors(embedder, TEXTS[:20])
    folder = tmp_path / _only_folder(tmp_path)
    # A writer killed mid-append: a key and part of its vector.
    with open(folder / DATA_FILE, "ab") as fh:
        fh.write(text_key(TEXTS[20]) + b"\x01" * (embedder.dim * 2 + 3))
    counting = CountingEmbedder()
    cache = VectorCache(tmp_path)
    assert np.array_equal(cache.vectors(counting, TEXTS[:20]), embedder.embed(TEXTS[:20]))
    assert counting.calls == []
    out = cache.vectors(counting, TEXTS[:30])
    assert counting.calls == [TEXTS[20:30]]  # the torn record did not count as cached
    assert np.array_equal(out, embedder.embed(TEXTS[:30]))
    assert _rows(folder, embedder.dim) == 30
    cold = CountingEmbedder()
    assert np.array_equal(VectorCache(tmp_path).vectors(cold, TEXTS[:30]), out)
    assert cold.calls == []


def test_a_damaged_header_is_replaced_not_misread(tmp_path):
    embedder = HashEmbedder()
    VectorCache(tmp_path).vectors(embedder, TEXTS[:5])
    folder = tmp_path / _only_folder(tmp_path)
    (folder / DATA_FILE).write_bytes(b"garbage" * 100)
    counting = CountingEmbedder()
    out = VectorCache(tmp_path).vectors(counting, TEXTS[:5])
    assert counting.calls == [TEXTS[:5]]
    assert np.array_equal(out, embedder.embed(TEXTS[:5]))
    assert _rows(folder, embedder.dim) == 5


def test_prune_keeps_only_the_given_texts_and_other_readers_notice(tmp_path):
    embedder = HashEmbedder()
    reader = VectorCache(tmp_path)
    reader.vectors(embedder, TEXTS[:10])
    assert VectorCache(tmp_path).prune(embedder, TEXTS[:3]) == 7
    assert _rows(tmp_path / _only_folder(tmp_path), embedder.dim) == 3
    counting = CountingEmbedder()
    out = VectorCache(tmp_path).vectors(counting, TEXTS[:4])
    assert counting.calls == [TEXTS[3:4]]
    assert np.array_equal(out, embedder.embed(TEXTS[:4]))
    # The first cache object read the file before the rewrite; it must not misalign rows.
    again = CountingEmbedder()
    assert np.array_equal(reader.vectors(again, TEXTS[:4]), out)


def test_the_cache_is_cut_back_when_it_passes_its_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "MAX_ROWS", 20)
    embedder = HashEmbedder()
    cache = VectorCache(tmp_path)
    cache.vectors(embedder, TEXTS[:15])
    cache.vectors(embedder, TEXTS[15:25])  # 25 > 20: keep the newest 10, then add 10
    folder = tmp_path / _only_folder(tmp_path)
    assert _rows(folder, embedder.dim) == 20
    counting = CountingEmbedder()
    out = VectorCache(tmp_path).vectors(counting, TEXTS[:25])
    assert counting.calls == [TEXTS[:5]]  # the oldest five were dropped
    assert np.array_equal(out, embedder.embed(TEXTS[:25]))


def test_embedders_do_not_mix(tmp_path):
    small, large = HashEmbedder(dim=64), HashEmbedder(dim=128)
    other_weights = HashEmbedder(dim=64, subject_weight=0.0)
    assert len({small.id, large.id, other_weights.id}) == 3
    cache = VectorCache(tmp_path)
    a = cache.vectors(small, TEXTS[:5])
    b = cache.vectors(large, TEXTS[:5])
    c = cache.vectors(other_weights, TEXTS[:5])
    assert a.shape == (5, 64) and b.shape == (5, 128) and c.shape == (5, 64)
    assert not np.array_equal(a, c)
    assert len(list(tmp_path.iterdir())) == 3  # one folder per embedder id
    fresh = VectorCache(tmp_path)
    assert np.array_equal(fresh.vectors(CountingEmbedder(small), TEXTS[:5]), a)
    assert np.array_equal(fresh.vectors(CountingEmbedder(other_weights), TEXTS[:5]), c)


def test_folder_names_are_safe_for_model_ids(tmp_path):
    cache = VectorCache(tmp_path)
    name = cache.folder("fastembed:jinaai/jina-embeddings-v2-base-code").name
    assert "/" not in name and ":" not in name and name.startswith("fastembed_jinaai_jina-embeddings-v2-base-code-")
    assert cache.folder("a:b") != cache.folder("a_b")


def test_put_stores_known_vectors(tmp_path):
    embedder = CountingEmbedder()
    given = np.random.default_rng(0).normal(size=(3, embedder.dim)).astype(np.float32)
    cache = VectorCache(tmp_path)
    cache.put(embedder.id, TEXTS[:3], given)
    out = VectorCache(tmp_path).vectors(embedder, TEXTS[:3])
    assert embedder.calls == []
    expected = given / np.linalg.norm(given, axis=1, keepdims=True)
    assert np.allclose(out, expected, atol=1e-6)
    # put() never replaces a row that is already cached
    cache.put(embedder.id, TEXTS[:1], -given[:1])
    assert np.allclose(VectorCache(tmp_path).vectors(embedder, TEXTS[:1]), expected[:1], atol=1e-6)


def test_put_rejects_bad_input(tmp_path):
    cache = VectorCache(tmp_path)
    with pytest.raises(ValueError):
        cache.put("hash-v1-512", TEXTS[:2], np.zeros((3, 512)))
    with pytest.raises(ValueError):
        cache.put("hash-v1-512", TEXTS[:1], np.full((1, 512), np.nan))
    assert not any(tmp_path.iterdir())


def test_same_id_with_another_dimension_starts_over(tmp_path):
    cache = VectorCache(tmp_path)
    cache.put("model-x", TEXTS[:2], np.ones((2, 8), dtype=np.float32))
    fresh = VectorCache(tmp_path)
    fresh.put("model-x", TEXTS[:2], np.ones((2, 16), dtype=np.float32))

    class Sixteen:
        id, dim, supersede_threshold = "model-x", 16, 0.9

        def embed(self, texts):
            raise AssertionError("should be cached")

    assert VectorCache(tmp_path).vectors(Sixteen(), TEXTS[:2]).shape == (2, 16)


def test_a_cache_that_cannot_be_written_still_answers(tmp_path, monkeypatch):
    def disk_full(self, keys, vectors, remember=True):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_module._Shelf, "append", disk_full)
    counting = CountingEmbedder()
    out = VectorCache(tmp_path).vectors(counting, TEXTS[:3] + TEXTS[:1])
    assert np.array_equal(out, HashEmbedder().embed(TEXTS[:3] + TEXTS[:1]))
    assert counting.calls == [TEXTS[:3]]


def _flip(folder: Path, dim: int, row: int, offset: int = 40) -> None:
    """Damage one byte inside record *row* (past its key: the checksum no longer matches)."""
    path = folder / DATA_FILE
    raw = bytearray(path.read_bytes())
    raw[HEADER_BYTES + row * record_size(dim) + offset] ^= 0xFF
    path.write_bytes(bytes(raw))


def test_a_reader_keeps_and_checks_only_what_it_asks_for(tmp_path, monkeypatch):
    """The file holds every repository's texts: a process reads their keys, not their vectors."""
    monkeypatch.setattr(cache_module, "SCAN_RECORDS", 7)  # several windows, some with nothing wanted
    embedder = HashEmbedder()
    others = [f"another repository's fact {i}" for i in range(60)]
    VectorCache(tmp_path).vectors(embedder, others[:30] + TEXTS[:10] + others[30:])
    folder = tmp_path / _only_folder(tmp_path)
    _flip(folder, embedder.dim, 3)  # damage in someone else's record: never looked at
    cache = VectorCache(tmp_path)
    counting = CountingEmbedder()
    out = cache.vectors(counting, TEXTS[:10])
    assert counting.calls == [] and np.array_equal(out, embedder.embed(TEXTS[:10]))
    shelf = cache._shelf(embedder.id, embedder.dim)
    assert set(shelf.checked) == {text_key(t) for t in TEXTS[:10]}
    from_key_file = len(shelf.key_rows[1]) if shelf.key_rows is not None else 0
    assert len(shelf.index) + from_key_file == 70  # every key is known
    # Asked later, texts met before (indexed, not kept) are read back by row, one run at a time.
    assert np.array_equal(cache.vectors(counting, others[40:50]), embedder.embed(others[40:50]))
    assert counting.calls == []
    # The damaged record is refused when it is finally asked for, and embedded again.
    assert np.array_equal(cache.vectors(counting, [others[3]]), embedder.embed([others[3]]))
    assert counting.calls == [[others[3]]]


def test_the_newest_record_of_a_text_wins(tmp_path):
    """A damaged record's text is embedded again and appended: the next process uses the new one."""
    embedder = HashEmbedder()
    VectorCache(tmp_path).vectors(embedder, TEXTS[:10])
    folder = tmp_path / _only_folder(tmp_path)
    _flip(folder, embedder.dim, 4)
    first = CountingEmbedder()
    assert np.array_equal(VectorCache(tmp_path).vectors(first, TEXTS[:10]), embedder.embed(TEXTS[:10]))
    assert first.calls == [[TEXTS[4]]] and _rows(folder, embedder.dim) == 11
    second = CountingEmbedder()
    assert np.array_equal(VectorCache(tmp_path).vectors(second, TEXTS[:10]), embedder.embed(TEXTS[:10]))
    assert second.calls == []
    # Asked only after the whole file was indexed for other texts, it is read back by row: the new one.
    third, cache = CountingEmbedder(), VectorCache(tmp_path)
    cache.vectors(third, TEXTS[:2])
    assert np.array_equal(cache.vectors(third, [TEXTS[4]]), embedder.embed([TEXTS[4]]))
    assert third.calls == []


def test_a_text_stored_several_times_is_read_once(tmp_path, monkeypatch):
    """Two processes that embed the same text at once both append it: duplicates are harmless."""
    monkeypatch.setattr(cache_module, "SCAN_RECORDS", 4)
    embedder = HashEmbedder()
    for _ in range(3):  # three "processes", each missing the same texts
        cache = VectorCache(tmp_path)
        cache._shelf(embedder.id, embedder.dim).append([text_key(t) for t in TEXTS[:5]], embedder.embed(TEXTS[:5]))
    folder = tmp_path / _only_folder(tmp_path)
    assert _rows(folder, embedder.dim) == 15
    counting = CountingEmbedder()
    out = VectorCache(tmp_path).vectors(counting, [TEXTS[2]])  # 3 records for 1 wanted key
    assert counting.calls == [] and np.array_equal(out, embedder.embed([TEXTS[2]]))
    assert np.array_equal(VectorCache(tmp_path).vectors(counting, TEXTS[:5]), embedder.embed(TEXTS[:5]))
    assert counting.calls == []


def _spy_scans(monkeypatch) -> list[int]:
    """Rows each `_Shelf._scan` call reads (the records read one by one, not through the key file)."""
    scanned: list[int] = []
    real = cache_module._Shelf._scan

    def scan(self, fh, total, wanted):
        scanned.append(total - self.rows)
        return real(self, fh, total, wanted)

    monkeypatch.setattr(cache_module._Shelf, "_scan", scan)
    return scanned


def test_a_few_keys_are_found_through_the_key_file_not_by_reading_every_record(tmp_path, monkeypatch):
    """Issue 35: the first add of a process read every record of a 50,000-row file (100 MB) to
    find the few hundred vectors of its group."""
    texts = [f"text {i} about parse_config and {i * 7}" for i in range(3000)]
    VectorCache(tmp_path).vectors(CountingEmbedder(), texts)
    scanned = _spy_scans(monkeypatch)
    counting = CountingEmbedder()
    wanted = texts[1000:1010]
    got = VectorCache(tmp_path).vectors(counting, wanted)   # a new process's view
    assert counting.embedded == [] and scanned in ([], [0])
    assert np.array_equal(got, HashEmbedder().embed(wanted))


def test_a_wrong_key_file_costs_a_re_embedding_never_a_wrong_vector(tmp_path):
    texts = [f"text {i} about parse_config and {i * 7}" for i in range(300)]
    VectorCache(tmp_path).vectors(CountingEmbedder(), texts)
    folder = next(p for p in tmp_path.iterdir() if p.is_dir())
    keys_file = folder / cache_module.KEYS_FILE
    data = keys_file.read_bytes()
    header, keys = data[:cache_module.KEYS_HEADER], data[cache_module.KEYS_HEADER:]
    rotated = keys[32:] + keys[:32]                          # every key names its neighbour's record
    keys_file.write_bytes(header + rotated)
    counting = CountingEmbedder()
    wanted = texts[10:20]
    got = VectorCache(tmp_path).vectors(counting, wanted)
    assert np.array_equal(got, HashEmbedder().embed(wanted))
    # A record is taken under its own key only: what the shifted keys hid was embedded again.
    assert counting.embedded and set(counting.embedded) <= set(wanted)
    keys_file.write_bytes(b"NEOKEYS1" + (12345).to_bytes(8, "little") + rotated)   # another file's keys
    counting = CountingEmbedder()
    got = VectorCache(tmp_path).vectors(counting, texts[30:40])
    assert counting.embedded == [] and np.array_equal(got, HashEmbedder().embed(texts[30:40]))
