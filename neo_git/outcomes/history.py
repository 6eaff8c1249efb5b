"""Reading outcomes back: recent ones for `git neo outcomes`, one fact's for `git neo show`.

The notes on `refs/notes/neo` are the record (shared by `git neo sync`); the local
suggestions file adds pending ones nobody has shipped yet.
"""
from __future__ import annotations

from collections.abc import Iterable

from neo_git.outcomes.note_records import clean_record
from neo_git.store.notes import NOTES_REF, iter_notes


def outcome_records(repo, ref: str = NOTES_REF) -> list[dict]:
    """Every outcome record on the notes ref, newest first (de-duplicated by id: an amended
    commit carries its predecessor's lines too)."""
    seen: dict[object, dict] = {}
    for annotated, records in iter_notes(repo, ref):
        for record in map(clean_record, records):   # a teammate's note: outside input
            if record is None or record.get("type") != "outcome":
                continue
            key = record.get("id")
            if key not in seen:
                seen[key] = {**record, "note_on": annotated}
    return sorted(seen.values(), key=lambda r: (str(r.get("ts", "")), str(r.get("id"))), reverse=True)


def recent_outcomes(repo, limit: int = 20) -> list[dict]:
    """The newest *limit* outcome records."""
    return outcome_records(repo)[:limit]


def fact_outcome_history(repo, fact_id: str, records: Iterable[dict] | None = None) -> list[dict]:
    """The commits that moved *fact_id*'s confidence, oldest first:
    [{"commit", "ts", "verdict", "suggestion", "file", "health", "confidence": [a, b],
      "success_count": [a, b]}]."""
    out = []
    for record in records if records is not None else outcome_records(repo):
        for moved in record.get("facts") or ():
            if isinstance(moved, dict) and moved.get("id") == fact_id:
                out.append({"commit": record.get("commit"), "ts": record.get("ts"),
                            "verdict": record.get("verdict"), "suggestion": record.get("suggestion"),
                            "file": record.get("file"), "health": record.get("health"),
                            "confidence": moved.get("confidence"), "success_count": moved.get("success_count"),
                            "origin": record.get("origin"), "agent": record.get("agent")})
    return sorted(out, key=lambda r: str(r.get("ts", "")))


def agent_summary(records: Iterable[dict]) -> dict[str, dict]:
    """Per agent (and per agent session): how many of its recorded edits shipped as written
    (accepted) or were changed by a person first (modified)."""
    summary: dict[str, dict] = {}
    for record in records:
        if record.get("type") != "outcome" or record.get("origin") != "agent":
            continue
        verdict = record.get("verdict")
        if verdict not in ("accepted", "modified"):
            continue
        agent = str(record.get("agent") or "?")
        row = summary.setdefault(agent, {"accepted": 0, "modified": 0, "sessions": {}})
        row[verdict] += 1
        session = row["sessions"].setdefault(str(record.get("session_id") or "?"), {"accepted": 0, "modified": 0})
        session[verdict] += 1
    for row in summary.values():
        total = row["accepted"] + row["modified"]
        row["shipped_unchanged"] = round(row["accepted"] / total, 3) if total else None
    return summary
