"""Did a commit ship a suggestion? Line matching that ignores what carries no substance.

A suggestion's *substance* is its non-trivial lines, normalised: leading/trailing
whitespace dropped and inner runs of whitespace collapsed (so re-indenting the code,
as happens when it moves into a class or an `if`, still matches). Trivial lines carry
no advice and never count: braces and other bare punctuation, `pass`, a bare `return`
(`return None`, `return;`), `else:`/`try:`/`finally:`, `break`/`continue`, and imports
(an imports-only change is not the advice). Comments count: a suggested comment is
part of what was suggested.

Against a commit that changed the suggestion's file (renames are followed by the
caller), with `added` = the normalised non-trivial lines the commit added to it:
- ACCEPTED when at least ACCEPT_RATIO of the suggestion's new substance is in the
  committed file and at least one of those lines was added by this commit;
- MODIFIED when some of it shipped, or a committed line closely resembles a
  suggested one (difflib ratio >= SIMILAR_RATIO: the person rewrote the advice);
- otherwise the suggestion did not ship, and it gets an outcome all the same (a commit that
  changed its file without it is an answer): SUPERSEDED when the code it was about is gone
  (lines it shared with the file — a signature it repeated, a diff's removed or context lines —
  were changed or removed by this commit: someone rewrote that code another way), else
  ABANDONED (the file was committed, or deleted, without it); still pending when its lines are
  in the file all the same (an earlier commit shipped it). Neither moves confidence: the
  advice was not tried, so nothing is known about the facts it relied on.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

ACCEPTED, MODIFIED, PENDING = "accepted", "modified", "pending"
SUPERSEDED, ABANDONED = "superseded", "abandoned"
ACCEPT_RATIO = 0.7
SIMILAR_RATIO = 0.75

_SPACE = re.compile(r"\s+")
_PUNCTUATION_ONLY = re.compile(r"^[\s{}()\[\];,:.]*$")
_TRIVIAL = frozenset({
    "pass", "return", "return none", "return;", "return null;", "return nil", "break", "break;",
    "continue", "continue;", "else:", "else", "try:", "finally:", "} else {", "else {", "end", "...",
    "} catch {", "default:", "do", "then", "fi", "done", "esac",
})
_IMPORT = re.compile(
    r"^(import\s|from\s+\S+\s+import\s|use\s+\S|#include\s|package\s|require\s*\(|"
    r"(const|let|var)\s+\S+\s*=\s*require\s*\(|export\s+\*\s+from\s|export\s*\{[^}]*\}\s*from\s)")


def normalise(line: str) -> str:
    """A line with indentation and inner whitespace runs folded away."""
    return _SPACE.sub(" ", line.strip())


def is_trivial(normalised: str) -> bool:
    """True for lines that carry no advice: punctuation, pass/return/else, imports."""
    if _PUNCTUATION_ONLY.match(normalised):
        return True
    lowered = normalised.lower().rstrip()
    if lowered in _TRIVIAL:
        return True
    return bool(_IMPORT.match(normalised))


def substance(lines: Iterable[str]) -> list[str]:
    """The normalised non-trivial lines, in order, without repeats."""
    out: dict[str, None] = {}
    for line in lines:
        text = normalise(line)
        if text and not is_trivial(text):
            out.setdefault(text, None)
    return list(out)


def suggested_lines(code: str | None, diff: str | None) -> list[str]:
    """The lines a suggestion proposes: its code block, else the `+` lines of its diff."""
    if code and code.strip():
        return code.splitlines()
    lines = []
    for line in (diff or "").splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            lines.append(line[1:])
    return lines


@dataclass(frozen=True)
class Match:
    """The verdict for one suggestion against one commit, with the evidence."""

    verdict: str            # accepted | modified | pending
    suggested: int          # substantive lines the suggestion introduces
    shipped: int            # of those, present in the committed file
    added_now: int          # of those, added by this very commit
    similar: int            # committed lines closely resembling a suggested line

    @property
    def ratio(self) -> float:
        """Share of the suggestion's substance that shipped (0 when it has none)."""
        return self.shipped / self.suggested if self.suggested else 0.0

    def to_dict(self) -> dict:
        """JSON form (outcome records and notes)."""
        return {"verdict": self.verdict, "suggested_lines": self.suggested, "shipped_lines": self.shipped,
                "added_lines": self.added_now, "similar_lines": self.similar, "ratio": round(self.ratio, 3)}


