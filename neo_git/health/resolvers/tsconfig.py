"""Lenient reading of tsconfig.json / jsconfig.json: comments, trailing commas, `extends`.

A broken config must never crash a health snapshot: anything unparsable reads as {}.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from neo_git import safejson
from neo_git.health.resolvers import Reader, join, parent_dir, read_text

CONFIG_NAMES = ("tsconfig.json", "jsconfig.json")
MAX_EXTENDS_DEPTH = 8
_COMMENT = re.compile(r'("(?:\\.|[^"\\\n])*")|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA = re.compile(r'("(?:\\.|[^"\\\n])*")|,(?=\s*[}\]])')


class PathConfig(NamedTuple):
    """The parts of a tsconfig that affect module resolution (repository-relative dirs)."""

    base_url: str | None                                   # None when unset
    paths: tuple[tuple[str, tuple[str, ...]], ...]         # pattern -> substitutions
    paths_base: str                                        # dir substitutions are relative to


def parse_jsonc(text: str) -> dict:
    """JSON with // and /* */ comments and trailing commas; {} when still invalid."""
    keep_strings = lambda m: m.group(1) or ""  # noqa: E731 - strings stay, the rest goes
    cleaned = _TRAILING_COMMA.sub(keep_strings, _COMMENT.sub(keep_strings, text))
    try:
        data = safejson.loads(cleaned)
    except (ValueError, RecursionError):  # a hostile tsconfig.json nested 1,000 levels deep
        return {}
    return data if isinstance(data, dict) else {}


def load_path_config(config_path: str, read: Reader) -> PathConfig:
    """baseUrl/paths of one config, following relative `extends` (the child's keys win)."""
    base_url: str | None = None
    paths: dict | None = None
    paths_dir = parent_dir(config_path)
    chain, seen = [config_path], set[str]()
    while chain and len(seen) < MAX_EXTENDS_DEPTH:
        current = chain.pop(0)
        if current in seen:
            continue
        seen.add(current)
        text = read_text(read, current)
        data = parse_jsonc(text) if text is not None else {}
        options = data.get("compilerOptions")
        options = options if isinstance(options, dict) else {}
        here = parent_dir(current)
        if base_url is None and isinstance(options.get("baseUrl"), str):
            base_url = join(here, options["baseUrl"])
        if paths is None and isinstance(options.get("paths"), dict):
            paths, paths_dir = options["paths"], here
        extends = data.get("extends")
        for parent in extends if isinstance(extends, list) else [extends]:
            # Package-name extends ("@tsconfig/node18") live in node_modules: not ours.
            if isinstance(parent, str) and parent.startswith("."):
                target = join(here, parent if parent.endswith(".json") else parent + ".json")
                if target is not None:
                    chain.append(target)
    clean = tuple(
        (pattern, tuple(t for t in targets if isinstance(t, str)))
        for pattern, targets in (paths or {}).items()
        if isinstance(pattern, str) and isinstance(targets, list)
    )
    # TypeScript: `paths` are relative to baseUrl when set, else to their own tsconfig.
    return PathConfig(base_url, clean, base_url if base_url is not None else paths_dir)


def match_paths(config: PathConfig, specifier: str) -> list[str]:
    """Candidate repository paths for a specifier under `paths` (best pattern first)."""
    best: tuple[int, str, tuple[str, ...]] | None = None
    for pattern, targets in config.paths:
        if "*" not in pattern:
            if pattern == specifier:
                best = (len(pattern) + 1_000_000, "", targets)   # exact match beats wildcards
            continue
        prefix, _, suffix = pattern.partition("*")
        if (specifier.startswith(prefix) and specifier.endswith(suffix)
                and len(specifier) >= len(prefix) + len(suffix)):
            if best is None or len(prefix) > best[0]:
                star = specifier[len(prefix):len(specifier) - len(suffix)]
                best = (len(prefix), star, targets)
    if best is None:
        return []
    _, star, targets = best
    found = [join(config.paths_base, t.replace("*", star, 1)) for t in targets]
    return [f for f in found if f is not None]
