"""The embedders: hash embedder behaviour, registry and default choice, fastembed's offline paths, `git neo model`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from neo_git import embed
from neo_git.cli import main
from neo_git.embed import fastembed_model as fm
from neo_git.embed.hashing import HashEmbedder, split_identifier, stem, tokens
from neo_git.errors import NeoError
from tests.helpers.git import git

ROOT = Path(__file__).resolve().parent.parent
HTTP_10 = "HTTP client\nWe use httpx with a 10 s timeout for all outbound calls."
HTTP_30 = "HTTP client\nAll outbound HTTP goes through httpx, timeout 30 s."
NO_NETWORK = "No network calls in hooks\nPost-commit work must never touch the network."


def cos(embedder, a: str, b: str) -> float:
    v = embedder.embed([a, b])
    return float(v[0] @ v[1])


@pytest.fixture
def hasher() -> HashEmbedder:
    return HashEmbedder()


# --- hash embedder ------------------------------------------------------------


def test_vectors_are_unit_float32_rows(hasher):
    v = hasher.embed(["alpha beta", "parse_config reads the YAML file", "x"])
    assert v.shape == (3, hasher.dim)
    assert v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_empty_and_stopword_only_text_give_a_zero_row(hasher):
    v = hasher.embed(["", "   ", "the and of", "real words"])
    assert not v[:3].any()
    assert np.linalg.norm(v[3]) == pytest.approx(1.0, abs=1e-5)
    assert hasher.embed([]).shape == (0, hasher.dim)


def test_a_single_string_is_refused(hasher):
    with pytest.raises(TypeError):
        hasher.embed("one string")


def test_same_vector_in_another_process_with_another_hash_seed(hasher):
    texts = ["HTTP client\nUse httpx with a 10 s timeout.", "parseConfigFile in src/neo_git/cli.py", "Größe 🚀 日本語"]
    code = (
        "import sys, json; from neo_git.embed.hashing import HashEmbedder;"
        "texts = json.loads(sys.stdin.read()); sys.stdout.buffer.write(HashEmbedder().embed(texts).tobytes())"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(texts).encode(), capture_output=True, timeout=60,
        cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": "12345"}, check=True,
    )
    other = np.frombuffer(proc.stdout, dtype=np.float32).reshape(len(texts), hasher.dim)
    assert np.array_equal(other, hasher.embed(texts))


def test_identifier_spellings_meet():
    assert split_identifier("parseHTTPConfig_v2") == ["parse", "http", "config", "v", "2"]
    assert split_identifier("neo_git.embed.hashing") == ["neo", "git", "embed", "hashing"]
    assert split_identifier("kebab-case-name") == ["kebab", "case", "name"]
    hasher = HashEmbedder()
    forms = ["parseConfigFile", "parse_config_file", "parse config file", "ParseConfigFile", "parse-config-file"]
    v = hasher.embed(forms)
    sims = v @ v.T
    assert sims.min() > 0.75, sims
    # ...and the identifier still matters: an unrelated identifier is far away.
    assert cos(hasher, "parseConfigFile", "renderHtmlTemplate") < 0.2


def test_light_stemming_joins_word_forms():
    assert stem("cache") == stem("caches") == stem("caching") == stem("cached")
    assert stem("retries") == "retry"
    assert stem("stopped") == "stop"
    assert stem("class") == "class"  # not a plural
    assert tokens("The caches were caching") == [stem("cache")] * 2


def test_numbers_are_features(hasher):
    assert cos(hasher, "timeout 10 s", "timeout 30 s") < cos(hasher, "timeout 10 s", "timeout 10 s") - 0.1


def test_the_brief_paraphrase_supersedes_and_the_unrelated_fact_does_not(hasher):
    t = hasher.supersede_threshold
    assert cos(hasher, HTTP_10, HTTP_30) >= t
    assert cos(hasher, NO_NETWORK, HTTP_30) < t
    assert cos(hasher, NO_NETWORK, HTTP_10) < t


@pytest.mark.parametrize("old, new", [
    ("Database migrations\nRun alembic migrations before deploying the API.",
     "Database migrations\nAlways run the alembic migration before a deploy of the API."),
    ("Logging\nUse structlog for all logging in services.",
     "Logging\nAll services log through structlog."),
    ("Retry policy\nRetry failed requests 3 times with exponential backoff.",
     "Retry policy\nFailed requests are retried 5 times with exponential backoff."),
])
def test_restated_facts_supersede(hasher, old, new):
    assert cos(hasher, old, new) >= hasher.supersede_threshold


@pytest.mark.parametrize("a, b", [
    ("Database migrations\nRun alembic migrations before deploying the API.",
     "Frontend build\nThe React app is bundled with Vite."),
    ("Logging\nUse structlog for all logging in services.",
     "Secrets\nNever commit .env files; secrets come from Vault."),
    ("Testing\nTests use pytest with fixtures in conftest.py.",
     "Testing\nNo test may open a network connection."),
])
def test_different_facts_stay_apart(hasher, a, b):
    assert cos(hasher, a, b) < hasher.supersede_threshold


def test_non_ascii_text(hasher):
    v = hasher.embed(["Größe der Datei prüfen", "größe der datei prüfen", "日本語のテキスト", "emoji 🚀 only", "\ud800 lone"])
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert float(v[0] @ v[1]) > 0.99  # case folding works beyond ASCII
    assert float(v[0] @ v[2]) < 0.3


def test_embedding_thousands_of_facts_is_fast(hasher):
    texts = [f"Fact {i}\nService{i % 50} calls parse_config_{i % 7} with a {i % 30} s timeout and retries."
             for i in range(5000)]
    started = time.process_time()   # CPU time: other processes on a loaded machine do not count
    v = hasher.embed(texts)
    elapsed = time.process_time() - started
    assert v.shape == (5000, hasher.dim)
    assert elapsed < 3.0  # ~0.2 s on a dev box


# --- registry and default choice ---------------------------------------------------------


def test_registry_names_and_instances():
    assert set(embed.EMBEDDERS) == {"hash", "fastembed"}
    e = embed.get_embedder("hash")
    assert isinstance(e, HashEmbedder) and isinstance(e, embed.Embedder)
    assert embed.get_embedder(e) is e
    assert e.id == "hash-v1-512"


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(NeoError) as info:
        embed.get_embedder("word2vec")
    assert "hash" in info.value.message and "fastembed" in info.value.message and "auto" in info.value.message
    with pytest.raises(NeoError):
        embed.get_embedder("hash:big")


def test_auto_picks_hash_when_fastembed_is_absent(monkeypatch):
    monkeypatch.setattr(fm, "package_available", lambda: False)
    assert embed.auto_choice() == ("hash", "fastembed is not installed")
    assert isinstance(embed.get_embedder(), HashEmbedder)
    assert isinstance(embed.get_embedder("auto"), HashEmbedder)


def test_auto_picks_hash_when_the_model_is_not_cached(monkeypatch):
    monkeypatch.setattr(fm, "package_available", lambda: True)
    name, reason = embed.auto_choice()
    assert name == "hash" and "not in" in reason


def test_auto_picks_fastembed_when_installed_and_cached(monkeypatch, tmp_path):
    monkeypatch.setattr(fm, "package_available", lambda: True)
    snapshot = fm.models_dir() / "models--jinaai--jina-embeddings-v2-base-code" / "snapshots" / "abc" / "onnx"
    snapshot.mkdir(parents=True)
    (snapshot / "model.onnx").write_bytes(b"not really a model")
    assert embed.auto_choice()[0] == "fastembed:jinaai/jina-embeddings-v2-base-code"


def test_env_and_git_config_choose_the_embedder(monkeypatch, git_repo):
    monkeypatch.chdir(git_repo)
    assert embed.configured_name() == "auto"
    git(git_repo, "config", "neo.embedder", "hash")
    assert embed.configured_name() == "hash"
    import pygit2

    assert embed.configured_name(repo=pygit2.Repository(str(git_repo))) == "hash"
    git(git_repo, "config", "neo.embedder", "nonsense")
    with pytest.raises(NeoError):
        embed.get_embedder()
    monkeypatch.setenv("NEO_EMBEDDER", "hash")  # the environment wins over git config
    assert isinstance(embed.get_embedder(), HashEmbedder)


def test_importing_the_package_loads_neither_numpy_nor_fastembed():
    code = "import sys, neo_git.embed; print('numpy' in sys.modules, 'fastembed' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT, check=True)
    assert out.stdout.split() == ["False", "False"]


# --- fastembed -------------------------------------------------------------------------


def test_fastembed_absent_gives_install_hint(monkeypatch):
    monkeypatch.setattr(fm, "package_available", lambda: False)
    with pytest.raises(NeoError) as info:
        embed.get_embedder("fastembed")
    assert " -m pip install " in info.value.hint and "[fastembed]'`" in info.value.hint   # from the clone it came from


def test_fastembed_model_not_cached_fails_fast_with_pull_hint(monkeypatch):
    monkeypatch.setattr(fm, "package_available", lambda: True)
    started = time.perf_counter()
    with pytest.raises(NeoError) as info:
        embed.get_embedder("fastembed:jinaai/jina-embeddings-v2-base-code")
    assert time.perf_counter() - started < 10.0   # no download attempt (retries take ~40 s); room for a loaded machine
    assert "git neo model pull" in info.value.hint


@pytest.mark.skipif(not fm.package_available(), reason="fastembed is not installed")
def test_fastembed_real_loader_fails_fast_offline_on_a_broken_cache():
    # A cache entry that looks right but holds no usable model: the real fastembed
    # loader runs with local_files_only and must fail in seconds, not retry downloads.
    snapshot = fm.models_dir() / "models--jinaai--jina-embeddings-v2-base-code" / "snapshots" / "abc" / "onnx"
    snapshot.mkdir(parents=True)
    (snapshot / "model.onnx").write_bytes(b"not really a model")
    embedder = embed.get_embedder("fastembed")
    assert embedder.id == "fastembed:jinaai/jina-embeddings-v2-base-code"
    assert embedder.dim == 768 and embedder.supersede_threshold == 0.85
    assert not embedder.embed([""]).any()  # empty text needs no model
    import fastembed  # noqa: F401 - imported before the clock starts: only the load attempt is timed

    started = time.perf_counter()
    with pytest.raises(NeoError) as info:
        embedder.embed(["hello"])
    # Retrying downloads took ~40 s; a local-only failure takes well under a second on an idle
    # machine. The bound leaves room for a loaded CI box without letting a retry loop pass.
    assert time.perf_counter() - started < 15.0
    assert "model pull" in info.value.hint


def make_tiny_model(models_dir: Path, repo: str = fm.DEFAULT_MODEL, dim: int = 768) -> Path:
    """A few-kilobyte stand-in for a fastembed model, in the Hugging Face cache layout:
    a word-level tokenizer and an ONNX graph that looks each token up in a random table.
    Real weights cannot be downloaded here; this runs fastembed's real loading code."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    words = ["[PAD]", "[UNK]", *"http client httpx timeout outbound network hooks never touch calls".split()]
    org, name = repo.split("/")
    revision = "0" * 40
    repo_dir = models_dir / f"models--{org}--{name}"
    snapshot = repo_dir / "snapshots" / revision
    (snapshot / "onnx").mkdir(parents=True)
    (repo_dir / "refs").mkdir()
    (repo_dir / "refs" / "main").write_text(revision)
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(snapshot / "tokenizer.json"))
    (snapshot / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 512, "pad_token": "[PAD]"}))
    (snapshot / "special_tokens_map.json").write_text(json.dumps({"pad_token": "[PAD]", "unk_token": "[UNK]"}))
    (snapshot / "config.json").write_text(json.dumps({"pad_token_id": 0}))
    table = np.random.default_rng(0).normal(size=(len(words), dim)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)], "tiny",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "s"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["b", "s", dim])],
        [numpy_helper.from_array(table, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(snapshot / "onnx" / "model.onnx"))
    return snapshot


@pytest.mark.skipif(not fm.package_available(), reason="fastembed is not installed")
def test_fastembed_loads_a_cached_model_offline_and_auto_picks_it():
    make_tiny_model(fm.models_dir())
    assert embed.auto_choice()[0] == "fastembed:jinaai/jina-embeddings-v2-base-code"
    embedder = embed.get_embedder()
    assert embedder.id == "fastembed:jinaai/jina-embeddings-v2-base-code"
    v = embedder.embed(["HTTP client httpx timeout", "http client HTTPX timeout", "never touch network", ""])
    assert v.shape == (4, 768) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v[:3], axis=1), 1.0, atol=1e-5) and not v[3].any()
    assert float(v[0] @ v[1]) > 0.99 and float(v[0] @ v[2]) < 0.5
    from neo_git.embed.cache import VectorCache

    cached = VectorCache().vectors(embedder, ["HTTP client httpx timeout"])
    assert np.allclose(cached[0], v[0])


