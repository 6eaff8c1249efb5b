"""Turn records: has an agent really begun a turn, and is it still making progress?

A running harness can be wedged, rate-limited or frozen; the agent's own hooks are the
only reliable witness. Records are local to the clone (one file per agent session under
`.git/neo/turns/`, see turn_store; never the shared ref), one interval per turn:

    {turn_id, session_id, agent, started_at, last_progress_at, fresh_until, expires_at,
     terminal_state}

* start (prompt submit) opens a new interval: started_at = last_progress_at = now.
* progress (a file edit, a successful add_fact or suggest) refreshes last_progress_at and
  fresh_until of the newest open interval of that agent session, never started_at, and never
  opens one: progress is not a start signal.
* a terminal update (stop, session end, error) closes the newest open interval of that
  agent session with completed | interrupted | error.

Each turn also lists what memory put into the agent's context during it: `injected`, one
entry per hook that injected facts, `{"hook", "ids", "at"}` (the session start's facts are
listed on the session's first turn), so `git neo turns --show <session>` answers "why did
the agent believe X".

A turn is *active* while fresh, *stale* past fresh_until with no terminal state (possibly
wedged), *finished* once closed, *expired* past expires_at; expired rows are pruned on the
next write. Times are epoch seconds (floats) in the file, ISO 8601 when shown.
"""
from __future__ import annotations

import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone

from neo_git.agents import turn_store
from neo_git.errors import NeoError
from neo_git.identity import RepositoryPaths

FRESH_SECONDS = 300.0           # no progress for 5 minutes: the turn looks stale
TTL_SECONDS = 7 * 24 * 3600.0   # rows older than a week are pruned
TERMINAL_STATES = ("completed", "interrupted", "error")
_MAX_ID = 200
MAX_INJECTIONS = 64          # injection entries kept per turn (the newest)
MAX_INJECTED_IDS = 64        # fact ids kept per entry


@dataclass(frozen=True)
class Turn:
    """One agent turn, from its start signal to its terminal state."""

    turn_id: str
    session_id: str
    agent: str
    started_at: float
    last_progress_at: float
    fresh_until: float
    expires_at: float
    terminal_state: str | None = None
    ended_at: float | None = None
    injected: tuple[dict, ...] = ()    # {"hook", "ids", "at"} per injection, oldest first

    @property
    def facts_injected(self) -> int:
        """How many distinct facts the hooks injected into this turn (the report charts it)."""
        return len({i for entry in self.injected for i in entry.get("ids", ())})

    def status(self, now: float) -> str:
        """active | stale | finished | expired, as `git neo turns` shows it."""
        if now >= self.expires_at:
            return "expired"
        if self.terminal_state is not None:
            return "finished"
        return "active" if now < self.fresh_until else "stale"

    def to_row(self) -> dict:
        """The stored form (`dataclasses.asdict` without its deep copies: rows are rewritten often)."""
        row = {name: getattr(self, name) for name in _FIELDS}
        row["injected"] = [dict(entry) for entry in self.injected]
        return row

    def to_view(self, now: float) -> dict:
        """The JSON shape of `git neo turns --json`: ISO times plus status and age."""
        view = asdict(self)
        view["injected"] = [{**entry, "at": iso(entry["at"])} for entry in self.injected]
        for key in ("started_at", "last_progress_at", "fresh_until", "expires_at", "ended_at"):
            if view[key] is not None:
                view[key] = iso(view[key])
        view["status"] = self.status(now)
        view["seconds_since_progress"] = round(max(0.0, now - self.last_progress_at), 1)
        return view


_FIELDS = tuple(Turn.__dataclass_fields__)


def iso(epoch: float) -> str:
    """Epoch seconds as ISO 8601 UTC."""
    return datetime.fromtimestamp(epoch, timezone.utc).replace(microsecond=0).isoformat()


