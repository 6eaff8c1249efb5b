"""The review queue: everything the store asks a person to decide, one registry of sources.

Each *source* (a `ReviewSource`) finds one type of open item in a scope's facts and plans the
actions a person may take on it. An item is a plain dict with at least

    {"type": <source type>, "id": <the fact the item is about>, "scope", "kind",
     "actions": [<action names>], "why": <one line>}

plus what its type needs (a possible supersession adds "candidate", "similarity", "new",
"old"). `git neo review` lists every open item of every source; `git neo review ACTION ID
[ARG]` finds the open item about fact ID whose source offers ACTION and runs that source's
plan inside the scope's transaction (`FactStore.resolve_review`).

Sources are pure functions of one scope's facts (the store runs them in the scope's
transaction), registered by type in `SOURCES`, a literal dict: adding a type of review item
is one module and one line here. A source whose items live outside the facts (`incoming`:
changes a sync held back, queued under `.git/neo/`) says `local = True`: its `items` also
gets the repository's `.git/neo` folder, and its `settle(neo_dir, item, action)` runs once
the decision was written.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, cast

from neo_git.errors import NeoError
from neo_git.facts import Fact
from neo_git.store.base import Change
from neo_git.store.review import agent_proposal, agent_request, conflict, incoming, possible, stale, unverified
from neo_git.store.review.possible import undo_supersession

__all__ = ["ReviewSource", "SOURCES", "ACTIONS", "items", "source_for", "undo_supersession"]


class ReviewSource(Protocol):
    """One type of review item."""

    @property
    def type(self) -> str:
        """The item type this source lists."""

    @property
    def actions(self) -> Mapping[str, str]:
        """Action name -> one line of help, as `git neo review -h` shows it."""

    def items(self, facts: Mapping[str, Fact]) -> list[dict]:
        """The open items in one scope's facts (read-only), oldest first."""

    def plan(self, facts: Mapping[str, Fact], item: dict, action: str, arg: str | None,
             embedder_id: str) -> tuple[dict, Change | None]:
        """What *action* on *item* writes: a result for the caller (JSON-able) and the change (None: none).
        Raises NeoError when the item can no longer be resolved that way."""

    def describe(self, item: dict) -> tuple[str, list[str]]:
        """A headline and detail lines for the terminal (raw text: the CLI makes it visible)."""

    # Optional: `prepare(store, item, action, arg) -> arg`, run by `FactStore.resolve_review` before
    # the transaction, for what a plan needs from outside the scope's facts (the code now, a new
    # id); its result is the `arg` the plan gets.



class LocalReviewSource(ReviewSource, Protocol):
    """A source with `local = True`: it also reads the repository's `.git/neo`."""

    def items(self, facts: Mapping[str, Fact], neo_dir: Path | None = None) -> list[dict]:
        """The open items, from *facts* and what `.git/neo` holds."""

SOURCES: dict[str, ReviewSource] = {
    possible.SOURCE.type: possible.SOURCE,
    stale.SOURCE.type: stale.SOURCE,
    agent_proposal.SOURCE.type: agent_proposal.SOURCE,
    conflict.SOURCE.type: conflict.SOURCE,
    incoming.SOURCE.type: incoming.SOURCE,
    agent_request.SOURCE.type: agent_request.SOURCE,
    unverified.SOURCE.type: unverified.SOURCE,
}

ACTIONS: tuple[str, ...] = tuple(dict.fromkeys(a for s in SOURCES.values() for a in s.actions))


def items(facts: Mapping[str, Fact], types: Any = None, neo_dir: Any = None) -> list[dict]:
    """Open items of every source (or of *types*) in one scope's facts (*neo_dir*: the
    repository's `.git/neo`, for sources with `local = True`)."""
    out: list[dict] = []
    for name, source in SOURCES.items():
        if types is None or name in types:
            out.extend(cast(LocalReviewSource, source).items(facts, neo_dir) if getattr(source, "local", False)
                       else source.items(facts))
    return out


def source_for(type_name: str) -> ReviewSource:
    """The source of *type_name*, or NeoError naming the valid types."""
    try:
        return SOURCES[type_name]
    except KeyError:
        raise NeoError(f"unknown review item type '{type_name}'",
                       f"use one of: {', '.join(SOURCES)}") from None


def pick(open_items: list[dict], fact_id: str, action: str, type_name: str | None) -> dict:
    """The one open item about *fact_id* that offers *action* (of *type_name* when given); an item
    about several facts lists them all in "about" (a conflict names both successors)."""
    about = [i for i in open_items if (i["id"] == fact_id or fact_id in i.get("about", ()))
             and (type_name is None or i["type"] == type_name)]
    offering = [i for i in about if action in i["actions"]]
    if not about:
        raise NeoError(f"nothing to review about {fact_id}", "`git neo review` lists the open items")
    if not offering:
        offered = sorted({a for i in about for a in i["actions"]})
        raise NeoError(f"'{action}' does not apply to the review items about {fact_id}",
                       f"use one of: {', '.join(offered)}")
    types = {i["type"] for i in offering}
    if len(types) > 1:
        raise NeoError(f"{fact_id} has review items of several types ({', '.join(sorted(types))})",
                       "say which with --type")
    return offering[0]
