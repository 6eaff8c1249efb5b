"""Path scope: does a fact's glob cover a file? Git pathspec semantics with the `glob` magic
(`git ls-files ':(glob)PATTERN'`), so `git ls-files` shows exactly what a glob covers.

- A glob without wildcards names a file or a folder: `migrations` covers `migrations/001.sql`.
- `*` and `?` stay inside one folder name, `[abc]` is a class (`[!a]` negated);
  `**/` matches any number of folders (none included), `/**` everything inside a folder.
- Patterns are relative to the repository root.

Standard library only: recall matches globs on every `--file` question (the citations feature and
the outcome loop use it too).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable

_WILD = re.compile(r"[*?\[]")


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str] | str:
    """A regex for a wildcard pattern, or the literal prefix (without a trailing '/') for a plain one."""
    if not _WILD.search(pattern):
        return pattern.rstrip("/")
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**", i):
            before_ok = i == 0 or pattern[i - 1] == "/"
            after = pattern[i + 2:i + 3]
            if before_ok and after == "/":
                out.append("(?:.*/)?")
                i += 3
                continue
            if before_ok and i + 2 == n:
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                escaped = body.replace("\\", "\\\\").replace("^", "\\^")
                out.append(f"[^/{escaped}]" if negate else f"(?!/)[{escaped}]")
                i = end + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def glob_matches(pattern: str, path: str) -> bool:
    """Does the pathspec glob *pattern* cover the repository path *path*?"""
    compiled = _compile(pattern[2:] if pattern.startswith("./") else pattern)
    if isinstance(compiled, str):
        return path == compiled or path.startswith(compiled + "/") or compiled == ""
    return compiled.match(path) is not None


def any_matches(patterns: Iterable[str], path: str) -> bool:
    """Does any of *patterns* cover *path*?"""
    return any(glob_matches(p, path) for p in patterns)
