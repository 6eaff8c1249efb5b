"""Pending suggestions: advice recorded before code ships, so the hooks can tell later
whether it was taken (docs/architecture.md §7).

One JSON file per repository, `.git/neo/suggestions.json` (the common dir, so linked
worktrees share it), local and never pushed. Every write happens under an exclusive lock,
re-reads the file and applies the change to what is there now, then replaces it
atomically, so a hook, an agent and a terminal recording at once lose nothing. A file
that does not parse is moved aside and reported, never overwritten.

Whoever made the suggestion records it through `record_suggestion`: a person
(`git neo suggest`), `git neo ask`, or an agent's edit (origin "agent", with its
agent name, session and turn).
"""
from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from neo_git.errors import NeoError
from neo_git.facts import check_id, new_fact_id, now_iso
from neo_git.fileio import atomic_write, locked, read_json_list
from neo_git.identity import RepositoryPaths
from neo_git.redact import redact

FILE_NAME = "suggestions.json"
FORMAT_VERSION = 1
ORIGINS = ("person", "ask", "agent")
STATUSES = ("pending", "accepted", "modified", "superseded", "abandoned", "expired")
MAX_CODE_CHARS = 256 * 1024
MAX_DESCRIPTION_CHARS = 2000
MAX_KEPT = 1000          # newest suggestions kept in the file (pending ones first)


@dataclass(frozen=True)
class Suggestion:
    """One piece of advice about one file, and (once processed) what became of it."""

    id: str
    file: str                          # repository-relative, forward slashes
    code: str | None = None            # the code block suggested (or written by an agent)
    diff: str | None = None            # a unified diff, when the advice came as one
    description: str = ""
    fact_ids: tuple[str, ...] = ()     # facts the advice relied on (named, or given for its file)
    origin: str = "person"             # person | ask | agent
    agent: str | None = None           # e.g. "claude", "codex" (origin agent)
    session_id: str | None = None
    turn_id: str | None = None
    author: str = ""
    created_at: str = ""
    head: str | None = None            # HEAD when it was made (full hex), None when unborn
    status: str = "pending"
    outcome: dict | None = field(default=None)   # filled by outcome processing
    # Facts that were in the agent's context when it made the edit, not tied to it: an outcome
    # moves one only if it cites, or is scoped to, the file (None: recorded by a version that
    # did not keep them apart, when an agent's fact_ids were all of its turn's facts).
    context_ids: tuple[str, ...] | None = None

    def to_dict(self) -> dict:
        """The JSON form stored in the file."""
        data = asdict(self)
        data["fact_ids"] = list(self.fact_ids)
        if self.context_ids is None:
            del data["context_ids"]   # absent, as an older version wrote it (not "none in context")
        else:
            data["context_ids"] = list(self.context_ids)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Suggestion:
        """Validate one stored entry (ValueError when it is not a suggestion)."""
        if not isinstance(data, dict):
            raise ValueError("not an object")
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        known["fact_ids"] = tuple(known.get("fact_ids") or ())
        if known.get("context_ids") is not None:
            if not isinstance(known["context_ids"], list):
                raise ValueError("bad context_ids")
            known["context_ids"] = tuple(known["context_ids"])
        suggestion = cls(**known)
        _validate(suggestion)
        return suggestion


def suggestions_path(paths: RepositoryPaths) -> Path:
    """`.git/neo/suggestions.json` of this repository (shared by its worktrees)."""
    return paths.neo_dir / FILE_NAME


def normalise_path(file: str, workdir: Path | None = None) -> str:
    """A repository-relative path with forward slashes; absolute paths inside the work tree
    are made relative. Refuses paths that leave the repository."""
    if not isinstance(file, str) or not file.strip():
        raise NeoError("a suggestion needs the file it is about", "pass --file PATH")
    text = file.strip().replace("\\", "/")
    if text.startswith("/"):
        if workdir is None:
            raise NeoError(f"{file} is an absolute path", "give the path relative to the repository root")
        try:
            text = Path(text).resolve().relative_to(workdir.resolve()).as_posix()
        except ValueError:
            raise NeoError(f"{file} is outside the repository ({workdir})",
                           "suggestions are about files of this repository") from None
    clean = posixpath.normpath(text)
    if clean in (".", "") or clean.startswith("../") or clean == "..":
        raise NeoError(f"{file} is not a file inside the repository", "give a path relative to the repository root")
    return clean


def _validate(s: Suggestion) -> None:
    check_id(s.id, "suggestion id")
    if not isinstance(s.file, str) or not s.file or s.file.startswith(("/", "../")):
        raise ValueError(f"bad file {s.file!r}")
    for name in ("code", "diff"):
        value = getattr(s, name)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_CODE_CHARS):
            raise ValueError(f"bad {name}")
    if not isinstance(s.description, str) or len(s.description) > MAX_DESCRIPTION_CHARS:
        raise ValueError("bad description")
    for fact_id in s.fact_ids + (s.context_ids or ()):
        if not isinstance(fact_id, str):
            raise ValueError("bad fact id")
        check_id(fact_id, "fact id")
    if s.origin not in ORIGINS:
        raise ValueError(f"bad origin {s.origin!r}")
    if s.status not in STATUSES:
        raise ValueError(f"bad status {s.status!r}")
    for name in ("agent", "session_id", "turn_id", "head"):
        value = getattr(s, name)
        if value is not None and (not isinstance(value, str) or len(value) > 200):
            raise ValueError(f"bad {name}")
    if s.outcome is not None and not isinstance(s.outcome, dict):
        raise ValueError("bad outcome")


