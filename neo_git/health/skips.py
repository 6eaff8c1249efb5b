"""Skip rules: source-language files that are not hand-written source, counted by reason.

Skip decisions are cached per blob with the per-file results, so this file is part
of the analyzer fingerprint (versions.py); SKIP_RULES_VERSION is bumped as well.
"""
from __future__ import annotations

from neo_git.health.sources import MODE_SYMLINK

SKIP_RULES_VERSION = "skip-1"
MAX_FILE_BYTES = 1_000_000
BINARY_SNIFF_BYTES = 8000          # git's own binary heuristic looks at the first 8000 bytes
VENDORED_DIRS = frozenset({"node_modules", "vendor", "third_party", "dist", "build"})
MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".min.cjs", ".min.css", "-min.js")
MINIFIED_MIN_BYTES = 4096           # long-line check only for files big enough to matter
MINIFIED_AVG_LINE = 300             # average characters per line above which code is generated


def path_skip_reason(path: str, mode: int) -> str | None:
    """Why a source-language file is skipped judging by its path and mode alone."""
    if mode == MODE_SYMLINK:
        return "symlink"
    *directories, name = path.split("/")
    if VENDORED_DIRS.intersection(directories):
        return "vendored"
    if name.lower().endswith(MINIFIED_SUFFIXES):
        return "minified"
    return None


def content_skip_reason(*, size: int | None = None, data: bytes | None = None) -> str | None:
    """Why a blob is skipped judging by its size, or by its bytes."""
    if size is not None and size > MAX_FILE_BYTES:
        return "too_large"
    if data is not None:
        if len(data) > MAX_FILE_BYTES:
            return "too_large"
        if b"\0" in data[:BINARY_SNIFF_BYTES]:
            return "binary"
        if len(data) >= MINIFIED_MIN_BYTES and len(data) / (data.count(b"\n") + 1) > MINIFIED_AVG_LINE:
            return "minified"
    return None
