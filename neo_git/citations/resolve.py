"""Turning `--cite PATH[:SYMBOL|:START-END]` into a citation, checked against the code now.

The code is read from the work tree when the file is there (a fact is usually written about
the code being worked on, committed or not), else from HEAD's tree. A citation records the
path, the symbol or line span, the blob id of the content it was checked against, its
fingerprint, the state `verified`, and the commit it was checked at (`commit`, `since`, with
its date): the anchor git's rename detection starts from. A path or symbol that does not
exist is a NeoError whose hint names the closest ones that do.
"""
from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, cast

from neo_git.citation_states import VERIFIED
from neo_git.citations.code import code_of
from neo_git.citations.fingerprint import span_digest
from neo_git.citations.languages import language_of, supported_extensions
from neo_git.citations.symbols import line_tokens
from neo_git.errors import NeoError
from neo_git.fact_schema import Citation
from neo_git.readfile import FileTooLarge, read_regular

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

_SPAN = re.compile(r"^(\d+)(?:-(\d+))?$")
_SYMBOL = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$")
MAX_FILE_BYTES = 4 << 20


class CiteSpec(NamedTuple):
    """A parsed `--cite` argument."""

    path: str
    symbol: str | None = None
    span: tuple[int, int] | None = None


def parse_spec(text: str) -> CiteSpec:
    """`PATH`, `PATH:SYMBOL` (`Class.method`) or `PATH:START-END` (or `PATH:LINE`)."""
    raw = (text or "").strip()
    if not raw:
        raise NeoError("--cite needs a path", "e.g. --cite src/app/config.py:load_config")
    path, colon, rest = raw.rpartition(":")
    if colon and path:
        match = _SPAN.match(rest)
        if match:
            start = int(match.group(1))
            end = int(match.group(2) or start)
            if start < 1 or end < start:
                raise NeoError(f"invalid line span '{rest}' in --cite {raw}", "give START-END with 1 ≤ START ≤ END")
            return CiteSpec(path, None, (start, end))
        if _SYMBOL.match(rest):
            return CiteSpec(path, rest, None)
    return CiteSpec(raw)


def normalise(path: str, workdir: Path | None, cwd: Path | None = None) -> str:
    """*path* relative to the repository root, '/'-separated; an absolute path or one relative to
    *cwd* inside the work tree is made relative to the root. Refuses paths outside it."""
    text = path.strip().replace("\\", "/")
    if workdir is not None and (text.startswith("/") or (cwd is not None and Path(cwd).resolve() != workdir.resolve())):
        base = Path(text) if text.startswith("/") else Path(cwd or ".") / text
        try:
            text = Path(posixpath.normpath(str(base.absolute()))).relative_to(workdir.resolve()).as_posix()
        except ValueError:
            raise NeoError(f"{path} is outside the repository ({workdir})",
                           "cite files of this repository") from None
    clean = posixpath.normpath(text)
    if clean in ("", ".") or clean.startswith("../") or clean == ".." or clean.startswith("/"):
        raise NeoError(f"{path} is not a file inside the repository", "give a path relative to the repository root")
    return clean


def too_large(path: str, size: int | None) -> NeoError:
    """A file too large to fingerprint: said as such (it exists; "no such file" misled)."""
    shown = f" ({size:,} bytes)" if size is not None else ""
    return NeoError(f"cannot cite {path}: it is larger than {MAX_FILE_BYTES >> 20} MiB{shown}",
                    "cite a smaller file; generated or data files are better left uncited")


