"""What the cited code looks like in one blob, read once: a blob-keyed cache in
`.git/neo/citations.sqlite` (the health engine's `MetricsCache`, its own file and version).

A blob's fingerprint and symbol table depend only on its bytes, its language and this code,
so they are cached by (blob id, language) under a version that changes with the symbol
queries, the grammars and the fingerprint code: a file that did not change since it was
last read costs one lookup, a renamed one nothing. The cache is derived data; without it
(read-only `.git`, a locked file) every blob is parsed again.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, cast

from neo_git.citations.languages import language_of
from neo_git.citations.symbols import FileCode, from_json, read_code, to_json

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

CACHE_FILE = "citations.sqlite"
FORMAT = "citations-1"
MAX_BYTES = 4 << 20   # larger blobs are fingerprinted as bytes, never parsed


class Unavailable(Exception):
    """The blob is not in this repository (a partial clone's missing object)."""


def code_version() -> str:
    """The cache version: the health analyzer's (grammars, languages, queries) plus this package."""
    import hashlib

    from neo_git.health.versions import analyzer_version

    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(f"{FORMAT}:{analyzer_version()}".encode())
    for name in ("symbols.py", "fingerprint.py", "code.py"):
        try:
            digest.update((here / name).read_bytes())
        except OSError:
            pass
    return digest.hexdigest()[:16]


class CodeReader:
    """Blob contents, fingerprints and symbols of one repository, cached by blob id."""

    def __init__(self, repo: pygit2.Repository, neo_dir: Path | None = None, *, cache: bool = True) -> None:
        self.repo = repo
        self._memo: dict[tuple[str, str], FileCode] = {}
        self._cache = None
        if cache and neo_dir is not None:
            from neo_git.health.cache import MetricsCache

            version = code_version()
            self._cache = MetricsCache(Path(neo_dir) / CACHE_FILE, version)
        self.parsed = 0   # blobs parsed in this process (the rest came from a cache)

    def data(self, blob_id: str) -> bytes:
        """The blob's bytes; Unavailable when this repository does not have it."""
        try:
            blob = cast("pygit2.Blob", self.repo[blob_id])
        except (KeyError, ValueError):
            raise Unavailable(blob_id) from None
        try:
            return blob.data
        except Exception as exc:  # pygit2 raises GitError for a broken or missing object
            raise Unavailable(blob_id) from exc

    def code(self, path: str, blob_id: str) -> FileCode:
        """Fingerprint and symbols of the blob *blob_id* read as *path*'s language."""
        language = language_of(path) or "text"
        key = (blob_id, language)
        found = self._memo.get(key)
        if found is not None:
            return found
        raw_key = (bytes.fromhex(blob_id), language)
        if self._cache is not None and self._cache.enabled:
            stored = self._cache.get_many([raw_key]).get(raw_key)
            if stored is not None:
                try:
                    found = from_json(json.loads(stored))
                except (ValueError, KeyError, TypeError):
                    found = None
        if found is None:
            data = self.data(blob_id)
            found = code_of(path, data)
            self.parsed += 1
            if self._cache is not None and self._cache.enabled:
                self._cache.put(raw_key, json.dumps(to_json(found), separators=(",", ":")))
        self._memo[key] = found
        return found

    def close(self) -> None:
        """Write what was parsed to the cache."""
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def __enter__(self) -> CodeReader:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def code_of(path: str, data: bytes) -> FileCode:
    """Fingerprint and symbols of *data* read as *path* (no cache)."""
    language = language_of(path)
    if len(data) > MAX_BYTES:
        from neo_git.citations.fingerprint import digest

        return FileCode(digest([data]), {})
    return read_code(language, data)
