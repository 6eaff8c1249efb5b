"""A `PeerGroup`: the valid facts of one (scope, kind), the supersession candidates the write
index (`store/index.py`) keeps per group and `store/row_index.py` builds from rows.

An append-only list of rows, one per fact that joined the group, with an alive flag. Row
numbers never move (until the group is compacted, which bumps its `epoch`), so a vector matrix
kept in step with the rows (`vectors.GroupVectors`) only ever appends.
"""
from __future__ import annotations

from neo_git.facts import Fact
from neo_git.textkeys import normalized, subject_key

# Compact a group once it has more dead rows than this and more dead than alive.
COMPACT_AFTER = 64


def text_key(fact: Fact) -> tuple[str, str]:
    """Facts of one scope and kind with equal keys say exactly the same thing."""
    return normalized(fact.subject), normalized(fact.body)


class PeerGroup:
    """The valid facts of one (scope, kind): what a new fact of that scope and kind may supersede."""

    __slots__ = ("rows", "alive", "row_of", "members", "epoch", "_texts", "_subjects", "__weakref__")

    def __init__(self) -> None:
        self.rows: list[Fact] = []          # row -> the fact as it joined (its text is the row's text)
        self.alive = bytearray()            # row -> 1 while that fact is still a valid member
        self.row_of: dict[str, int] = {}    # member id -> its row
        self.members: dict[str, Fact] = {}  # member id -> the member as stored now
        self.epoch = 0                      # bumped when rows are renumbered (compaction)
        # text_key -> member ids; built on the first duplicate check, so a cold process
        # normalises the texts of the one kind it adds, not of every stored fact.
        self._texts: dict[tuple[str, str], set[str]] | None = None
        # subject_key -> member ids (the write policy's rule 2), built on first use too.
        self._subjects: dict[str, set[str]] | None = None

    def __len__(self) -> int:
        return len(self.members)

    def join(self, fact: Fact) -> None:
        """Add a member on a new row."""
        self.row_of[fact.id] = len(self.rows)
        self.rows.append(fact)
        self.alive.append(1)
        self.members[fact.id] = fact
        if self._texts is not None:
            self._texts.setdefault(text_key(fact), set()).add(fact.id)
        if self._subjects is not None:
            self._subjects.setdefault(subject_key(fact.subject), set()).add(fact.id)

    def leave(self, fact_id: str) -> None:
        """Drop a member; its row stays, dead, until the group is compacted."""
        self.alive[self.row_of.pop(fact_id)] = 0
        fact = self.members.pop(fact_id)
        if self._texts is not None:
            key = text_key(fact)
            self._texts[key].discard(fact_id)
            if not self._texts[key]:
                del self._texts[key]
        if self._subjects is not None:
            subject = subject_key(fact.subject)
            self._subjects[subject].discard(fact_id)
            if not self._subjects[subject]:
                del self._subjects[subject]
        dead = len(self.rows) - len(self.members)
        if dead > COMPACT_AFTER and dead > len(self.members):
            self._compact()

    def texts(self) -> dict[tuple[str, str], set[str]]:
        """Member ids by text_key (built on first use, then kept up to date)."""
        if self._texts is None:
            self._texts = {}
            for fact in self.members.values():
                self._texts.setdefault(text_key(fact), set()).add(fact.id)
        return self._texts

    def duplicates(self, fact: Fact) -> set[str]:
        """Ids of members that say exactly what *fact* says (`text_key`)."""
        return set(self.texts().get(text_key(fact), ()))

    def id_at(self, row: int) -> str:
        """The id of the fact on *row*."""
        return self.rows[row].id

    def same_subject(self, subject: str) -> set[str]:
        """Ids of members whose normalised subject (`subject_key`) equals *subject*'s."""
        if self._subjects is None:
            self._subjects = {}
            for fact in self.members.values():
                self._subjects.setdefault(subject_key(fact.subject), set()).add(fact.id)
        return set(self._subjects.get(subject_key(subject), ()))

    def _compact(self) -> None:
        # Supersession churn leaves dead rows behind; renumbering costs O(group) once
        # per (group size) departures, so it stays O(1) per change amortised.
        self.rows = [self.rows[row] for row in self.row_of.values()]
        self.row_of = {fact.id: row for row, fact in enumerate(self.rows)}
        self.alive = bytearray(b"\x01" * len(self.rows))
        self.epoch += 1