class Resolver:
    """Resolves citations of one repository against its work tree and HEAD."""

    def __init__(self, repo: pygit2.Repository | None, workdir: Path | None, cwd: Path | None = None) -> None:
        self.repo = repo
        self.workdir = Path(workdir) if workdir is not None else None
        self.cwd = cwd
        self.head = None
        try:
            if repo is not None and not repo.head_is_unborn:   # an in-memory store: no HEAD
                import pygit2

                self.head = repo.head.peel(pygit2.Commit)
        except Exception:  # noqa: BLE001 - no HEAD: only the work tree can be cited
            self.head = None
        self._paths: list[str] | None = None

    def resolve(self, text: str) -> Citation:
        """The citation for one `--cite` argument; NeoError naming close matches when it names nothing."""
        spec = parse_spec(text)
        path = normalise(spec.path, self.workdir, self.cwd)
        found = self._content(path)
        if found is None and spec.symbol is None and spec.span is None:
            whole = normalise(text.strip(), self.workdir, self.cwd)   # a file name with a colon in it
            found = self._content(whole) if whole != path else None
            path = whole if found is not None else path
        if found is None:
            raise NeoError(f"cannot cite {path}: no such file in the work tree or HEAD",
                           self._close_paths(path))
        data, blob, in_head = found
        cited: dict = {}
        language = language_of(path)
        if spec.symbol is not None:
            if language is None:
                raise NeoError(f"cannot cite {spec.symbol} in {path}: symbols are read in {supported_extensions()} files",
                               f"cite the whole file (--cite {path}) or a line span (--cite {path}:10-30)")
            code = code_of(path, data)
            name = _pick_symbol(spec.symbol, code.symbols.keys(), path)
            cited.update(symbol=name, fingerprint=code.symbols[name].fingerprint)
        elif spec.span is not None:
            tokens = line_tokens(language, data)
            lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
            start, end = spec.span
            if end > lines:
                raise NeoError(f"cannot cite lines {start}-{end} of {path}: it has {lines} lines",
                               f"give a span within 1-{lines}")
            fingerprint, size = span_digest(tokens, start, end)
            if size == 0:
                raise NeoError(f"lines {start}-{end} of {path} hold no code (only blanks or comments)",
                               "cite lines that hold code")
            cited.update(span=(start, end), size=size, fingerprint=fingerprint)
        else:
            cited["fingerprint"] = code_of(path, data).fingerprint
        if self.head is not None and in_head:
            head = str(self.head.id)
            cited.update(commit=head, since=head, since_date=commit_date(self.head))
        # validated with the fact it is written on (`Fact.from_dict`)
        return Citation(path, VERIFIED, cited=text.strip(), blob=blob, **cited)

    def _content(self, path: str) -> tuple[bytes, str, bool] | None:
        """(bytes, blob id, whether HEAD has the path) from the work tree, else HEAD; None if neither."""
        in_head = self._head_blob(path)
        if self.workdir is not None:
            file = self.workdir / path
            try:
                if file.is_file() and not file.is_symlink() and self.workdir.resolve() in file.resolve().parents:
                    import pygit2

                    data = read_regular(file, MAX_FILE_BYTES)
                    return data, str(pygit2.hash(data)), in_head is not None
            except FileTooLarge as exc:
                raise too_large(path, exc.size) from None
            except (OSError, NeoError):   # unreadable, or replaced by a FIFO meanwhile: HEAD's copy
                pass
        if in_head is None:
            return None
        try:
            assert self.repo is not None   # a blob in HEAD: a repository
            blob = cast("pygit2.Blob", self.repo[in_head])
            if blob.size > MAX_FILE_BYTES:
                raise too_large(path, blob.size)
            return blob.data, in_head, True
        except (KeyError, ValueError):
            raise NeoError(f"cannot cite {path}: its content is not in this repository (a partial clone)",
                           f"check the file out (`git checkout -- {path}`) and cite it again") from None

    def _head_blob(self, path: str) -> str | None:
        if self.head is None:
            return None
        try:
            entry = self.head.tree[path]
        except (KeyError, ValueError):
            return None
        return str(entry.id) if entry.type_str == "blob" else None

    def known_paths(self) -> list[str]:
        """Files of HEAD and the index (for suggestions)."""
        if self._paths is None:
            paths: set[str] = set()
            try:
                if self.repo is not None:   # an in-memory store: no index
                    paths.update(entry.path for entry in self.repo.index)
            except Exception:  # noqa: BLE001 - a bare repository has no index
                pass
            if self.head is not None:
                from neo_git.health.pygit2_sources import tree_entries

                paths.update(e.path for e in tree_entries(self.head.tree))
            self._paths = sorted(paths)
        return self._paths

    def _close_paths(self, path: str) -> str:
        known = self.known_paths()
        by_name = [p for p in known if posixpath.basename(p) == posixpath.basename(path)]
        close = list(dict.fromkeys(by_name[:3] + difflib.get_close_matches(path, known, n=3, cutoff=0.5)))[:3]
        if close:
            return "did you mean " + ", ".join(close) + "?"
        return "give the path relative to the repository root (`git ls-files` lists them)"


