"""Fingerprints that key the health cache: a change to the code or grammars behind a
result makes the old cached results unreachable (and `cache.py` prunes them)."""
from __future__ import annotations

import os
import zlib
from pathlib import Path

from neo_git.health.skips import SKIP_RULES_VERSION
from neo_git.health.states import STATE_FORMAT

_HERE = Path(__file__).resolve().parent
_VERSIONS: dict[str, str] = {}

# Everything that shapes a per-file result (cached per blob).
_ANALYZER_FILES = ("metrics.py", "model.py", "parsing.py", "skips.py")
# Everything that shapes a stored whole-snapshot state, beyond the per-file results.
_STATE_FILES = ("resolve.py", "graph.py", "snapshot.py", "sources.py", "pygit2_sources.py", "plumbing.py", "scan.py",
                "states.py", "versions.py")

_GRAMMAR_MODULES = ("tree_sitter", "tree_sitter_python", "tree_sitter_javascript", "tree_sitter_typescript",
                    "tree_sitter_go", "tree_sitter_rust", "tree_sitter_java")


def analyzer_version() -> str:
    """Fingerprint of everything that shapes a per-file result: the metrics code,
    the language tables, the skip rules and the installed tree-sitter packages."""
    if "analyzer" not in _VERSIONS:
        files = [_HERE / name for name in _ANALYZER_FILES]
        files += sorted(p for p in (_HERE / "languages").rglob("*") if p.suffix in (".py", ".scm", ".json"))
        _VERSIONS["analyzer"] = _fingerprint(files, [SKIP_RULES_VERSION, *_grammar_versions()])
    return _VERSIONS["analyzer"]


def state_version() -> str:
    """Fingerprint for stored snapshot states: the analyzer plus scanning and import resolution."""
    if "state" not in _VERSIONS:
        files = [_HERE / name for name in _STATE_FILES]
        files += sorted((_HERE / "resolvers").glob("*.py"))
        _VERSIONS["state"] = _fingerprint(files, [analyzer_version(), STATE_FORMAT])
    return _VERSIONS["state"]


def _grammar_versions() -> list[str]:
    """`tree_sitter_python-0.25.0.dist-info`-style names: the installed versions, found with
    one directory listing (importlib.metadata costs ~40 ms, a fifth of a warm CLI run). The
    grammars sit beside tree_sitter as a rule: one module is looked up, and another only when
    its distribution is not in that folder."""
    import importlib.util

    found: list[str] = []
    listings: dict[Path, list[str]] = {}
    for module in _GRAMMAR_MODULES:
        names = [name for listing in listings.values() for name in listing if _names_module(name, module)]
        if names:
            found += names
            continue
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.origin:
            found.append(f"{module}=missing")
            continue
        site = Path(spec.origin).resolve().parent.parent
        if site not in listings:
            try:
                # every _GRAMMAR_MODULES name starts so: the rest of site-packages is not looked at
                listings[site] = sorted(name for name in os.listdir(site) if name.startswith("tree_sitter"))
            except OSError:
                listings[site] = []
        found += [name for name in listings[site] if _names_module(name, module)]
    return found


def _names_module(name: str, module: str) -> bool:
    return name.startswith(module + "-") and name.endswith((".dist-info", ".egg-info"))


def _fingerprint(files: list[Path], extra: list[str]) -> str:
    """Two checksums (CRC-32 and Adler-32, 64 bits) over *extra* and the files' names and bytes:
    a change to any of them is a new version. Not hashlib: its OpenSSL cost every guard run
    as much as the reading and summing."""
    crc, adler = 0, 1
    for part in ["\0".join(extra).encode()] + [_named_bytes(path) for path in files]:
        crc, adler = zlib.crc32(part, crc), zlib.adler32(part, adler)
    return f"{crc:08x}{adler:08x}"


def _named_bytes(path: Path) -> bytes:
    try:
        return path.name.encode() + b"\0" + path.read_bytes()
    except OSError:
        return b""
