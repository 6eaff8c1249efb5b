"""Embedders: the `Embedder` protocol, a literal registry, and how the default is chosen.

Importing this package is cheap (no numpy, no fastembed): the CLI imports it
on every command that might embed. The vector cache lives in `cache.py`.

Choosing an embedder (`get_embedder(None)`): ``$NEO_EMBEDDER``, else
``git config neo.embedder``, else "auto" — fastembed when the package is
installed *and* one of its models is already in the local cache (the default
model first, then all-MiniLM-L6-v2, then bge-small), otherwise the built-in
hash embedder. "auto" never touches the network.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from neo_git.embed.protocol import Embedder
from neo_git.errors import NeoError

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.relevance import Noise

__all__ = [
    "EMBEDDERS",
    "Embedder",
    "HashEmbedder",
    "VectorCache",
    "auto_choice",
    "configured_name",
    "family_threshold",
    "get_embedder",
    "noise",
    "relevance_floor",
]

# For an embedder that does not say (a caller's own): cosine says little below this.
DEFAULT_RELEVANCE_FLOOR = 0.3


def relevance_floor(embedder: Embedder) -> float:
    """The cosine from which a fact is relevant to a question under *embedder* (its own
    calibrated `relevance_floor`; DEFAULT_RELEVANCE_FLOOR for an embedder that has none)."""
    value = getattr(embedder, "relevance_floor", None)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return DEFAULT_RELEVANCE_FLOOR
    return float(value)


def noise(embedder: Embedder) -> Noise:
    """How *embedder*'s cosines between a question and facts it is not about scatter (its own
    calibrated `noise_cosine` (mean, sd, spread)); for an embedder that has none, a spread whose bound
    for a few hundred facts lands on its relevance floor (`relevance.Noise`)."""
    from neo_git.relevance import SPREAD, Noise

    value = getattr(embedder, "noise_cosine", None)
    if (isinstance(value, tuple) and len(value) == 3
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v == v for v in value)):
        return Noise(float(value[0]), max(float(value[1]), 0.0), float(value[2]))
    return Noise(0.0, relevance_floor(embedder) / (SPREAD * 3.4))   # √(2 ln 300) ≈ 3.4


def related_threshold(embedder: Embedder) -> float:
    """The cosine from which two facts are related enough to be a possible supersession: the
    embedder's `possible_threshold` (no lower than nothing, no higher than its certain one).
    Recall groups related facts with it (`ranking.newest_in_family`), the write policy proposes
    reviews from it (`store.supersession.Thresholds`)."""
    certain = float(embedder.supersede_threshold)
    return min(float(getattr(embedder, "possible_threshold", certain)), certain)


def long_threshold(embedder: Embedder) -> float | None:
    """The cosine from which two texts longer than a statement are worth a review question
    (`store.supersession.Thresholds.long_possible`): the embedder's calibrated
    `long_possible_threshold`, else None (its `related_threshold` applies)."""
    value = getattr(embedder, "long_possible_threshold", None)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return float(value)


def family_threshold(embedder: Embedder) -> float:
    """The cosine from which recall treats two ranked facts as statements on one matter
    (`ranking.newest_in_family`): the embedder's own calibrated `family_threshold`, else its
    `related_threshold`. Kept apart from the review band: asking a person costs more than
    putting the newer of two related statements first (docs/architecture.md §5)."""
    value = getattr(embedder, "family_threshold", None)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return related_threshold(embedder)
    return float(value)


def _make_hash(model: str | None = None) -> Embedder:
    from neo_git.embed.hashing import HashEmbedder

    if model:
        raise NeoError(f"the hash embedder has no models (got 'hash:{model}')", "use plain 'hash'")
    return HashEmbedder()


_FASTEMBED: dict[tuple, Embedder] = {}   # one loaded model per (model, models folder) in a process


def _make_fastembed(model: str | None = None) -> Embedder:
    from neo_git.embed.fastembed_model import FastEmbedEmbedder, models_dir

    # A loaded ONNX session is ~100 MB and takes about a second: a long-lived process (the MCP
    # server, a benchmark replaying hook calls) opens a store per request and must not load one
    # per request. Keyed by the folder too, so a changed NEO_HOME finds its own model.
    key = (model, str(models_dir()))
    embedder = _FASTEMBED.get(key)
    if embedder is None:
        embedder = _FASTEMBED[key] = FastEmbedEmbedder(model)
    return embedder


# name -> factory(model or None). Keep it a literal dict: `git neo model status`
# and the error for an unknown name list these keys.
EMBEDDERS: dict[str, Callable[[str | None], Embedder]] = {
    "hash": _make_hash,
    "fastembed": _make_fastembed,
}

CONFIG_KEY = "neo.embedder"
ENV_VAR = "NEO_EMBEDDER"


def get_embedder(name: str | Embedder | None = None, *, repo: pygit2.Repository | None = None) -> Embedder:
    """The embedder for *name*: an instance as is, "hash", "fastembed[:<model>]", "auto", or None for the configured one."""
    if name is not None and not isinstance(name, str):
        if isinstance(name, Embedder):
            return name
        raise TypeError(f"get_embedder() wants a name or an Embedder, not {type(name).__name__}")
    if name is None:
        name = configured_name(repo)
    name = name.strip()
    if name in ("", "auto"):
        name = auto_choice()[0]
    base, _, model = name.partition(":")
    factory = EMBEDDERS.get(base.strip().lower())
    if factory is None:
        valid = ", ".join([*EMBEDDERS, "auto"])
        raise NeoError(
            f"unknown embedder '{name}' (valid: {valid})",
            f"set one with `git config --global {CONFIG_KEY} hash` or ${ENV_VAR}; "
            "'fastembed:<model>' picks a fastembed model",
        )
    return factory(model.strip() or None)


def configured_name(repo: pygit2.Repository | None = None) -> str:
    """The embedder name from $NEO_EMBEDDER, else `neo.embedder` (git config, then
    ~/.neo/config.json), else "auto"."""
    from neo_git.config import neo_config

    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return env
    value = neo_config(CONFIG_KEY, "", repo=repo, cast=str)
    return value.strip() or "auto"


def auto_choice() -> tuple[str, str]:
    """(name, reason) of what "auto" picks: the first model of `fastembed_model.AUTO_MODELS`
    already in the local cache (`fastembed:<model>`), else the built-in embedder. Offline,
    loads nothing, and cheap when fastembed is absent."""
    from neo_git.embed import fastembed_model as fm

    if not fm.package_available():
        return "hash", "fastembed is not installed"
    for model in fm.AUTO_MODELS:
        if fm.model_cached(model):
            return f"fastembed:{model}", f"fastembed is installed and {model} is cached in {fm.models_dir()}"
    return "hash", f"fastembed is installed but no model is cached (not in {fm.models_dir()}; `git neo model pull`)"


def __getattr__(name: str):  # lazy re-exports keep `import neo_git.embed` numpy-free
    if name == "HashEmbedder":
        from neo_git.embed.hashing import HashEmbedder

        return HashEmbedder
    if name == "VectorCache":
        from neo_git.embed.cache import VectorCache

        return VectorCache
    raise AttributeError(f"module 'neo_git.embed' has no attribute {name!r}")
