"""Files health measures but does not judge: tests, generated and vendored code, and
`neo.healthExclude` globs. They are neither god files nor gated by the pre-commit guard
(their imports stay in the graph: a cycle is a cycle wherever it runs).

The rules, in the order that names a file matching several:
    neo.healthExclude    git config globs (multi-valued; `*` stays inside a folder, `**` crosses
                         folders, a pattern without `/` matches the file name anywhere,
                         `dir/` means everything under dir)
    linguist-generated   set in a `.gitattributes` of the measured tree or index
    linguist-vendored    (GitHub's attributes; `.git/info/attributes` counts too, as for git)
    tests                the languages' own conventions (TEST_DIRS, TEST_NAMES)
"""
from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable

RULES = ("neo.healthExclude", "linguist-generated", "linguist-vendored", "tests")
_ATTRIBUTES = {"linguist-generated": "linguist-generated", "linguist-vendored": "linguist-vendored"}

# Folders whose files are tests, at any depth (Maven/Gradle's src/test/ is a `test` folder).
TEST_DIRS = frozenset({"test", "tests", "__tests__", "__mocks__", "testdata", "androidTest"})
# File names that are tests, by language convention.
TEST_NAMES = re.compile(
    r"(?:test_[^/]*\.pyi?|[^/]*_test\.pyi?|conftest\.py"            # pytest
    r"|[^/]*_test\.go"                                              # go test
    r"|[^/]*\.(?:test|spec)\.(?:[cm]?[jt]sx?)"                      # jest, vitest, mocha
    r"|[^/]*Tests?\.java|[^/]*IT\.java)\Z")                         # JUnit, failsafe

Reader = Callable[[str], "bytes | None"]


def is_test_path(path: str) -> bool:
    """True for a test file by its path alone (TEST_DIRS, TEST_NAMES)."""
    *directories, name = path.split("/")
    return bool(TEST_DIRS.intersection(directories)) or TEST_NAMES.match(name) is not None


class Exclusions:
    """Which rule, if any, leaves a path of one snapshot unjudged; decided per path on first
    ask (the guard asks about a handful of files, a report about all of them).

    *read* serves the snapshot's files (its `.gitattributes`); *info_attributes* is the
    repository's `.git/info/attributes`, which wins over them, as in git."""

    def __init__(self, read: Reader, globs: Iterable[str] = (), info_attributes: bytes | None = None) -> None:
        self.patterns = [compile_glob(g) for g in globs if g.strip()]
        self.attributes = _AttributeFiles(read, info_attributes)
        self.known: dict[str, str | None] = {}

    def rule(self, path: str) -> str | None:
        """The first rule (RULES) that excludes *path*, else None."""
        if path in self.known:
            return self.known[path]
        if any(p(path) for p in self.patterns):
            found: str | None = "neo.healthExclude"
        else:
            found = self.attributes.marks(path) or ("tests" if is_test_path(path) else None)
        self.known[path] = found
        return found

    def of(self, paths: Iterable[str]) -> dict[str, str]:
        """path -> rule for those of *paths* that a rule excludes."""
        return {path: rule for path in paths if (rule := self.rule(path))}


def excluded_paths(paths: Iterable[str], read: Reader, globs: Iterable[str] = (),
                   info_attributes: bytes | None = None) -> dict[str, str]:
    """path -> the first rule (RULES) that excludes it, for the *paths* that any rule excludes."""
    return Exclusions(read, globs, info_attributes).of(paths)


def compile_glob(pattern: str, base: str = "") -> Callable[[str], bool]:
    """A matcher for one gitignore-style pattern relative to folder *base*: without a `/`
    it matches the file name at any depth below *base*; with one it is anchored at *base*;
    `*` and `?` stay inside a folder, `**` crosses folders; a trailing `/` means "everything under"."""
    pattern = pattern.strip()
    if pattern.endswith("/"):   # a folder: everything under it (at any depth when it names no parent)
        pattern = pattern.rstrip("/")
        pattern = (pattern if "/" in pattern else "**/" + pattern) + "/**"
    anchored = "/" in pattern
    pattern = pattern.lstrip("/")
    regex = re.compile(_wildmatch(pattern) + r"\Z")
    prefix = base + "/" if base else ""

    def matches(path: str) -> bool:
        if prefix and not path.startswith(prefix):
            return False
        rest = path[len(prefix):]
        return regex.match(rest if anchored else posixpath.basename(rest)) is not None
    return matches


def _wildmatch(pattern: str) -> str:
    """gitignore glob -> regular expression (WM_PATHNAME: `*` does not match `/`)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append(r"(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i) and i + 2 == len(pattern) and (i == 0 or pattern[i - 1] == "/"):
            out.append(r".*")
            i += 2
        elif pattern[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append(r"[^/]")
            i += 1
        elif pattern[i] == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape("["))
                i += 1
                continue
            body = pattern[i + 1:end]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


class _AttributeFiles:
    """The linguist attributes of the snapshot's `.gitattributes` files, read once per folder."""

    def __init__(self, read: Reader, info_attributes: bytes | None) -> None:
        self.read = read
        self.by_dir: dict[str, list] = {}
        self.info = _parse(info_attributes, "") if info_attributes else []

    def _rules(self, directory: str) -> list:
        rules = self.by_dir.get(directory)
        if rules is None:
            try:
                data = self.read(f"{directory}/.gitattributes" if directory else ".gitattributes")
            except (KeyError, OSError, ValueError):
                data = None
            rules = self.by_dir[directory] = _parse(data, directory) if data else []
        return rules

    def marks(self, path: str) -> str | None:
        """The linguist rule set for *path*, if any (later lines, deeper files and
        info/attributes win, as git applies them)."""
        folders = []
        directory = posixpath.dirname(path)
        while True:
            folders.append(directory)
            if not directory:
                break
            directory = posixpath.dirname(directory)
        state: dict[str, bool | None] = {}
        for folder in reversed(folders):
            for matches, values in self._rules(folder):
                if matches(path):
                    state.update(values)
        for matches, values in self.info:
            if matches(path):
                state.update(values)
        for attribute in ("linguist-generated", "linguist-vendored"):
            if state.get(attribute):
                return _ATTRIBUTES[attribute]
        return None


def _parse(data: bytes, directory: str) -> list:
    """[(matcher, {attribute: set or not})] of one attributes file, for the linguist attributes only."""
    rules = []
    for raw in data.decode("utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("[attr]"):
            continue
        pattern, *attributes = line.split()
        if pattern.startswith("!") or pattern.endswith("/"):
            continue   # negative patterns are forbidden; folder patterns match no file (gitattributes(5))
        values: dict[str, bool | None] = {}
        for attribute in attributes:
            name, _, value = attribute.lstrip("-!").partition("=")
            if name not in _ATTRIBUTES:
                continue
            if attribute.startswith("!"):
                values[name] = None   # back to unspecified
            else:
                values[name] = not attribute.startswith("-") and value.lower() not in ("false", "0")
        if values:
            rules.append((compile_glob(pattern, directory), values))
    return rules