@dataclass(frozen=True)
class TurnSettings:
    """Freshness window and time to live (FRESH_SECONDS, TTL_SECONDS; tests shorten them)."""

    fresh_seconds: float = FRESH_SECONDS
    ttl_seconds: float = TTL_SECONDS


def _clean_id(value, what: str) -> str:
    text = str(value or "").strip()
    if not text or len(text) > _MAX_ID or any(ord(c) < 32 for c in text):
        raise NeoError(f"invalid {what} {value!r}", f"a {what} is a short printable string")
    return text


def _turns(rows: list[dict]) -> list[Turn]:
    """The well-formed rows as turns (a malformed row is dropped: turn records are local,
    derived observations)."""
    turns = []
    for raw in rows:
        try:
            fields = {k: raw[k] for k in _FIELDS if k in raw}
            fields["injected"] = _clean_injections(raw.get("injected"))
            turn = Turn(**fields)
            if not all(isinstance(getattr(turn, k), (int, float)) for k in
                       ("started_at", "last_progress_at", "fresh_until", "expires_at")):
                raise TypeError("times must be numbers")
        except (TypeError, KeyError):
            continue
        turns.append(turn)
    return turns


def _clean_injections(raw) -> tuple[dict, ...]:
    """Well-formed injection entries of a stored turn (the rest dropped: records are local)."""
    if not isinstance(raw, (list, tuple)):
        return ()
    out = []
    for entry in raw[-MAX_INJECTIONS:]:
        if not isinstance(entry, dict) or not isinstance(entry.get("hook"), str):
            continue
        ids = entry.get("ids")
        at = entry.get("at")
        if not isinstance(ids, list) or not isinstance(at, (int, float)) or isinstance(at, bool):
            continue
        out.append({"hook": entry["hook"][:40], "ids": [i for i in ids if isinstance(i, str)][:MAX_INJECTED_IDS],
                    "at": float(at)})
    return tuple(out)


def update_turns(paths: RepositoryPaths, agent: str, session_id: str,
                 change: Callable[[list[Turn]], list[Turn] | None], now: float | None = None) -> list[Turn]:
    """Apply *change* to one agent session's turns under its lock (None: nothing to write);
    expired rows are pruned, the file replaced atomically."""
    now = time.time() if now is None else now

    def on_rows(rows: list[dict]) -> list[dict] | None:
        updated = change(_turns(rows))
        return None if updated is None else [t.to_row() for t in updated]

    return _turns(turn_store.update_session(paths, agent, session_id, on_rows, now))


def _newest_open(turns: list[Turn], agent: str, session_id: str) -> int | None:
    for index in range(len(turns) - 1, -1, -1):
        turn = turns[index]
        if turn.agent == agent and turn.session_id == session_id and turn.terminal_state is None:
            return index
    return None


def start_turn(paths: RepositoryPaths, agent: str, session_id: str, *, turn_id: str | None = None,
               settings: TurnSettings = TurnSettings(), now: float | None = None) -> Turn:
    """Open a new turn for this agent session (the start signal: a prompt was submitted).
    An earlier turn of the same session still open is closed as interrupted."""
    now = time.time() if now is None else now
    agent, session_id = _clean_id(agent, "agent"), _clean_id(session_id, "session id")
    turn = Turn(turn_id=_clean_id(turn_id, "turn id") if turn_id else secrets.token_hex(8),
                session_id=session_id, agent=agent, started_at=now, last_progress_at=now,
                fresh_until=now + settings.fresh_seconds, expires_at=now + settings.ttl_seconds)

    def change(turns: list[Turn]) -> list[Turn]:
        open_index = _newest_open(turns, agent, session_id)
        if open_index is not None:  # a new prompt while the last turn never ended
            turns[open_index] = replace(turns[open_index], terminal_state="interrupted", ended_at=now)
        return turns + [turn]

    update_turns(paths, agent, session_id, change, now)
    turn_store.sweep(paths, now)   # other sessions' expired files, at most once an hour
    return turn


