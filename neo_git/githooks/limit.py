"""The guard's time limit (`neo.guardTimeoutMs`): the constants, and the one rule that turns the
setting into milliseconds on the Python side.

The limit is decided once per commit, before the guard starts, by the shell shim
(`hooks/pre-commit`, which the pre-commit framework runs as `git-neo-guard`; in sh, so that no
interpreter runs before the limit is armed; its numbers are these, which a test checks). It ends
the guard's process group at the limit and hands the limit to the guard (`--timeout-ms`), which
gives up cleanly a little before it (`runner.pre_commit`). Only a guard run by hand, without
`--timeout-ms`, reads the setting itself, with the same rule. Imports
nothing: the guard arms its timers before any of git-neo is loaded.
"""
from __future__ import annotations

import sys

SETTING = "neo.guardTimeoutMs"
DEFAULT_TIMEOUT_MS = 10_000   # past it the commit goes ahead (blocks with neo.strict)
MAX_TIMEOUT_MS = 3_600_000    # larger (or not a number): the default, with one warning
_SUFFIX = {"k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}   # git's integer suffixes (`git config --int`)


def limit_ms(raw: str | None) -> int:
    """The limit for the setting's value *raw* (None: not set): a whole number of ms from 1 to
    MAX_TIMEOUT_MS as git reads integers (k/m/g suffixes; no sign, no leading zero, which git
    would read as octal), else DEFAULT_TIMEOUT_MS with one warning on stderr: a bad value must
    never break a commit."""
    if raw is None:
        return DEFAULT_TIMEOUT_MS
    text = raw.strip().lower()
    scale = _SUFFIX.get(text[-1:], 1)
    digits = text[:-1] if scale > 1 else text
    if digits.isascii() and digits.isdigit() and not digits.startswith("0") and len(digits) <= 12 \
            and 1 <= int(digits) * scale <= MAX_TIMEOUT_MS:
        return int(digits) * scale
    try:
        print(f"warning: {SETTING} is not a whole number of milliseconds from 1 to {MAX_TIMEOUT_MS}; "
              f"the guard uses {DEFAULT_TIMEOUT_MS}", file=sys.stderr)
    except (OSError, ValueError):   # no stderr to tell: the default all the same
        pass
    return DEFAULT_TIMEOUT_MS


def usable(limit: int | None) -> int:
    """*limit* (ms, as handed down with `--timeout-ms`) when the timers can take it, else the
    default (setitimer and faulthandler overflow on larger numbers)."""
    return limit if limit is not None and 1 <= limit <= MAX_TIMEOUT_MS else DEFAULT_TIMEOUT_MS