def _pick_symbol(wanted: str, names: Iterable[str], path: str) -> str:
    """The qualified name *wanted* names: itself, or the one symbol it ends (`load` for `Config.load`)."""
    names = list(names)
    if wanted in names:
        return wanted
    tails = [n for n in names if n.endswith("." + wanted)]
    if len(tails) == 1:
        return tails[0]
    if len(tails) > 1:
        raise NeoError(f"{wanted} is ambiguous in {path}: {', '.join(sorted(tails)[:5])}",
                       f"cite one of them, e.g. --cite {path}:{sorted(tails)[0]}")
    close = difflib.get_close_matches(wanted, names, n=3, cutoff=0.6)
    tails = difflib.get_close_matches(wanted.rsplit(".", 1)[-1], [n.rsplit(".", 1)[-1] for n in names], n=3, cutoff=0.6)
    close += [n for n in sorted(names) if n.rsplit(".", 1)[-1] in tails and n not in close]
    hint = (f"did you mean {', '.join(close[:3])}?" if close else
            f"{path} defines: {', '.join(sorted(names)[:8])}" if names else f"{path} defines no functions or classes")
    raise NeoError(f"no function, method or class {wanted} in {path}", hint)


def commit_date(commit: pygit2.Commit) -> str:
    """The commit's committer date, ISO 8601 UTC."""
    from datetime import datetime, timezone

    return datetime.fromtimestamp(commit.commit_time, timezone.utc).replace(microsecond=0).isoformat()


MAX_CITED_SYMBOLS = 3
MAX_SPAN_LINES = 200


def cite_lines(path: str, data: bytes, blob: str, commit: pygit2.Commit, lines: Iterable[int]) -> list[Citation]:
    """Citations of the code holding *lines* of *path* at *commit*: the innermost function,
    method or class around them (at most three), else the span from the first to the last line.
    Used for what an accepted suggestion shipped."""
    numbers = sorted(set(lines))
    if not numbers:
        return []
    head = str(commit.id)
    anchor = Citation(path, VERIFIED, blob=blob, commit=head, since=head, since_date=commit_date(commit))
    symbols = code_of(path, data).symbols.values()
    chosen: list = []
    for number in numbers:
        around = [s for s in symbols if s.start <= number <= s.end]
        if not around:
            chosen = []
            break
        inner = min(around, key=lambda s: (s.end - s.start, s.name))
        if inner not in chosen:
            chosen.append(inner)
    if chosen and len(chosen) <= MAX_CITED_SYMBOLS:
        return [replace(anchor, cited=f"{path}:{s.name}", symbol=s.name, fingerprint=s.fingerprint) for s in chosen]
    start, end = numbers[0], numbers[-1]
    if end - start >= MAX_SPAN_LINES:
        return []
    fingerprint, size = span_digest(line_tokens(language_of(path), data), start, end)
    if not size:
        return []
    return [replace(anchor, cited=f"{path}:{start}-{end}", span=(start, end), size=size, fingerprint=fingerprint)]
