"""`git neo model [status|pull] [NAME] [--json]`: which embedder is used, and fetching the neural one."""
from __future__ import annotations

import json
import sys

from neo_git.errors import NeoError


def cmd_model(args) -> int:
    """Show the embedder status, or download a fastembed model."""
    if args.action == "pull":
        return _pull(args)
    return _status(args)


def model_status(name: str | None = None) -> dict:
    """What `git neo model status` reports, as a dict (no network, no model loading)."""
    from neo_git import embed
    from neo_git.embed import fastembed_model as fm
    from neo_git.embed.cache import VectorCache
    from neo_git.embed.hashing import DEFAULT_DIM, DEFAULT_SUPERSEDE_THRESHOLD, VERSION

    cache = VectorCache()
    configured = embed.configured_name()
    auto_name, auto_reason = embed.auto_choice()
    model = _model_name(name) or fm.DEFAULT_MODEL
    active = auto_name if configured in ("", "auto") else configured
    try:
        active_id, problem = embed.get_embedder(active).id, None
    except NeoError as exc:  # e.g. a misspelt neo.embedder, or fastembed without its model
        active_id, problem = None, {"message": exc.message, "hint": exc.hint}
    return {
        "configured": configured,
        "source": _config_source(),
        "active": active,
        "active_id": active_id,
        "problem": problem,
        "auto": {"picks": auto_name, "reason": auto_reason},
        "registry": sorted(embed.EMBEDDERS),
        "hash": {
            "id": f"hash-v{VERSION}-{DEFAULT_DIM}",
            "dim": DEFAULT_DIM,
            "supersede_threshold": DEFAULT_SUPERSEDE_THRESHOLD,
        },
        "fastembed": {
            "installed": fm.package_available(),
            "model": model,
            "model_cached": fm.model_cached(model),
            "models_dir": str(fm.models_dir()),
            "supersede_threshold": fm.SUPERSEDE_THRESHOLD,
        },
        "vector_cache": {"path": str(cache.root), "embedders": cache.summary()},
    }


def _model_name(name: str | None) -> str | None:
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


def _config_source() -> str:
    import os

    from neo_git.embed import ENV_VAR, _git_config_get, CONFIG_KEY

    if os.environ.get(ENV_VAR, "").strip():
        return f"${ENV_VAR}"
    if _git_config_get(CONFIG_KEY):
        return f"git config {CONFIG_KEY}"
    return "default"


def _status(args) -> int:
    status = model_status(args.name)
    if args.json:
        print(json.dumps(status, indent=2, sort_keys=True))
        return 0
    fe = status["fastembed"]
    print(f"embedder:   {status['active_id'] or status['active']}  "
          f"(configured: {status['configured']}, from {status['source']})")
    print(f"auto picks: {status['auto']['picks']} — {status['auto']['reason']}")
    print(f"hash:       {status['hash']['id']}, supersede threshold {status['hash']['supersede_threshold']}")
    print(f"fastembed:  {'installed' if fe['installed'] else 'not installed'}; model {fe['model']} "
          f"{'is cached' if fe['model_cached'] else 'is not cached'} in {fe['models_dir']}")
    cached = status["vector_cache"]["embedders"]
    counts = ", ".join(f"{name}: {info['rows']} rows" for name, info in cached.items()) or "empty"
    print(f"vectors:    {status['vector_cache']['path']} ({counts})")
    if status["problem"]:
        print(f"warning: {status['problem']['message']}", file=sys.stderr)
        if status["problem"]["hint"]:
            print(f"hint: {status['problem']['hint']}", file=sys.stderr)
    elif not fe["installed"]:
        print("hint: pip install 'git-neo[fastembed]' and `git neo model pull` for neural embeddings", file=sys.stderr)
    elif not fe["model_cached"]:
        print("hint: `git neo model pull` downloads the model once", file=sys.stderr)
    return 0


def _pull(args) -> int:
    from neo_git.embed import fastembed_model as fm

    model = _model_name(args.name) or fm.DEFAULT_MODEL
    if fm.model_cached(model):
        message = f"{model} is already in {fm.models_dir()}"
    else:
        print(f"downloading {model} into {fm.models_dir()} …", file=sys.stderr)
        fm.pull(model)
        message = f"downloaded {model} into {fm.models_dir()}"
    if args.json:
        print(json.dumps({"model": model, "models_dir": str(fm.models_dir()), "cached": True}))
    else:
        print(message)
    return 0
