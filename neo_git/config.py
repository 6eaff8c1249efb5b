"""`neo.*` settings: git config first, then `~/.neo/config.json`, then the default.

git config is read through the repository (pygit2: local, then global/system as git
layers them; settings given with `git -c` or `GIT_CONFIG_COUNT` win, as in git) when one
is given, else through `git config --get` (global, or the repository of the current
directory). `~/.neo/config.json` holds the same keys
without the `neo.` prefix (`{"maxEffort": "medium"}`), for settings that belong to
the person rather than to one repository. Bad values fall back to the default with
no exception: a typo in a config file must never break a git hook.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from neo_git import safejson
from neo_git.errors import NeoError
from neo_git.identity import neo_home

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

T = TypeVar("T")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def config_file_values() -> dict[str, Any]:
    """The parsed `~/.neo/config.json` ({} when missing or unreadable)."""
    try:
        data = safejson.loads((neo_home() / "config.json").read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def command_line_config(environ: Mapping[str, str] | None = None) -> list[tuple[str, str | None]]:
    """The settings given on git's command line, in git's order: `GIT_CONFIG_COUNT` with
    `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`, then `GIT_CONFIG_PARAMETERS` (what `git -c k=v`
    passes to the command it runs: `git -c neo.godFileLines=100 neo health`). libgit2, which
    reads the repository's config for us, knows neither. A value of None is `-c key` alone (true)."""
    env = os.environ if environ is None else environ
    entries: list[tuple[str, str | None]] = []
    count = env.get("GIT_CONFIG_COUNT", "")
    for i in range(int(count) if count.isascii() and count.isdigit() else 0):
        key, value = env.get(f"GIT_CONFIG_KEY_{i}"), env.get(f"GIT_CONFIG_VALUE_{i}")
        if not key or value is None:
            break   # git itself refuses to run with a missing pair
        entries.append((key, value))
    return entries + _parameters(env.get("GIT_CONFIG_PARAMETERS", ""))


def _quoted(text: str, at: int) -> tuple[str | None, int]:
    """A string single-quoted as git's sq_quote writes it (`'` as `'\\''`, `!` as `'\\!'`)
    starting at *at*; (None, at) when there is none."""
    if text[at:at + 1] != "'":
        return None, at
    out, i = [], at + 1
    while i < len(text):
        end = text.find("'", i)
        if end < 0:
            return None, at          # unterminated: not git's encoding
        out.append(text[i:end])
        i = end + 1
        if text[i:i + 1] == "\\" and text[i + 1:i + 2] in ("'", "!") and text[i + 2:i + 3] == "'":
            out.append(text[i + 1])
            i += 3
            continue
        return "".join(out), i
    return None, at


def _parameters(text: str) -> list[tuple[str, str | None]]:
    """`GIT_CONFIG_PARAMETERS`: `'key'='value'` (git 2.31+; `'key'=` alone for `-c key`) or the
    older `'key=value'`, separated by spaces. Parsing stops at anything else."""
    entries: list[tuple[str, str | None]] = []
    i = 0
    while True:
        while text[i:i + 1].isspace():
            i += 1
        first, i = _quoted(text, i)
        if first is None:
            return entries
        if text[i:i + 1] == "=":
            value, i = _quoted(text, i + 1)
            entries.append((first, value))
        else:
            key, sep, value = first.partition("=")
            entries.append((key, value if sep else None))


def _same_key(given: str, key: str) -> bool:
    """git's comparison of a two-level key (`neo.godFileLines`): case-insensitive."""
    return given.lower() == key.lower()


def _command_line_value(key: str) -> tuple[bool, str | None]:
    """(found, value) of *key* among the command-line settings (the last one wins, as in git)."""
    found, value = False, None
    for given, given_value in command_line_config():
        if _same_key(given, key):
            found, value = True, "true" if given_value is None else given_value
    return found, value