def _update_newest_open(paths: RepositoryPaths, agent: str, session_id: str, now: float | None,
                        update: Callable[[Turn, float], Turn]) -> Turn | None:
    """Apply *update* to the newest open turn of this agent session; None when none is open."""
    now = time.time() if now is None else now
    agent, session_id = _clean_id(agent, "agent"), _clean_id(session_id, "session id")
    out: list[Turn] = []

    def change(turns: list[Turn]) -> list[Turn] | None:
        index = _newest_open(turns, agent, session_id)
        if index is None:
            return None
        turns[index] = update(turns[index], now)
        out.append(turns[index])
        return turns

    update_turns(paths, agent, session_id, change, now)
    return out[0] if out else None


def progress_turn(paths: RepositoryPaths, agent: str, session_id: str, *,
                  settings: TurnSettings = TurnSettings(), now: float | None = None) -> Turn | None:
    """Refresh the newest open turn of this agent session; None when there is none (progress
    never opens a turn)."""
    return _update_newest_open(paths, agent, session_id, now, lambda turn, at: replace(
        turn, last_progress_at=at, fresh_until=max(turn.fresh_until, at + settings.fresh_seconds)))


def finish_turn(paths: RepositoryPaths, agent: str, session_id: str, state: str = "completed", *,
                now: float | None = None) -> Turn | None:
    """Close the newest open turn of this agent session with *state*; None when none is open."""
    if state not in TERMINAL_STATES:
        raise NeoError(f"unknown terminal state '{state}'", "use one of: " + ", ".join(TERMINAL_STATES))
    return _update_newest_open(paths, agent, session_id, now,
                               lambda turn, at: replace(turn, terminal_state=state, ended_at=at))


def record_injection(paths: RepositoryPaths, agent: str, session_id: str, hook: str, ids,
                     *, now: float | None = None) -> Turn | None:
    """Add "*hook* injected *ids*" to the newest open turn of this agent session (None when no
    turn is open: the ids are then not on record, as nothing was asked yet)."""
    wanted = [str(i) for i in ids][:MAX_INJECTED_IDS]
    if not wanted:
        return None

    def add(turn: Turn, at: float) -> Turn:
        entry = {"hook": str(hook)[:40], "ids": wanted, "at": at}
        return replace(turn, injected=(tuple(turn.injected) + (entry,))[-MAX_INJECTIONS:])

    return _update_newest_open(paths, agent, session_id, now, add)


def session_turns(turns: list[Turn], session: str) -> list[Turn]:
    """The turns of the agent session(s) whose id is *session* or starts with it, oldest first."""
    exact = [t for t in turns if t.session_id == session]
    return sorted(exact or [t for t in turns if t.session_id.startswith(session)], key=lambda t: t.started_at)


def load_turns(paths: RepositoryPaths) -> list[Turn]:
    """Every stored turn, oldest first (a corrupt session file reads as none, and is set aside)."""
    return sorted(_turns(turn_store.load_all(paths)), key=lambda t: (t.started_at, t.turn_id))


def newest_per_agent(turns: list[Turn]) -> list[Turn]:
    """The newest turn of each (agent, session), newest first."""
    newest: dict[tuple[str, str], Turn] = {}
    for turn in turns:
        key = (turn.agent, turn.session_id)
        if key not in newest or turn.started_at >= newest[key].started_at:
            newest[key] = turn
    return sorted(newest.values(), key=lambda t: t.started_at, reverse=True)


def detach_finish(agent: str, session_id: str, cwd: str, state: str) -> None:
    """Close a turn from a detached process (agents kill slow session-end hooks)."""
    subprocess.Popen(
        [sys.executable, "-m", "neo_git.cli", "hook", "agent", "finish-detached", f"--agent={agent}",
         f"--session={session_id}", f"--cwd={cwd}", f"--state={state}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True)
