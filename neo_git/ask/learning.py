"""Learning hooks of an answer: pending suggestions for the outcome loop, cited facts
marked used, and the comparison of consecutive questions.

Consecutive questions (state in `.git/neo/ask_state.json`, local): when a question comes
within REPEAT_WINDOW of the previous answered one and
    - is the same question again (same words, or cosine ≥ REPEAT_SIMILARITY): the
      previous answer did not help, so the facts it cited lose REPEAT_PENALTY confidence;
    - is related (RELATED_SIMILARITY ≤ cosine < REPEAT_SIMILARITY): the person moved on
      to the next step, so those facts gain RELATED_BONUS;
    - is unrelated: nothing changes.
Each previous answer is judged once. Confidence changes go through `store.transact`
(one commit per scope on the project ref, saying why).
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from neo_git import safejson
from neo_git.facts import now_iso
from neo_git.fileio import atomic_write, locked

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.ask.model import ProposedChange
    from neo_git.store import FactStore

STATE_NAME = "ask_state.json"
REPEAT_SIMILARITY = 0.9
RELATED_SIMILARITY = 0.25
REPEAT_WINDOW = timedelta(minutes=30)
REPEAT_PENALTY = 0.05
RELATED_BONUS = 0.02


def _state_path(store: FactStore) -> Path:
    assert store.paths is not None   # a store with a repository
    return store.paths.neo_dir / STATE_NAME


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _read_state(path: Path) -> dict:
    try:
        data = safejson.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}  # local, derived: a broken file only forgets the last question
    return data if isinstance(data, dict) else {}


def question_similarity(store: FactStore, a: str, b: str) -> float:
    """Cosine of two questions under the store's embedder (1.0 for the same words)."""
    if _words(a) == _words(b):
        return 1.0
    import numpy as np

    vectors = np.asarray(store.embedder.embed([a, b]), dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1)
    if not norms.all():
        return 0.0
    return float(vectors[0] @ vectors[1] / (norms[0] * norms[1]))


def judge_previous(store: FactStore, question: str, now: datetime | None = None) -> tuple[str, list[str]]:
    """Compare *question* with the previous answered one and adjust the confidence of the facts
    that answer cited; returns (repeat|related|unrelated|none, the ids adjusted)."""
    path = _state_path(store)
    now = now or datetime.now(timezone.utc)
    with locked(path.with_name(path.name + ".lock")):
        last = _read_state(path).get("last")
        if not isinstance(last, dict) or last.get("judged") or not isinstance(last.get("question"), str):
            return "none", []
        try:
            asked = datetime.fromisoformat(str(last.get("at")).replace("Z", "+00:00"))
        except ValueError:
            return "none", []
        if asked.tzinfo is None:
            asked = asked.replace(tzinfo=timezone.utc)
        if now - asked > REPEAT_WINDOW:
            return "none", []
        cited = [c for c in last.get("cited") or [] if isinstance(c, str)]
        similarity = question_similarity(store, last["question"], question)
        relation = ("repeat" if similarity >= REPEAT_SIMILARITY else
                    "related" if similarity >= RELATED_SIMILARITY else "unrelated")
        last["judged"] = relation
        atomic_write(path, (json.dumps({"last": last}, sort_keys=True) + "\n").encode(), durable=False)
    if relation == "unrelated" or not cited:
        return relation, []
    delta = -REPEAT_PENALTY if relation == "repeat" else RELATED_BONUS
    reason = ("asked again right after their answer" if relation == "repeat"
              else "a related follow-up question came next")
    return relation, adjust_confidence(store, cited, delta, reason)


def remember_question(store: FactStore, question: str, cited: Sequence[str]) -> None:
    """Keep the answered question and the facts its answer cited for the next comparison."""
    from neo_git.redact import redact

    path = _state_path(store)
    question = redact(question)[:2000]   # kept under .git/neo: redacted like everything written, before the cut
    with locked(path.with_name(path.name + ".lock")):
        atomic_write(path, (json.dumps({"last": {"question": question, "at": now_iso(),
                                                 "cited": list(cited), "judged": None}}, sort_keys=True)
                            + "\n").encode(), durable=False)


def adjust_confidence(store: FactStore, fact_ids: Sequence[str], delta: float, reason: str) -> list[str]:
    """Move the confidence of valid facts by *delta* (clamped to [0, 1]); returns the ids changed."""
    from neo_git.store import Change

    wanted = set(fact_ids)
    scopes = {f.scope for f in store.list() if f.id in wanted}
    changed: list[str] = []
    for scope in sorted(scopes, key=lambda s: s.value):
        def plan(facts, scope=scope):
            updated = []
            for fact_id in sorted(wanted):
                fact = facts.get(fact_id)
                if fact is None or not fact.is_valid or fact.scope is not scope:
                    continue
                value = round(min(1.0, max(0.0, fact.metadata.confidence + delta)), 4)
                if value != fact.metadata.confidence:
                    updated.append(fact.evolve(metadata={"confidence": value}))
            if not updated:
                return None
            sign = "+" if delta > 0 else "-"
            return Change(facts=tuple(updated), message=f"ask: confidence {sign}{abs(delta):g} for "
                          f"{len(updated)} fact(s): {reason}",
                          details=tuple(f"{f.id} -> {f.metadata.confidence:.2f}" for f in updated))

        change = store.transact(scope, plan)
        if change is not None:
            changed += [f.id for f in change.facts]
    return changed


def record_answer(store: FactStore, suggestions: Sequence[ProposedChange], cited: Sequence[str]) -> tuple[list[str], list[str]]:
    """Record each suggestion as pending (origin "ask", with the facts it cited, or the answer's
    citations when it names none) and mark the cited facts used; returns (suggestion ids, notes)."""
    from neo_git.errors import NeoError
    from neo_git.outcomes.suggestions import record_suggestion, resolve_fact_ids

    recorded, notes = [], []
    assert store.paths is not None   # a store with a repository
    for change in suggestions:
        try:
            # a model may cite a fact that is no longer true: it is left out, never linked
            relied = resolve_fact_ids(store, change.fact_ids or tuple(cited), strict=False)
            saved = record_suggestion(store.repo, store.paths, file=change.file, code=change.code, diff=change.diff,
                                      description=change.description, fact_ids=relied, origin="ask")
        except NeoError as exc:
            notes.append(f"suggestion for {change.file} not recorded: {exc.message}")
            continue
        recorded.append(saved.id)
    if cited:
        store.access.record(cited)
    return recorded, notes