def _git_value(key: str, repo: pygit2.Repository | None) -> str | None:
    if repo is not None:
        found, value = _command_line_value(key)
        if found:
            return value
        try:
            value = repo.config[key]
        except KeyError:
            return None
        except Exception:  # noqa: BLE001 - an unreadable config means "not configured"
            return None
        return value if isinstance(value, str) else None
    from neo_git.gitrun import run_git

    try:
        proc = run_git(["config", "--get", key], check=False, timeout=5)
    except Exception:  # noqa: BLE001 - git missing or slow: not configured
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


# T includes None when no default is given
def neo_config(name: str, default: T = None, *, repo: pygit2.Repository | None = None,  # type: ignore[assignment]
               cast: Callable[[Any], T] | None = None) -> T:
    """The setting `neo.<name>` (e.g. "maxEffort"): git config, then config.json, then *default*.
    With *cast*, a value that does not convert gives *default*, with one warning on stderr."""
    key = name if name.startswith("neo.") else f"neo.{name}"
    short = key[4:]
    raw: Any = _git_value(key, repo)
    if raw is None:
        values = config_file_values()
        raw = values.get(short)
        if raw is None:
            lowered = {k.lower(): v for k, v in values.items() if isinstance(k, str)}
            raw = lowered.get(short.lower())  # git config keys are case-insensitive
    if raw is None:
        return default
    if cast is None:
        return raw
    try:
        return cast(raw)
    except (TypeError, ValueError) as exc:
        _warn_once(key, f"{key} is not valid ({exc}); using {default!r}")
        return default


_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    """One `warning:` line per setting and process: a bad value is the user's to fix, and must
    never fail the command or hook that reads it (git's own `fatal: bad numeric config value`
    would break every commit)."""
    import sys

    if key.lower() in _warned:
        return
    _warned.add(key.lower())
    try:
        print(f"warning: {message}", file=sys.stderr)
    except (OSError, ValueError):   # no stderr to tell: the default is used all the same
        pass


def neo_config_list(name: str, *, repo: pygit2.Repository | None = None) -> list[str]:
    """A multi-valued `neo.<name>`: every value git config holds (all levels, in git's order),
    then the list under the short name in ~/.neo/config.json. Non-strings are left out."""
    key = name if name.startswith("neo.") else f"neo.{name}"
    values: list[str] = []
    if repo is not None:
        try:
            values += [v for v in repo.config.get_multivar(key) if isinstance(v, str)]
        except Exception:  # noqa: BLE001 - an unreadable config means "not configured"
            pass
        values += ["true" if v is None else v for k, v in command_line_config() if _same_key(k, key)]
    else:
        from neo_git.gitrun import run_git

        try:
            proc = run_git(["config", "--get-all", key], check=False, timeout=5)
            values += [line for line in proc.stdout.splitlines() if line.strip()] if proc.returncode == 0 else []
        except Exception:  # noqa: BLE001 - git missing or slow: not configured
            pass
    extra = config_file_values().get(key[4:])
    if isinstance(extra, list):
        values += [v for v in extra if isinstance(v, str)]
    return values


class ConfigValues:
    """Settings as one `git config --get-regexp` printed them: the `config` of a repository
    stand-in (`health/plumbing.py`), for a process that never loads pygit2 (the pre-commit
    hook). Like libgit2's view it leaves out `git -c` settings, which `neo_config` and
    `neo_config_list` add from the environment themselves. Keys compare case-insensitively
    (git's two-level keys); a key written without a value reads as None."""

    # `git config` printing the neo.* settings; the command-line settings (`git -c`) git passes
    # down in the environment are left out, to neo_config
    ARGS = ("config", "-z", "--get-regexp", r"^neo\.")
    ENV = {"GIT_CONFIG_PARAMETERS": "", "GIT_CONFIG_COUNT": "0"}

    def __init__(self, entries: Iterable[tuple[str, str | None]]) -> None:
        self._values: dict[str, list[str | None]] = {}
        for key, value in entries:
            self._values.setdefault(key.lower(), []).append(value)

    @classmethod
    def read(cls) -> ConfigValues:
        """The neo.* settings, from every level git reads, in git's order (`ARGS` run now)."""
        from neo_git.gitrun import run_git

        proc = run_git(list(cls.ARGS), check=False, timeout=10, text=False, env=cls.ENV)
        return cls.parse(proc.stdout if proc.returncode == 0 else b"")   # 1: no such key

    @classmethod
    def parse(cls, output: bytes) -> ConfigValues:
        """The values `git config -z --get-regexp` printed."""
        entries = []
        for item in output.split(b"\0"):
            if item:
                key, newline, value = item.decode("utf-8", "surrogateescape").partition("\n")
                entries.append((key, value if newline else None))
        return cls(entries)

    def __getitem__(self, key: str) -> str | None:
        values = self._values.get(key.lower())
        if not values:
            raise KeyError(key)
        return values[-1]

    def get_multivar(self, key: str) -> list[str]:
        """Every value of *key*, in git's order (keys without a value left out)."""
        return [v for v in self._values.get(key.lower(), []) if v is not None]


