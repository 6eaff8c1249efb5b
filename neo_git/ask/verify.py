"""Verification of suggested code: it parses, and it does not break a checkable constraint.

Syntax: every code block whose file has a language the health engine knows
(python, javascript, typescript, tsx, go, rust, java) is parsed with tree-sitter
(dedented first: suggestions are often one indented method); an ERROR or MISSING
node is a problem. Diffs are not parsed (a hunk is not a file), but their added
lines are checked against the constraint rules.

Checkable constraints (constraint facts only), either tagged or phrased:
    tag `forbid-import:X`, or "never import X" / "do not import X" / "don't import X" /
        "must not import X" / "no import(s) of X" / "no import(s) from X"
        → no import of module X or of a submodule X.… (imports as the health engine
          reads them: Python import/from, JS/TS import/require, Go, Rust use, Java)
    tag `forbid-call:Y`, or "never call Y" / "do not call Y" / "don't call Y" /
        "must not call Y" / "no call(s) to Y"
        → no call `Y(` in the code (textual; `Y` may be dotted: `requests.get`)
Everything else a constraint says is left to the model and the critic.
"""
from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from neo_git.ask.model import ProposedChange

_NAME = r"[`'\"]?([A-Za-z_@][\w.\-/@:]*)"
_IMPORT_PHRASES = (
    re.compile(r"\b(?:never|do\s+not|don't|must\s+not|shall\s+not)\s+import\s+(?:from\s+)?" + _NAME, re.IGNORECASE),
    re.compile(r"\bno\s+imports?\s+(?:of|from)\s+" + _NAME, re.IGNORECASE),
)
_CALL_PHRASES = (
    re.compile(r"\b(?:never|do\s+not|don't|must\s+not|shall\s+not)\s+call\s+" + _NAME, re.IGNORECASE),
    re.compile(r"\bno\s+calls?\s+to\s+" + _NAME, re.IGNORECASE),
)


@dataclass(frozen=True)
class Rule:
    """One checkable constraint: kind import|call, the forbidden name, the fact it came from."""

    kind: str
    name: str
    fact_id: str


def rules_from_constraints(constraints: Iterable) -> list[Rule]:
    """The checkable rules stated by constraint facts (tags or phrases)."""
    rules: list[Rule] = []
    for fact in constraints:
        for tag in fact.tags:
            kind, _, name = tag.partition(":")
            if kind in ("forbid-import", "forbid-call") and name:
                rules.append(Rule(kind.removeprefix("forbid-"), name, fact.id))
        text = f"{fact.subject}\n{fact.body}"
        for kind, phrases in (("import", _IMPORT_PHRASES), ("call", _CALL_PHRASES)):
            for phrase in phrases:
                for match in phrase.finditer(text):
                    name = match.group(1).rstrip(".,;:)(`'\"").removesuffix("()")
                    if name:
                        rules.append(Rule(kind, name, fact.id))
    return list(dict.fromkeys(rules))


def _imports_module(target: str, name: str) -> bool:
    for sep in (".", "/", "::"):
        if target == name or target.startswith(name + sep):
            return True
    return False


def _added_lines(diff: str) -> str:
    return "\n".join(line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))


def check_change(change: ProposedChange, rules: Sequence[Rule]) -> tuple[str, ...]:
    """What is wrong with one suggestion (empty when it passes)."""
    from neo_git.health.metrics import analyze_source, language_for_path

    problems = []
    code = textwrap.dedent(change.code) if change.code else _added_lines(change.diff or "")
    language = language_for_path(change.file)
    metrics = analyze_source(change.file, code.encode("utf-8")) if language else None
    if change.code and language and metrics is not None and metrics.has_errors:
        line = _first_error_line(language, code)
        problems.append(f"{change.file}: the code does not parse as {language}" + (f" (line {line})" if line else ""))
    for rule in rules:
        if rule.kind == "import" and metrics is not None:
            if any(_imports_module(ref.target, rule.name) for ref in metrics.imports):
                problems.append(f"{change.file}: imports {rule.name}, which constraint [fact:{rule.fact_id}] forbids")
        elif rule.kind == "import" and re.search(rf"\bimport\s+{re.escape(rule.name)}\b", code):
            problems.append(f"{change.file}: imports {rule.name}, which constraint [fact:{rule.fact_id}] forbids")
        elif rule.kind == "call" and re.search(rf"(?<![\w.]){re.escape(rule.name)}\s*\(", code):
            problems.append(f"{change.file}: calls {rule.name}(), which constraint [fact:{rule.fact_id}] forbids")
    return tuple(problems)


def _first_error_line(language: str, code: str) -> int | None:
    from neo_git.health.parsing import parse

    stack = [parse(language, code.encode("utf-8")).root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return node.start_point[0] + 1
        if node.has_error:
            stack.extend(reversed(node.children))
    return None


def verify(changes: Sequence[ProposedChange], rules: Sequence[Rule]) -> tuple[list[ProposedChange], bool]:
    """Each change with its problems filled in, and whether all passed."""
    from dataclasses import replace

    checked = [replace(c, problems=check_change(c, rules)) for c in changes]
    return checked, all(not c.problems for c in checked)
