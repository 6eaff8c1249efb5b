"""What an agent is given about a file it is editing: the facts citing it or scoped to it.

A constraint limited to `migrations/**` is not in the always-apply layer of every prompt; it
reaches the agent when the agent is about to edit a migration (Claude Code `PreToolUse` on
Edit/Write/MultiEdit, Codex `PreToolUse` on apply_patch), and so does a fact that cites code
in the file. Stale facts (their cited code changed) are marked as such by the renderer.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from neo_git.facts import Fact, FactKind
from neo_git.recall import about_file

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store import FactStore


def facts_for_files(store: FactStore, files: Sequence[str], given: Iterable[str] = ()
                    ) -> tuple[list[tuple[str, list[Fact]]], set[str]]:
    """Sections to render (constraints first, then other facts, each best-kept first) for the valid
    facts about *files* not in *given*, and the ids of the claims among them."""
    seen = set(given)
    # Outcome records (kind review) cite the files a suggestion touched, but they are evidence about
    # other facts, never knowledge to act on: as in recall, they are not handed out.
    facts = [f for f in store.list() if f.id not in seen and f.kind is not FactKind.REVIEW
             and any(about_file(f, path) for path in files)]
    if not facts:
        return [], set()
    claims = set(store.untrusted())
    names = ", ".join(files[:3]) + (" …" if len(files) > 3 else "")

    def order(fact: Fact) -> tuple:
        stale = bool(fact.metadata.citations) and all(c.state in ("changed", "gone") for c in fact.metadata.citations)
        return (stale, -fact.metadata.confidence, fact.metadata.created_at, fact.id)

    constraints = sorted((f for f in facts if f.kind is FactKind.CONSTRAINT and f.id not in claims), key=order)
    others = sorted((f for f in facts if f not in constraints), key=order)
    return [(f"Constraints for {names} (apply to this edit)", constraints),
            (f"Facts about {names}", others)], claims
