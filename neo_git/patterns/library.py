"""Where patterns live, and loading them: the shipped library (in the wheel) plus a
project's own `.neo/construct/` in its work tree, which wins when both have an id.

Every file is read without following symlinks (`O_NOFOLLOW`), and folders that are
symlinks are refused: a pattern id names a file *inside* the library, nothing else.
"""
from __future__ import annotations

import difflib
import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from neo_git.errors import NeoError
from neo_git.patterns.model import MAX_BYTES, PROJECT, SHIPPED, Pattern, PatternProblem
from neo_git.patterns.parse import SLUG, check_pattern

PROJECT_FOLDER = Path(".neo") / "construct"
ID_HINT = "ids look like <domain>/<name>, e.g. architecture/dependency-inversion; " \
          "`git neo construct list` shows them"
# Files at the top of a pattern folder that are documentation, not misplaced patterns.
_ROOT_DOCS = {"readme.md", "contributing.md", "index.md"}


def shipped_root() -> Path:
    """The folder of the library shipped with git-neo."""
    from neo_git.resources import shipped_dir

    return shipped_dir("construct")


def project_root(workdir: Path | None) -> Path | None:
    """`<workdir>/.neo/construct`, where a project keeps its own patterns (None without a work tree)."""
    return Path(workdir) / PROJECT_FOLDER if workdir is not None else None


@dataclass
class Library:
    """The patterns one search or listing sees, and the problems of files that were skipped."""

    patterns: dict[str, Pattern] = field(default_factory=dict)   # id -> pattern, sorted by id
    problems: list[PatternProblem] = field(default_factory=list)
    overridden: list[str] = field(default_factory=list)          # shipped ids a project pattern replaced


# path -> ((device, inode, size, mtime_ns), pattern, problems): a long-lived process
# (the MCP server, `ask`) re-reads only the files that changed.
_PARSED: dict[str, tuple[tuple[int, int, int, int], Pattern | None, list[PatternProblem]]] = {}


def read_pattern_bytes(path: Path) -> tuple[bytes | None, os.stat_result | None, str | None]:
    """(bytes, stat, None) of a regular file opened without following a symlink, or (None, None, why not)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, None, "is a symlink; patterns must be regular files inside the library"
        return None, None, f"cannot be read: {exc.strerror}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, None, "is not a regular file"
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(MAX_BYTES + 1)  # one byte over is enough to report "too big"
        return raw, info, None
    finally:
        os.close(fd)


def load_file(path: Path, pattern_id: str, source: str) -> tuple[Pattern | None, list[PatternProblem]]:
    """Parse one pattern file (memoised by its stat), or its problems."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        return None, [PatternProblem(str(path), None, f"cannot be read: {exc.strerror}")]
    signature = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    cached = _PARSED.get(str(path))
    if cached and cached[0] == signature and (cached[1] is None or cached[1].source == source):
        return cached[1], cached[2]
    raw, _, why = read_pattern_bytes(path)
    if raw is None:
        return None, [PatternProblem(str(path), None, why or "cannot be read")]
    pattern, problems = check_pattern(raw, pattern_id, path, source)
    _PARSED[str(path)] = (signature, pattern, problems)
    return pattern, problems


def scan_folder(root: Path, source: str = SHIPPED) -> tuple[dict[str, Pattern], list[PatternProblem]]:
    """Every `<domain>/<name>.md` under *root*: the valid patterns and the problems of the rest."""
    patterns: dict[str, Pattern] = {}
    problems: list[PatternProblem] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except FileNotFoundError:
        return patterns, problems
    except NotADirectoryError:
        return patterns, [PatternProblem(str(root), None, "is not a folder")]
    for entry in entries:
        if entry.name.startswith((".", "_")):
            continue  # __init__.py, __pycache__, .DS_Store: packaging and tooling, not patterns
        path = Path(entry.path)
        if entry.is_symlink():
            problems.append(PatternProblem(str(path), None, "is a symlink; symlinks are not followed"))
        elif entry.is_dir():
            problems += _scan_domain(path, entry.name, source, patterns)
        elif entry.name.endswith(".md") and entry.name.lower() not in _ROOT_DOCS:
            problems.append(PatternProblem(str(path), None, "is not in a domain folder: "
                                                            "patterns live at <domain>/<name>.md"))
    return patterns, problems


