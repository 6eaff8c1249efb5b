"""What a processed commit writes besides facts: the health deltas it carried, the records of
its note on `refs/notes/neo` (one per commit, one per classified suggestion, with ids derived
from the commit so a repeat writes nothing new), and the statuses of the suggestions it
settled (`outcomes/processing.py` runs the loop)."""
from __future__ import annotations

import hashlib
import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from neo_git.identity import RepositoryPaths
from neo_git.outcomes.suggestions import Suggestion, update_suggestions
from neo_git.store import notes

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.outcomes.changes import FileChange

log = logging.getLogger("neo_git.outcomes")


def health_deltas(repo: pygit2.Repository, commit: pygit2.Commit, classified, independent) -> dict:
    """{"": whole-commit delta, suggestion id: delta restricted to its file} as small dicts."""
    if not commit.parents:
        return {}
    try:
        from neo_git.health import health_delta, snapshot_commit
        from neo_git.health.delta import counts_every_edge

        before = snapshot_commit(repo, str(commit.parents[0].id))
        after = snapshot_commit(repo, str(commit.id))
        every_edge = counts_every_edge(repo)
    except Exception as exc:  # noqa: BLE001 - health is evidence, not a precondition
        log.warning("health not measured for %s: %s", str(commit.id)[:12], exc)
        return {}
    out = {"": delta_dict(health_delta(before, after, every_edge=every_edge))}
    for suggestion, change, _ in classified:
        out[suggestion.id] = delta_dict(health_delta(before, after, paths={change.path, suggestion.file},
                                                     every_edge=every_edge))
    return out


def delta_dict(delta) -> dict:
    return {"verdict": delta.verdict, "reasons": list(delta.reasons)[:4], "files": list(delta.files)[:10]}


def record_id(commit: str, *parts: str) -> str:
    return hashlib.sha1(":".join((commit,) + parts).encode()).hexdigest()[:16]


def commit_record(hexid: str, trigger: str, ts: str, health: dict, rewrite_of: str | None) -> dict:
    record = {"v": notes.NOTE_VERSION, "id": record_id(hexid, "commit"), "ts": ts, "type": "commit",
              "commit": hexid, "trigger": trigger, "health": health.get("verdict"),
              "health_reasons": health.get("reasons", [])}
    if rewrite_of:
        record["amends"] = rewrite_of
    return record


def outcome_record(hexid: str, ts: str, suggestion: Suggestion, change: FileChange, match: dict,
                    health: dict | None, moved: list[dict], revised_by: str | None = None) -> dict:
    record = {
        "v": notes.NOTE_VERSION, "id": record_id(hexid, "suggestion", suggestion.id), "ts": ts,
        "type": "outcome", "verdict": match["verdict"], "commit": hexid, "suggestion": suggestion.id,
        "file": change.path, "suggested_file": suggestion.file, "description": suggestion.description[:200],
        "origin": suggestion.origin, "agent": suggestion.agent, "session_id": suggestion.session_id,
        "turn_id": suggestion.turn_id, "author": suggestion.author, "suggested_at": suggestion.created_at,
        "match": match, "health": (health or {}).get("verdict"), "health_reasons": (health or {}).get("reasons", []),
        "facts": moved,
    }
    if revised_by:
        record["revised_by"] = revised_by   # its author's later edit shipped instead: nothing moved
    return record


def revert_record(hexid: str, ts: str, outcome, moved: list[dict]) -> dict:
    """The note line of a suggestion a revert commit took back out."""
    return {"v": notes.NOTE_VERSION, "id": record_id(hexid, "reverted", outcome.suggestion_id), "ts": ts,
            "type": "outcome", "verdict": "reverted", "commit": hexid, "suggestion": outcome.suggestion_id,
            "file": outcome.file, "suggested_file": outcome.suggested_file,
            "description": outcome.description[:200], "facts": moved}


def set_statuses(paths: RepositoryPaths, classified, records: list[dict]) -> None:
    by_suggestion = {r.get("suggestion"): r for r in records if r.get("suggestion")}

    def change(current: list[Suggestion]) -> list[Suggestion] | None:
        wanted = {s.id for s, _, _ in classified}
        if not wanted:
            return None
        out = []
        for s in current:
            if s.id in wanted and s.status == "pending":
                record = by_suggestion[s.id]
                s = replace(s, status=record["verdict"], outcome={
                    "commit": record["commit"], "verdict": record["verdict"], "file": record["file"],
                    "health": record["health"], "facts": record["facts"], "match": record["match"],
                    "processed_at": record["ts"]})
            out.append(s)
        return out

    update_suggestions(paths, change)