def as_bool(value: Any) -> bool:
    """git's boolean spellings (true/yes/on/1, false/no/off/0)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"not a boolean: {value!r}")


MAX_INT = 2 ** 31 - 1   # git's own range for `git config --int`


def as_positive_int(value: Any, maximum: int = MAX_INT) -> int:
    """A whole number from 1 to *maximum* (git's k/m/g suffixes accepted)."""
    if isinstance(value, bool) or isinstance(value, float):
        raise ValueError("not a whole number")
    text = str(value).strip().lower()
    scale = {"k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}.get(text[-1:], 1)
    digits = text[:-1] if scale > 1 else text
    # No leading zero: git reads "010" as octal (8), Python as 10; neither is what was meant.
    if not digits.isascii() or not digits.isdigit() or digits.startswith("0") or len(digits) > 12:
        raise ValueError(f"not a whole number from 1 to {maximum}")
    number = int(digits) * scale
    if not 1 <= number <= maximum:
        raise ValueError(f"not a whole number from 1 to {maximum}")
    return number


# Settings an earlier release read and this one does not: internal tuning, now module constants
# (agents/turns.py FRESH_SECONDS and TTL_SECONDS, agents/context.py AGENT_TOKENS,
# outcomes/processing.py SUGGESTION_DAYS). One still set gets a one-line notice per command.
RETIRED = ("turnFreshSeconds", "turnTtlSeconds", "agentContextTokens", "suggestionDays")


def retired_notices() -> list[str]:
    """A `notice:` line for each retired setting still set, in git config (any level, `-c`
    included) or in ~/.neo/config.json: never an error, the value is simply not read."""
    from neo_git.gitrun import run_git

    found: set[str] = set()
    pattern = "^neo\\.(" + "|".join(key.lower() for key in RETIRED) + ")$"   # git lower-cases the key
    try:
        proc = run_git(["config", "--get-regexp", pattern], check=False, timeout=5)
        if proc.returncode == 0:
            found.update(line.split(" ", 1)[0][4:] for line in proc.stdout.splitlines())
    except NeoError:   # git missing or slow: nothing to say
        pass
    try:
        found.update(key.lower() for key in config_file_values() if isinstance(key, str))
    except NeoError:   # NEO_HOME unusable: the command itself says so
        pass
    return [f"notice: neo.{key} is no longer read (a fixed value now); `git config --unset neo.{key}` "
            "(or ~/.neo/config.json) removes it" for key in RETIRED if key.lower() in found]


def config_bool(name: str, default: bool, *, repo: pygit2.Repository | None = None) -> bool:
    """A boolean `neo.*` setting."""
    return neo_config(name, default, repo=repo, cast=as_bool)


def config_int(name: str, default: int, *, repo: pygit2.Repository | None = None,
               maximum: int = MAX_INT) -> int:
    """A whole-number `neo.*` setting from 1 to *maximum* (else *default*, with one warning)."""
    return neo_config(name, default, repo=repo, cast=lambda value: as_positive_int(value, maximum))
