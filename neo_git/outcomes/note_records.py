"""What a note line from a teammate may hold before `git neo outcomes`, `show` or `report`
reads it: notes arrive with `git neo sync`, so their fields are outside input.

A record whose `id` or `type` is not a string is dropped; any other known field of the wrong
type is left out (the rest of the record still counts); a moved fact needs a string id and,
for its confidence and successes, pairs of finite numbers."""
from __future__ import annotations

import math
from typing import Any

# Fields shown or counted, and the type each must have (None is allowed for every one).
_STRINGS = ("ts", "verdict", "commit", "suggestion", "file", "suggested_file", "description", "origin",
            "agent", "session_id", "turn_id", "author", "suggested_at", "health", "note_on", "trigger",
            "amends")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) >= 2 and all(_number(v) for v in value[:2])


def _moved_fact(value: Any) -> dict | None:
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        return None
    clean = dict(value)
    for key in ("confidence", "success_count"):
        if key in clean and not _pair(clean[key]):
            del clean[key]
    return clean


def clean_record(record: Any) -> dict | None:
    """*record* with ill-typed fields left out, or None when it cannot be a record at all."""
    if not isinstance(record, dict) or not isinstance(record.get("id"), str) \
            or not isinstance(record.get("type", ""), str):
        return None
    clean = {k: v for k, v in record.items()
             if not (k in _STRINGS and v is not None and not isinstance(v, str))}
    if "facts" in clean:
        moved = clean["facts"]
        clean["facts"] = [m for m in map(_moved_fact, moved) if m is not None] if isinstance(moved, list) else []
    for key in ("match",):
        if key in clean and not isinstance(clean[key], dict):
            del clean[key]
    if "health_reasons" in clean and not (isinstance(clean["health_reasons"], list)
                                          and all(isinstance(r, str) for r in clean["health_reasons"])):
        clean["health_reasons"] = []
    return clean
