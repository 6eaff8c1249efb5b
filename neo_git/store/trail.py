"""What `git neo why` learns from the ref's log: the upkeep that touched a fact.

Two upkeep actions leave no mark a fact could explain by itself: a demotion
(the fact stays valid, only its confidence drops) and a purge (the fact is gone
from the tip). Both commits say why, one line per fact, so `why` reads them back
with `git log refs/neo/facts -- facts/ab/<id>.json` (the project scope only: the
file-backed scopes have no history).
"""
from __future__ import annotations

import re
from pathlib import Path

from neo_git import safejson
from neo_git.gitrun import GitCommandError, run_git
from neo_git.store.refstore import FACTS_REF, fact_path

_PREFIX = re.compile(r"^[0-9a-f]{4,16}$")


def _git(common_dir: Path, *args: str) -> str:
    try:
        return run_git(["--git-dir", str(common_dir), *args], timeout=30).stdout
    except GitCommandError:  # no ref yet, or an unreadable history: nothing to add
        return ""


def upkeep_lines(common_dir: Path, fact_id: str, limit: int = 5) -> list[str]:
    """The upkeep lines about *fact_id* on the ref, newest first: "<date> <step> <id> …: why"."""
    out = _git(common_dir, "log", f"-n{limit}", "--grep=^upkeep: ", "--format=%x1e%cI%x1f%B",
               FACTS_REF, "--", fact_path(fact_id))
    lines = []
    for record in filter(None, out.split("\x1e")):
        date, _, body = record.partition("\x1f")
        lines += [f"{date.strip()} {line}" for line in body.splitlines()
                  if line.startswith(tuple(f"{s} {fact_id} " for s in ("demote", "prune", "evict", "synthesize")))]
    return lines


def add_upkeep_trail(info: dict, common_dir: Path, fact_id: str) -> dict:
    """Add to an explanation (`store.explain`) what upkeep did to a still-valid fact."""
    lines = upkeep_lines(common_dir, fact_id)
    if lines:
        info["upkeep"] = lines
        info["explanation"] += " Upkeep: " + "; ".join(lines) + "."
    return info


def explain_purged(common_dir: Path, fact_id: str) -> dict | None:
    """Why a fact that is no longer on the tip is gone (the upkeep purge that removed it, and
    its last version), or None when the ref's history never removed such a fact."""
    wanted = (fact_id or "").strip().lower()
    if not _PREFIX.match(wanted):
        return None
    pattern = f"facts/{wanted[:2]}/{wanted}{'' if len(wanted) == 16 else '*'}.json"
    out = _git(common_dir, "log", "--diff-filter=D", "--format=%x1e%H", "--name-only", FACTS_REF, "--", pattern)
    found: dict[str, str] = {}  # id -> newest commit that removed it
    for record in filter(None, out.split("\x1e")):
        commit, *paths = record.split()
        for path in paths:
            found.setdefault(Path(path).stem, commit)
    if len(found) != 1:
        return None  # never removed, or an ambiguous prefix: FactNotFound says it best
    full_id, commit = next(iter(found.items()))
    date, _, body = _git(common_dir, "show", "-s", "--format=%cI%x1f%B", commit).partition("\x1f")
    # A detail line reads `purge <id> "<subject>": <why>`; the subject may hold ": ", our why never '": '.
    line = re.compile(rf'^\w+ {full_id} ".*": (.*)$')
    reasons = [m.group(1) for m in map(line.match, body.splitlines()) if m]
    why = reasons[0] if reasons else (body.splitlines() or [""])[0]
    subject = ""
    try:
        subject = safejson.loads(_git(common_dir, "show", f"{commit}^:{fact_path(full_id)}") or "{}").get("subject", "")
    except ValueError:
        pass
    return {"id": full_id, "subject": subject, "is_valid": False, "state": "purged", "at": date.strip(),
            "commit": commit, "detail": why,
            "explanation": f"{full_id} was purged from {FACTS_REF} by {commit[:12]} on {date.strip()}: {why}. "
                           f"Its last version: `git show {commit[:12]}^:{fact_path(full_id)}`."}