@pytest.mark.skipif(not fm.package_available(), reason="fastembed is not installed")
def test_fastembed_loader_stays_offline_without_hf_hub_offline(monkeypatch):
    # The user did not set HF_HUB_OFFLINE: loading must still not touch the network
    # (conftest makes any outbound connection raise) and must fail fast.
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(fm, "_set_offline_ourselves", False)  # restored with the variable
    snapshot = fm.models_dir() / "models--jinaai--jina-embeddings-v2-base-code" / "snapshots" / "abc" / "onnx"
    snapshot.mkdir(parents=True)
    (snapshot / "model.onnx").write_bytes(b"")
    started = time.perf_counter()
    with pytest.raises(NeoError):
        embed.get_embedder("fastembed").embed(["hello"])
    assert time.perf_counter() - started < 15.0   # as above: retrying downloads took ~40 s


@pytest.mark.skipif(not fm.package_available(), reason="fastembed is not installed")
def test_fastembed_pull_respects_hf_hub_offline(capsys):
    assert os.environ.get("HF_HUB_OFFLINE") == "1"  # set by conftest
    assert main(["model", "pull"]) == 1
    err = capsys.readouterr().err
    assert "fatal: cannot download" in err and "hint: unset HF_HUB_OFFLINE" in err


@pytest.mark.skipif(not fm.package_available(), reason="fastembed is not installed")
def test_fastembed_pull_unknown_model(monkeypatch, capsys):
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert main(["model", "pull", "fastembed:no/such-model"]) == 1
    assert "does not know the model 'no/such-model'" in capsys.readouterr().err


