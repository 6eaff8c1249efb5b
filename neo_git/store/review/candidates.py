"""Candidates only a judge reads: `git neo review --judge --wider`.

Between long texts (decision records, design notes) cosine alone neither retires nor asks, and the
write policy proposes a long candidate only when the newer text's words say it replaces it
(`store/evidence.py`). Many true replacements say so in words no rule reads ("We will implement the
'Creating separate Welsh and English snapshots' pattern" after "Store form text data as
objects"): on the ADR dev set, text evidence finds 18 of 24 edges, while the older record is among
the newer one's three most similar earlier records for 21 (`benchmarks/adr_eval.py`). A model can
read those three; a person should not have to.

So, with a judge configured, `--wider` also asks it about each recent fact's most similar earlier
facts of the same kind and scope that no link proposes yet (LONG_CANDIDATES of them, from the
embedder's long threshold, pairs outside the lengths cosine was calibrated on). A verdict
`updated` or `contradicts` becomes an ordinary `possibly_supersedes` link on the newer fact,
evidence `judge`, verdict attached: it joins the person's queue (or, with `neo.reviewJudge
auto`, an `updated` supersedes through the normal, reversible path). A `distinct` verdict writes
nothing to the shared ref; every verdict is remembered in `.git/neo/judged.json` (local, never
pushed) so that no pair is asked twice.
"""
from __future__ import annotations

import math
from collections.abc import Container, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.facts import Fact

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from neo_git.store.supersession import Thresholds

RECORD = "judged.json"
NEWEST = 200   # the newest facts of a scope whose candidates are looked at


def pair_key(new_id: str, old_id: str) -> str:
    return f"{new_id}:{old_id}"


def candidate_pairs(facts: Sequence[Fact], vectors: np.ndarray, thresholds: Thresholds,
                    judged: Container[str] = (), newest: int | None = None) -> Iterator[tuple[Fact, Fact, float]]:
    """(newer, older, cosine) for the *newest* (default NEWEST) latest of *facts* (valid facts of
    one scope; row i of *vectors* is facts[i]'s), newest first, each with its most similar earlier
    facts of the same kind as rule 3 would look at them between long texts: the first
    LONG_CANDIDATES pairs outside the calibrated lengths, from the long threshold, skipping pairs a
    link already proposes, a person kept apart, two entities of one template ("Deal 1" / "Deal 2"),
    and pairs in *judged*. Only facts written in an earlier second count as earlier: an `updated`
    verdict retires the older."""
    import numpy as np

    from neo_git.store.supersession import CALIBRATED_WORDS, LONG_CANDIDATES, _words, blocked, distinct_entities

    newest = NEWEST if newest is None else newest
    created = [_seconds(fact.metadata.created_at) for fact in facts]
    order = sorted(range(len(facts)), key=lambda i: (created[i], facts[i].id))
    by_id = np.empty(len(facts), dtype=np.intp)   # ties in cosine go to the smaller id
    by_id[sorted(range(len(facts)), key=lambda i: facts[i].id)] = np.arange(len(facts))
    for i in reversed(order[-newest:] if newest > 0 else []):
        new = facts[i]
        if new.metadata.proposal:
            continue   # an agent's open proposal is decided first
        # Written strictly earlier: facts of one second (one batch, one import) have no order to go by.
        earlier = np.array([j for j in range(len(facts)) if facts[j].kind is new.kind and created[j] < created[i]],
                           dtype=np.intp)
        if not len(earlier):
            continue
        scores = vectors[earlier] @ vectors[i]
        linked = {link.id for link in new.metadata.possibly_supersedes}
        short = _words(new.text) <= CALIBRATED_WORDS
        looked = 0
        for rank in np.lexsort((by_id[earlier], -scores)):
            old, score = facts[int(earlier[rank])], float(scores[rank])
            if not score >= thresholds.long_floor:
                break
            if short and _words(old.text) <= CALIBRATED_WORDS:
                continue   # between statements cosine is calibrated: the write policy decided
            looked += 1
            if looked > LONG_CANDIDATES:
                break
            if old.id in linked or new.supersedes == old.id or blocked(new, old) or distinct_entities(new, old) \
                    or pair_key(new.id, old.id) in judged:
                continue
            yield new, old, score


def _seconds(stamp: str) -> float:
    """A fact's `created_at` as seconds since the epoch ("Z" or any offset); -inf when unreadable
    (a hand-edited fact): it then counts as older than every other, never as a newer one."""
    try:
        moment = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return float("-inf")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return float(math.floor(moment.timestamp()))   # whole seconds: git-neo's own precision


def judged(neo_dir: Path | None) -> dict[str, dict]:
    """{"new:old": verdict} of every pair a judge answered in this clone ({} when none or unreadable:
    then pairs are asked again, nothing is lost)."""
    from neo_git.fileio import read_table

    return read_table(Path(neo_dir) / RECORD, "pairs") if neo_dir is not None else {}


def remember(neo_dir: Path | None, new: Mapping[str, Mapping]) -> None:
    """Add *new* verdicts ("new:old" -> verdict) under the record's lock, keeping the others."""
    if neo_dir is not None and new:
        from neo_git.fileio import add_to_table

        add_to_table(Path(neo_dir) / RECORD, "pairs", new)
