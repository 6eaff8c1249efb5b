"""The ingestion plan: from the sections found now and the constraints ingested before,
the one change that brings the store in line (a pure function; one commit per ingest).

- A rule (rule key) already held by a valid ingested constraint keeps it; only its
  source and section tags are brought up to date (a second file saying the same
  thing adds a source, it does not add a constraint).
- A new rule becomes a new constraint. If a constraint that is going away came from
  one of its sections (same section tag: same file, same heading), the new one
  supersedes it explicitly: the section changed.
- A constraint whose rule no readable file states any more is retired (the file was
  deleted, or the section removed). Files that could not be read keep their
  constraints untouched.
- New constraints never supersede each other: only constraints from earlier ingests
  are superseded.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from neo_git.fact_fields import MAX_TAGS
from neo_git.fact_schema import Invalidation
from neo_git.facts import Fact, FactKind, FactScope
from neo_git.ingest.sections import (
    INGESTED_TAG,
    SECTION_PREFIX,
    SOURCE_PREFIX,
    Section,
    rule_key,
    section_prefix,
    source_tag,
)
from neo_git.store.base import Change

INGEST_MARK = " (git neo ingest)"  # ends the invalidation detail of what ingestion retired

# Builds a new constraint from the first section stating a rule, with the given tags.
NewFact = Callable[[Section, tuple[str, ...]], Fact]


class IngestPlan(NamedTuple):
    """What one ingest writes."""

    added: list[Fact]
    superseded: list[tuple[str, str]]   # (old id, new id)
    retired: list[tuple[str, str]]      # (id, why)
    updated: list[str]                  # ids whose sources changed
    unchanged: int
    change: Change | None


def is_ingested(fact: Fact) -> bool:
    """A valid project constraint that ingestion owns."""
    return fact.is_valid and fact.scope is FactScope.PROJECT and fact.kind is FactKind.CONSTRAINT \
        and INGESTED_TAG in fact.tags


def _names(tags: Sequence[str]) -> str:
    return ", ".join(t[len(SOURCE_PREFIX):] for t in tags) or "its file"


def _tags(other: Sequence[str], kept_sources: Sequence[str], kept_sections: Sequence[str],
          sections: Sequence[Section]) -> tuple[str, ...]:
    sources = list(dict.fromkeys([*kept_sources, *(source_tag(s.source) for s in sections)]))
    section_tags = list(dict.fromkeys([*kept_sections, *(s.tag for s in sections)]))
    tags = list(dict.fromkeys([INGESTED_TAG, *sources, *section_tags, *other]))
    return tuple(tags[:MAX_TAGS])


def rule_paths(sections: Sequence[Section]) -> tuple[str, ...]:
    """The path scope of a rule stated in *sections*: none when one of them applies everywhere,
    else every glob of every one."""
    if not sections or any(not s.paths for s in sections):
        return ()
    return tuple(dict.fromkeys(g for s in sections for g in s.paths))[:32]


def plan_ingest(facts: Mapping[str, Fact], found: Mapping[str, Sequence[Section]], unreadable: Sequence[str],
                new_fact: NewFact, at: str) -> IngestPlan:
    """The change that makes the ingested constraints match *found* (path -> its sections,
    for every file read); constraints from *unreadable* paths are left as they are."""
    blocked = {source_tag(p) for p in unreadable}
    desired: dict[str, list[Section]] = {}
    for path in found:  # in the order the files were read: the first file names the rule
        for section in found[path]:
            desired.setdefault(section.key, []).append(section)

    claimed: dict[str, Fact] = {}
    changed: dict[str, Fact] = {}
    retiring: list[Fact] = []
    updated: list[str] = []
    unchanged = 0
    for old in sorted((f for f in facts.values() if is_ingested(f)), key=lambda f: (f.metadata.created_at, f.id)):
        key = rule_key(old.subject, old.body)
        kept_sources = [t for t in old.tags if t.startswith(SOURCE_PREFIX) and t in blocked]
        prefixes = tuple(section_prefix(s) for s in kept_sources)
        kept_sections = [t for t in old.tags if t.startswith(SECTION_PREFIX) and prefixes and t.startswith(prefixes)]
        other = [t for t in old.tags if t != INGESTED_TAG and not t.startswith((SOURCE_PREFIX, SECTION_PREFIX))]
        if key in claimed or (key not in desired and not kept_sources):
            retiring.append(old)
            continue
        claimed[key] = old
        tags = _tags(other, kept_sources, kept_sections, desired.get(key, ()))
        subject = desired[key][0].heading if key in desired else old.subject  # a heading may be renamed
        paths = rule_paths(desired[key]) if key in desired else old.metadata.paths
        if tags == old.tags and subject == old.subject and paths == old.metadata.paths:
            unchanged += 1
            continue
        first = desired[key][0].source if key in desired else old.metadata.source_file
        changed[old.id] = old.evolve(tags=tags, subject=subject, metadata={"source_file": first, "paths": paths})
        updated.append(old.id)
    # A rule a person retired or superseded by hand (not an ingest) is not brought back while
    # the file still says the same thing: their decision stands until the text changes.
    overruled = {rule_key(f.subject, f.body) for f in facts.values()
                 if not f.is_valid and f.kind is FactKind.CONSTRAINT and INGESTED_TAG in f.tags
                 and not (f.metadata.invalidation is not None and (f.metadata.invalidation.detail or "")
                          .endswith(INGEST_MARK))}

    by_section: dict[str, Fact] = {}
    for old in retiring:
        for tag in old.tags:
            if tag.startswith(SECTION_PREFIX):
                by_section.setdefault(tag, old)
    added: list[Fact] = []
    successor: dict[str, tuple[Fact, Section]] = {}
    for key, sections in desired.items():
        if key in claimed or key in overruled:
            continue
        fact = new_fact(sections[0], _tags((), (), (), sections))
        if rule_paths(sections):
            fact = fact.evolve(metadata={"paths": rule_paths(sections)})
        for section in sections:
            earlier = by_section.get(section.tag)
            if earlier is not None and earlier.id not in successor:
                fact = fact.evolve(supersedes=earlier.id)
                successor[earlier.id] = (fact, section)
                break
        added.append(fact)

    superseded, retired = [], []
    for old in retiring:
        if old.id in successor:
            new, section = successor[old.id]
            detail = f"section '{section.heading}' of {section.source} changed{INGEST_MARK}"
            changed[old.id] = old.evolve(is_valid=False, superseded_by=new.id, metadata={"invalidation": Invalidation(
                reason="superseded", rule="explicit", at=at, by=new.id, explicit=True, detail=detail)})
            superseded.append((old.id, new.id))
            continue
        sources = [t for t in old.tags if t.startswith(SOURCE_PREFIX)]
        key = rule_key(old.subject, old.body)
        if key in claimed:
            why = f"it states the same rule as {claimed[key].id}"
        elif not any(source_tag(p) in sources for p in found):
            why = f"{_names(sources)} {'was' if len(sources) == 1 else 'were'} deleted"
        else:
            why = f"its section '{old.subject}' is no longer in {_names(sources)}"
        changed[old.id] = old.evolve(is_valid=False, metadata={"invalidation": Invalidation(
            reason="retired", at=at, detail=why + INGEST_MARK)})
        retired.append((old.id, why))

    gone = {old_id for old_id, _ in superseded} | {fact_id for fact_id, _ in retired}
    for fact in facts.values():  # what relied on a retired rule needs a look, as in a supersession
        if fact.is_valid and fact.id not in gone and not fact.needs_review and gone.intersection(fact.depends_on):
            changed[fact.id] = changed.get(fact.id, fact).evolve(needs_review=True)
    change = None
    if added or changed:
        change = _change(added, changed, superseded, retired, updated)
    return IngestPlan(added, superseded, retired, updated, unchanged, change)


def _change(added: list[Fact], changed: dict[str, Fact], superseded, retired, updated) -> Change:
    parts = [f"{len(added) - len(superseded)} added" if len(added) > len(superseded) else "",
             f"{len(superseded)} superseded" if superseded else "",
             f"{len(retired)} retired" if retired else "", f"{len(updated)} re-sourced" if updated else ""]
    message = "ingest constraints: " + ", ".join(p for p in parts if p)
    details = [f"add {f.id} \"{f.subject[:60]}\" from {_names([t for t in f.tags if t.startswith(SOURCE_PREFIX)])}"
               for f in added]
    details += [f"supersede {old} by {new}: {_detail(changed[old])}" for old, new in superseded]
    details += [f"retire {fact_id}: {why}" for fact_id, why in retired]
    details += [f"sources of {fact_id}: {_names([t for t in changed[fact_id].tags if t.startswith(SOURCE_PREFIX)])}"
                for fact_id in updated]
    return Change(facts=(*added, *changed.values()), message=message[:120], details=tuple(details))


def _detail(fact: Fact) -> str:
    """What a retired fact's invalidation says, in words."""
    return (fact.metadata.invalidation.detail if fact.metadata.invalidation is not None else None) or ""