# --- git neo model ---------------------------------------------------------------------


def test_model_status_json(capsys, monkeypatch):
    monkeypatch.setattr(fm, "package_available", lambda: False)
    assert main(["model", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["active"] == "hash" and status["active_id"] == "hash-v1-512" and status["problem"] is None
    assert status["auto"]["picks"] == "hash"
    assert status["auto"]["reason"] == "fastembed is not installed"
    assert status["fastembed"]["installed"] is False
    assert status["fastembed"]["model_cached"] is False
    assert status["fastembed"]["models_dir"] == str(Path(os.environ["NEO_HOME"]) / "models")
    assert status["hash"]["supersede_threshold"] == HashEmbedder().supersede_threshold
    assert status["registry"] == ["fastembed", "hash"]
    assert status["vector_cache"] == {"path": str(Path(os.environ["NEO_HOME"]) / "cache" / "vectors"), "embedders": {}}
    from neo_git.embed.cache import VectorCache

    VectorCache().vectors(HashEmbedder(), ["one fact", "another fact"])
    assert main(["model", "status", "--json"]) == 0
    cached = json.loads(capsys.readouterr().out)["vector_cache"]["embedders"]
    assert cached["hash-v1-512"]["rows"] == 2 and cached["hash-v1-512"]["dim"] == 512


def test_model_status_shows_the_long_text_threshold_of_a_calibrated_model(monkeypatch):
    """`model status --json` reports the cosine from which long texts are compared
    (`long_possible_threshold`): the calibrated value for MiniLM, None for a model without one."""
    from neo_git.embed.status import fastembed_status

    minilm = "fastembed:sentence-transformers/all-MiniLM-L6-v2:int8"
    monkeypatch.setattr(fm, "embedder_id", lambda model, cache_dir=None: minilm)
    status = fastembed_status("sentence-transformers/all-MiniLM-L6-v2")
    assert status["long_possible_threshold"] == fm.CALIBRATIONS[minilm]["long_possible"]
    assert status["possible_threshold"] < status["long_possible_threshold"] < status["supersede_threshold"]
    monkeypatch.setattr(fm, "embedder_id", lambda model, cache_dir=None: "fastembed:BAAI/bge-small-en-v1.5")
    assert fastembed_status("BAAI/bge-small-en-v1.5")["long_possible_threshold"] is None


def test_model_status_text_and_configured(capsys, monkeypatch):
    monkeypatch.setenv("NEO_EMBEDDER", "hash")
    assert main(["model"]) == 0
    out = capsys.readouterr().out
    assert "embedder:   hash-v1-512" in out and "$NEO_EMBEDDER" in out


def test_model_status_flags_a_misconfigured_embedder(capsys, monkeypatch):
    monkeypatch.setenv("NEO_EMBEDDER", "word2vec")
    assert main(["model", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["active_id"] is None and "unknown embedder 'word2vec'" in status["problem"]["message"]
    assert main(["model"]) == 0
    assert "warning: unknown embedder 'word2vec'" in capsys.readouterr().err


def test_model_pull_without_fastembed(capsys, monkeypatch):
    monkeypatch.setattr(fm, "package_available", lambda: False)
    assert main(["model", "pull"]) == 1
    err = capsys.readouterr().err
    assert "fatal: the fastembed package is not installed" in err
    assert "hint: install it: `" in err and " -m pip install " in err and "[fastembed]'`" in err   # from where it came


def test_model_pull_hash_is_a_usage_mistake(capsys):
    assert main(["model", "pull", "hash"]) == 1
    assert "nothing to download" in capsys.readouterr().err
