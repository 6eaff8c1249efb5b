"""Reading a model's reply leniently (JSON in a fence, prose around it) and validating it
like any input from outside: types, sizes, and only fact ids that were in the prompt."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from neo_git import safejson
from neo_git.ask.model import ProposedChange

MAX_STEPS = 30
MAX_STEP_CHARS = 2000
MAX_SUGGESTIONS = 20
MAX_PATH_CHARS = 400
MAX_CODE_CHARS = 256 * 1024
MAX_DESCRIPTION_CHARS = 2000
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)
_CITE = re.compile(r"\[fact:([0-9a-f]{16})\]")


class ReplyError(ValueError):
    """The reply is not the JSON object the stage asked for."""


@dataclass(frozen=True)
class Answer:
    """A validated answer/code/repair/plan reply."""

    plan: tuple[str, ...]
    suggestions: tuple[ProposedChange, ...]
    facts: tuple[str, ...]
    confidence: float
    files: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()        # what validation threw away, for the notes


@dataclass(frozen=True)
class Critique:
    """A validated critic reply."""

    verdict: str                         # accept | repair
    problems: tuple[str, ...]
    confidence: float


def extract_json(text: str) -> dict:
    """The first JSON object in *text*: a fenced block, the whole text, or the first balanced {…}."""
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("the reply is empty")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    start = text.find("{")
    while start != -1:
        end = _balanced_end(text, start)
        if end is None:
            break
        candidates.append(text[start:end])
        start = text.find("{", end)
    for candidate in candidates:
        try:
            value = safejson.loads(candidate.strip())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    raise ReplyError("no JSON object in the reply")


def _balanced_end(text: str, start: int) -> int | None:
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _confidence(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return 0.5
    return min(1.0, max(0.0, float(value)))


def _strings(value: Any, limit: int, count: int) -> list[str]:
    if isinstance(value, str):
        value = [line for line in value.splitlines() if line.strip()]
    if not isinstance(value, list):
        return []
    return [str(v)[:limit] for v in value if isinstance(v, (str, int, float)) and str(v).strip()][:count]


def _ids(values: Iterable[Any], known: set[str], dropped: list[str]) -> list[str]:
    found = []
    for value in values:
        text = str(value).strip().lower().removeprefix("[fact:").removesuffix("]").removeprefix("fact:")
        if text in known:
            found.append(text)
        else:
            dropped.append(f"unknown fact id {str(value)[:40]!r} ignored")
    return list(dict.fromkeys(found))


def parse_answer(text: str, known_ids: set[str]) -> Answer:
    """Validate an answer, code, repair or plan reply (ReplyError when it is none of them)."""
    data = extract_json(text)
    if not any(key in data for key in ("plan", "suggestions")):
        raise ReplyError('the JSON object has neither "plan" nor "suggestions"')
    dropped: list[str] = []
    plan = _strings(data.get("plan"), MAX_STEP_CHARS, MAX_STEPS)
    cited = _CITE.findall("\n".join(plan))
    raw = data.get("suggestions") or []
    if not isinstance(raw, list):
        raise ReplyError('"suggestions" is not a list')
    suggestions = []
    for item in raw[:MAX_SUGGESTIONS]:
        change = _suggestion(item, known_ids, dropped)
        if change is not None:
            suggestions.append(change)
    facts = _ids(list(data.get("facts") or []) + cited, known_ids, dropped) if isinstance(data.get("facts") or [], list) \
        else _ids(cited, known_ids, dropped)
    facts = list(dict.fromkeys(facts + [f for s in suggestions for f in s.fact_ids]))
    return Answer(tuple(plan), tuple(suggestions), tuple(facts), _confidence(data.get("confidence")),
                  files=tuple(_strings(data.get("files"), MAX_PATH_CHARS, MAX_SUGGESTIONS)), dropped=tuple(dropped))


def _suggestion(item: Any, known_ids: set[str], dropped: list[str]) -> ProposedChange | None:
    if not isinstance(item, dict):
        dropped.append("a suggestion that is not an object was ignored")
        return None
    file = item.get("file")
    code, diff = item.get("code"), item.get("diff")
    code = code if isinstance(code, str) and code.strip() and len(code) <= MAX_CODE_CHARS else None
    diff = diff if isinstance(diff, str) and diff.strip() and len(diff) <= MAX_CODE_CHARS else None
    if not isinstance(file, str) or not file.strip() or len(file) > MAX_PATH_CHARS or not (code or diff):
        dropped.append("a suggestion without a file or without code/diff was ignored")
        return None
    description = item.get("description")
    facts = item.get("facts") or []
    return ProposedChange(file=file.strip(), code=code, diff=None if code else diff,
                          description=(description if isinstance(description, str) else "")[:MAX_DESCRIPTION_CHARS],
                          fact_ids=tuple(_ids(facts if isinstance(facts, list) else [], known_ids, dropped)),
                          confidence=_confidence(item.get("confidence")))


def parse_critique(text: str) -> Critique:
    """Validate a critic reply."""
    data = extract_json(text)
    verdict = str(data.get("verdict", "")).strip().lower()
    if verdict not in ("accept", "repair"):
        raise ReplyError('"verdict" must be "accept" or "repair"')
    return Critique(verdict, tuple(_strings(data.get("problems"), MAX_STEP_CHARS, MAX_STEPS)),
                    _confidence(data.get("confidence")))
