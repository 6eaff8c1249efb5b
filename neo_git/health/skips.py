"""Skip rules: source-language files that are not hand-written source, counted by reason.

Skip decisions are cached per blob with the per-file results, so this file is part
of the analyzer fingerprint (versions.py); SKIP_RULES_VERSION is bumped as well.
"""
from __future__ import annotations

from neo_git.health.sources import MODE_SYMLINK

SKIP_RULES_VERSION = "skip-2"
MAX_FILE_BYTES = 1_000_000
# git's text/binary statistics (convert.c, gather_stats): bytes below 32 other than
# \b \t \n \f \r ESC, and DEL, are non-printable; NUL makes a blob binary outright.
_PRINTABLE = bytes([8, 9, 10, 12, 13, 27]) + bytes(range(32, 127)) + bytes(range(128, 256))
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


def is_binary(data: bytes) -> bool:
    """git's own test (convert.c `convert_is_binary`) over the whole blob, not only the
    8,000 bytes `git diff` sniffs: a NUL byte, or more than one non-printable byte per
    128 printable ones. (git also counts a lone CR; old Mac line endings are text here.)"""
    if b"\0" in data:
        return True
    nonprintable = len(data.translate(None, _PRINTABLE))
    return (len(data) - nonprintable) >> 7 < nonprintable


def content_skip_reason(*, size: int | None = None, data: bytes | None = None) -> str | None:
    """Why a blob is skipped judging by its size, or by its bytes."""
    if size is not None and size > MAX_FILE_BYTES:
        return "too_large"
    if data is not None:
        if len(data) > MAX_FILE_BYTES:
            return "too_large"
        if is_binary(data):
            return "binary"
        if len(data) >= MINIFIED_MIN_BYTES and len(data) / (data.count(b"\n") + 1) > MINIFIED_AVG_LINE:
            return "minified"
    return None