def match_suggestion(code: str | None, diff: str | None, before: str, after: str) -> Match:
    """Classify a suggestion against one commit's change of its file (*before* -> *after*,
    the file's text in the parent and in the commit; "" when absent)."""
    proposed = substance(suggested_lines(code, diff))
    old = set(substance(before.splitlines()))
    new = set(substance(after.splitlines()))
    # What the suggestion introduces: lines already in the file before say nothing about
    # whether the advice was taken (a code block usually repeats the unchanged signature).
    fresh = [line for line in proposed if line not in old] or proposed
    added = new - old
    shipped = [line for line in fresh if line in new]
    added_now = [line for line in shipped if line in added]
    unmatched_added = [line for line in added if line not in fresh]
    similar = _similar_count([line for line in fresh if line not in new], unmatched_added)
    if not fresh:
        verdict = PENDING
    elif len(shipped) / len(fresh) >= ACCEPT_RATIO and added_now:
        verdict = ACCEPTED
    elif added_now or similar:
        verdict = MODIFIED
    else:
        verdict = PENDING
    return Match(verdict, len(fresh), len(shipped), len(added_now), similar)


def shipped_lines(code: str | None, diff: str | None, before: str, after: str) -> list[int]:
    """1-based numbers of the lines of *after* that carry the suggestion's new substance (what
    an accepted suggestion shipped, for the outcome record to cite)."""
    proposed = set(substance(suggested_lines(code, diff))) - set(substance(before.splitlines()))
    return [n for n, line in enumerate(after.splitlines(), 1) if normalise(line) in proposed]


def anchor_lines(code: str | None, diff: str | None, before: str) -> list[str]:
    """The lines that tie a suggestion to code that existed: for a diff, its removed and context
    lines; for a code block, its substantive lines already in the file before the commit."""
    if diff and diff.strip() and not (code and code.strip()):
        lines = [line[1:] for line in diff.splitlines()
                 if line[:1] in ("-", " ") and not line.startswith("---")]
        return substance(lines)
    old = set(substance(before.splitlines()))
    return [line for line in substance(suggested_lines(code, diff)) if line in old]


def unshipped_verdict(code: str | None, diff: str | None, before: str, after: str, deleted: bool) -> Match:
    """The outcome of a suggestion whose file a commit changed without shipping it: SUPERSEDED
    when the code it was about was rewritten or removed, else ABANDONED; still PENDING when
    its substance is in the file all the same (an earlier commit shipped it, and the worker
    has not reached that commit yet)."""
    proposed = substance(suggested_lines(code, diff))
    now = set(substance(after.splitlines()))
    present = [line for line in proposed if line in now]
    if proposed and not deleted and len(present) / len(proposed) >= ACCEPT_RATIO:
        return Match(PENDING, len(proposed), len(present), 0, 0)
    gone = [line for line in anchor_lines(code, diff, before) if line not in now]
    verdict = SUPERSEDED if (gone and not deleted) else ABANDONED
    return Match(verdict, len(proposed), len(present), 0, len(gone))


def _similar_count(missing: list[str], added: list[str], limit: int = 400) -> int:
    """How many suggested lines that did not ship have a close relative among the added lines."""
    if not missing or not added:
        return 0
    count = 0
    for line in missing[:limit]:
        matcher = difflib.SequenceMatcher(None, "", line, autojunk=False)  # b is cached
        for candidate in added[:limit]:
            matcher.set_seq1(candidate)
            if matcher.real_quick_ratio() >= SIMILAR_RATIO and matcher.quick_ratio() >= SIMILAR_RATIO \
                    and matcher.ratio() >= SIMILAR_RATIO:
                count += 1
                break
    return count