def _read(path: Path, have_lock: bool) -> tuple[list[Suggestion], list]:
    """(valid suggestions, raw entries that did not validate, kept verbatim)."""
    rows = read_json_list(path, "suggestions", have_lock=have_lock, what="suggestions file",
                          hint="pending suggestions in it are not lost: fix the JSON and move it back")
    if rows is None:
        return [], []
    good, bad = [], []
    for raw in rows:
        try:
            good.append(Suggestion.from_dict(raw))
        except (ValueError, TypeError, NeoError):
            bad.append(raw)
    return good, bad


def load_suggestions(paths: RepositoryPaths, status: str | None = None) -> list[Suggestion]:
    """Every recorded suggestion (optionally of one status), oldest first."""
    found, _ = _read(suggestions_path(paths), have_lock=False)
    return [s for s in found if status is None or s.status == status]


def update_suggestions(paths: RepositoryPaths,
                       change: Callable[[list[Suggestion]], list[Suggestion] | None]) -> list[Suggestion]:
    """Apply *change* (current list -> new list, or None for no write) under the lock and
    save atomically; returns what is stored afterwards."""
    path = suggestions_path(paths)
    with locked(path.with_name(path.name + ".lock")):
        current, bad = _read(path, have_lock=True)
        updated = change(list(current))
        if updated is None:
            return current
        pending = [s for s in updated if s.status == "pending"]
        done = [s for s in updated if s.status != "pending"]
        kept = sorted((pending + done)[:MAX_KEPT] if len(updated) > MAX_KEPT else updated,
                      key=lambda s: (s.created_at, s.id))
        envelope = {"version": FORMAT_VERSION, "suggestions": [s.to_dict() for s in kept] + bad}
        # ensure_ascii: a file name that is not UTF-8 (a lone surrogate in Python) stays an escape.
        atomic_write(path, (json.dumps(envelope, indent=1, ensure_ascii=True, sort_keys=True) + "\n").encode())
        return kept


def _head(repo) -> str | None:
    try:
        return None if repo.head_is_unborn else str(repo.head.target)
    except Exception:  # noqa: BLE001 - a broken HEAD only means "unknown"
        return None


def record_suggestion(repo, paths: RepositoryPaths, *, file: str, code: str | None = None,
                      diff: str | None = None, description: str = "", fact_ids: Sequence[str] = (),
                      origin: str = "person", agent: str | None = None, session_id: str | None = None,
                      turn_id: str | None = None, author: str | None = None,
                      context_ids: Sequence[str] | None = None) -> Suggestion:
    """Record one pending suggestion about *file*; returns it. Needs a code block or a diff.
    *fact_ids*: the facts it relies on; *context_ids*: facts that were merely in the agent's
    context (moved by an outcome only when they are about *file*)."""
    from neo_git.identity import author_identity

    if not (code and code.strip()) and not (diff and diff.strip()):
        raise NeoError("a suggestion needs the code it suggests or a diff", "pass --code-file or --diff-file")
    for name, value in (("code", code), ("diff", diff)):
        if value is not None and len(value) > MAX_CODE_CHARS:
            raise NeoError(f"the suggested {name} is too large ({len(value):,} characters, "
                           f"at most {MAX_CODE_CHARS:,})", "suggest the part that changes")
    if origin not in ORIGINS:
        raise NeoError(f"unknown suggestion origin '{origin}'", "use one of: " + ", ".join(ORIGINS))
    ids = []
    for fact_id in fact_ids:
        try:
            ids.append(check_id(str(fact_id).strip().lower(), "fact id"))
        except NeoError as exc:
            raise NeoError(exc.message, "give full 16-hex fact ids (`git neo list` shows them)") from None
    # Kept under .git/neo and quoted into outcome notes (which sync pushes): redacted here, once.
    code, diff, description = (redact(code) if code else code), (redact(diff) if diff else diff), \
        redact(description or "")
    suggestion = Suggestion(
        id=new_fact_id(), file=normalise_path(file, paths.workdir), code=code, diff=diff,
        description=description[:MAX_DESCRIPTION_CHARS], fact_ids=tuple(dict.fromkeys(ids)),
        origin=origin, agent=agent, session_id=session_id, turn_id=turn_id,
        author=author or author_identity(repo), created_at=now_iso(), head=_head(repo),
        context_ids=tuple(i for i in dict.fromkeys(context_ids or ()) if i not in ids))
    _validate(suggestion)
    update_suggestions(paths, lambda current: current + [suggestion])
    return suggestion


def resolve_fact_ids(store, fact_ids: Sequence[str], *, strict: bool = True) -> tuple[str, ...]:
    """The full ids of the facts a suggestion relies on: each may be a unique prefix (≥ 4 hex
    digits, as `recall` and `list` print them). An unknown, ambiguous or no longer valid fact
    is refused with a clear error (*strict*), or left out (advice a model gave, which cited it).
    A superseded fact must never be linked: a later commit would raise its confidence."""
    from neo_git.errors import FactNotFound

    facts = store.list(include_invalid=True)
    out: list[str] = []
    for raw in fact_ids:
        wanted = str(raw).strip()
        try:
            fact = store._find(wanted, facts)
        except FactNotFound:
            if strict:
                raise NeoError(f"no fact '{wanted}'", "pass an id (or a unique prefix of ≥ 4 hex digits) that "
                                                      "`git neo list` shows") from None
            continue
        except NeoError:
            if strict:
                raise
            continue
        if not fact.is_valid:
            if strict:
                now = f"; it was superseded by {fact.superseded_by}" if fact.superseded_by else ""
                raise NeoError(f"fact {fact.id} is no longer valid{now}",
                               "a suggestion can rely only on facts that are still true; "
                               + (f"pass {fact.superseded_by} instead" if fact.superseded_by
                                  else "`git neo restore` it first if it is true again"))
            continue
        if fact.id not in out:
            out.append(fact.id)
    return tuple(out)