def _scan_domain(folder: Path, domain: str, source: str, patterns: dict[str, Pattern]) -> list[PatternProblem]:
    problems: list[PatternProblem] = []
    if not SLUG.fullmatch(domain):
        return [PatternProblem(str(folder), None, f"domain folder '{domain}' is not a valid id part: "
                                                  "use lower-case letters, digits and single dashes")]
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith((".", "_")):
            continue
        path = Path(entry.path)
        if entry.is_symlink():
            problems.append(PatternProblem(str(path), None, "is a symlink; symlinks are not followed"))
        elif entry.is_dir():
            problems.append(PatternProblem(str(path), None, "nested folder: patterns live at <domain>/<name>.md"))
        elif entry.name.endswith(".md"):
            pattern, found = load_file(path, f"{domain}/{entry.name[:-3]}", source)
            problems += found
            if pattern is not None:
                patterns[pattern.id] = pattern
    return problems


def load_library(workdir: Path | None = None) -> Library:
    """The shipped patterns plus the project's `.neo/construct/` ones (project wins on an id clash)."""
    shipped, problems = scan_folder(shipped_root(), SHIPPED)
    library = Library(problems=problems)
    merged = dict(shipped)
    root = project_root(workdir)
    if root is not None:
        own, own_problems = scan_folder(root, PROJECT)
        library.problems += own_problems
        library.overridden = sorted(set(own) & set(shipped))
        merged.update(own)
    library.patterns = dict(sorted(merged.items()))
    return library


def check_pattern_id(pattern_id: str) -> str:
    """*pattern_id* as `<domain>/<name>` (a trailing `.md` is dropped); NeoError when it could escape the library."""
    text = pattern_id.strip()
    text = text[:-3] if text.endswith(".md") else text
    parts = text.replace("\\", "/").split("/")
    if text.startswith(("/", "\\", "~")) or (len(text) > 1 and text[1] == ":") or ".." in parts:
        raise NeoError(f"pattern id '{pattern_id}' points outside the pattern library", ID_HINT)
    if len(parts) != 2 or not all(SLUG.fullmatch(p) for p in parts):
        raise NeoError(f"'{pattern_id}' is not a pattern id", ID_HINT)
    return text


def find_pattern(pattern_id: str, workdir: Path | None = None) -> Pattern:
    """The pattern *pattern_id* (the project's copy first); NeoError for an unsafe, unknown or invalid one."""
    pattern_id = check_pattern_id(pattern_id)
    domain, name = pattern_id.split("/")
    roots = [(project_root(workdir), PROJECT), (shipped_root(), SHIPPED)]
    for root, source in roots:
        if root is None:
            continue
        folder, path = root / domain, root / domain / f"{name}.md"
        if not os.path.lexists(path):
            continue
        if os.path.islink(folder) or os.path.islink(path):
            raise NeoError(f"pattern '{pattern_id}' is a symlink ({path}); symlinks are not followed",
                           "copy the pattern into the library instead of linking it")
        pattern, problems = load_file(path, pattern_id, source)
        if pattern is None:
            listed = "; ".join(p.message for p in problems)
            raise NeoError(f"pattern '{pattern_id}' is not valid: {listed}",
                           f"`git neo construct validate {root}` lists every problem")
        return pattern
    known = list(load_library(workdir).patterns)
    close = difflib.get_close_matches(pattern_id, known, n=3, cutoff=0.75)
    hint = f"did you mean {', '.join(close)}?" if close else "`git neo construct list` shows every pattern"
    raise NeoError(f"no pattern '{pattern_id}'", hint)


def validate_folder(root: Path) -> tuple[list[Pattern], list[PatternProblem]]:
    """Check a pattern folder laid out as `<domain>/<name>.md`: its valid patterns and every problem."""
    root = Path(root)
    if not root.exists():
        raise NeoError(f"no such folder: {root}", "pass the folder holding <domain>/<name>.md files")
    if not root.is_dir():
        raise NeoError(f"not a folder: {root}", "pass the folder holding <domain>/<name>.md files")
    patterns, problems = scan_folder(root, PROJECT)
    return list(patterns.values()), problems
