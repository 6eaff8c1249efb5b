"""What `git neo model status` reports: the embedder in use, why, and the caches (no network,
no model loading)."""
from __future__ import annotations

from neo_git.errors import NeoError


def model_status(name: str | None = None) -> dict:
    """What `git neo model status` reports, as a dict (no network, no model loading)."""
    from neo_git import embed
    from neo_git.embed import fastembed_model as fm
    from neo_git.embed.cache import VectorCache
    from neo_git.embed.hashing import DEFAULT_DIM, DEFAULT_SUPERSEDE_THRESHOLD, RELEVANCE_FLOOR, VERSION

    cache = VectorCache()
    configured = embed.configured_name()
    auto_name, auto_reason = embed.auto_choice()
    active = auto_name if configured in ("", "auto") else configured
    # The model shown: the one asked about, else the one in use, else the default.
    in_use = model_name(active) if active.strip().startswith("fastembed:") else None
    model = model_name(name) or in_use or fm.DEFAULT_MODEL
    try:
        active_id, problem = embed.get_embedder(active).id, None
    except NeoError as exc:  # e.g. a misspelt neo.embedder, or fastembed without its model
        active_id, problem = None, {"message": exc.message, "hint": exc.hint}
    return {
        "configured": configured,
        "source": config_source(),
        "active": active,
        "active_id": active_id,
        "problem": problem,
        "auto": {"picks": auto_name, "reason": auto_reason},
        "registry": sorted(embed.EMBEDDERS),
        "hash": {
            "id": f"hash-v{VERSION}-{DEFAULT_DIM}",
            "dim": DEFAULT_DIM,
            "supersede_threshold": DEFAULT_SUPERSEDE_THRESHOLD,
            "relevance_floor": RELEVANCE_FLOOR,
        },
        "fastembed": fastembed_status(model),
        "vector_cache": {"path": str(cache.root), "embedders": cache.summary()},
    }


def fastembed_status(model: str) -> dict:
    """The fastembed part of `model_status`: is *model* there, which id it loads as, its thresholds
    (calibrated ones when `fastembed_model.CALIBRATIONS` has the id), and the package-index build."""
    from neo_git.embed import fastembed_model as fm, pypi_model

    loaded_as = fm.embedder_id(model)
    calibrated = fm.CALIBRATIONS.get(loaded_as or "")
    built = pypi_model.folder(fm.models_dir())
    return {
        "installed": fm.package_available(),
        "model": model,
        "model_cached": fm.model_cached(model),
        "id": loaded_as,
        "models_dir": str(fm.models_dir()),
        "supersede_threshold": calibrated["certain"] if calibrated else fm.SUPERSEDE_THRESHOLD,
        "possible_threshold": calibrated["possible"] if calibrated else fm.SUPERSEDE_THRESHOLD,
        "long_possible_threshold": calibrated.get("long_possible") if calibrated else None,
        "relevance_floor": calibrated["floor"] if calibrated
        else fm.RELEVANCE_FLOORS.get(model.partition(":")[0], fm.DEFAULT_RELEVANCE_FLOOR),
        "relevance_floor_calibrated": calibrated is not None,
        "from_pypi": {"model": f"{pypi_model.MODEL}:{pypi_model.VARIANT}", "path": str(built),
                      "built": pypi_model.is_built(built)},
    }


def model_name(name: str | None) -> str | None:
    """`fastembed:org/model` or `org/model` → `org/model`; None stays None."""
    if not name:
        return None
    base, sep, model = name.partition(":")
    if sep and base == "fastembed":
        return model or None
    if base == "hash":
        raise NeoError("the hash embedder is built in and has nothing to download",
                       "pull a fastembed model, e.g. `git neo model pull jinaai/jina-embeddings-v2-base-code`")
    return name


def config_source() -> str:
    import os

    from neo_git.config import neo_config
    from neo_git.embed import CONFIG_KEY, ENV_VAR

    if os.environ.get(ENV_VAR, "").strip():
        return f"${ENV_VAR}"
    if neo_config(CONFIG_KEY):
        return f"git config {CONFIG_KEY}"
    return "default"
