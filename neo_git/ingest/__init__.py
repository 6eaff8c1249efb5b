"""Constraint ingestion: the rules a team wrote for its AI tools (CLAUDE.md, AGENTS.md,
.cursorrules, .cursor/rules/*, .github/copilot-instructions.md, .windsurfrules,
.clinerules) become CONSTRAINT facts, one per section, in one commit per ingest.

`git neo ingest` and `git neo init` call `ingest(store)`. Running it again on
unchanged files writes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from neo_git.facts import Fact, FactKind, FactMetadata, FactScope, new_fact_id, now_iso
from neo_git.ingest.plan import IngestPlan, plan_ingest
from neo_git.ingest.sections import Section, split_sections
from neo_git.ingest.sources import read_sources

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store import FactStore

CONFIDENCE = 0.9  # written by the team on purpose: trusted, but an outcome can still speak against it

__all__ = ["IngestReport", "ingest"]


@dataclass
class IngestReport:
    """What an ingest read and wrote."""

    files: list[str] = field(default_factory=list)      # read
    skipped: list[str] = field(default_factory=list)    # present but unreadable
    added: list[dict] = field(default_factory=list)     # {"id", "subject", "sources", "supersedes"}
    superseded: list[list[str]] = field(default_factory=list)  # [old id, new id]
    retired: list[list[str]] = field(default_factory=list)     # [id, why]
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    warnings: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def wrote(self) -> bool:
        """True when the ingest changed the store (or, dry, would have)."""
        return bool(self.added or self.retired or self.updated)

    def to_dict(self) -> dict:
        """Plain JSON form (`git neo ingest --json`)."""
        return {k: getattr(self, k) for k in ("files", "skipped", "added", "superseded", "retired", "updated",
                                              "unchanged", "warnings", "dry_run")}

    def summary(self) -> str:
        """One line for people."""
        if not self.files and not self.skipped:
            return "ingest: no CLAUDE.md, AGENTS.md, .cursorrules, … in the work tree"
        fresh = len(self.added) - len(self.superseded)
        parts = [f"{fresh} added", f"{len(self.superseded)} superseded", f"{len(self.retired)} retired",
                 f"{len(self.updated)} re-sourced", f"{self.unchanged} unchanged"]
        verb = "would change" if self.dry_run else "constraints"
        return f"ingest ({', '.join(self.files) or 'no readable file'}): {verb}: {', '.join(parts)}"


def ingest(store: FactStore, *, dry_run: bool = False) -> IngestReport:
    """Bring the ingested constraints in line with the instruction files in the work tree."""
    report = IngestReport(dry_run=dry_run)
    assert store.paths is not None   # a store with a repository
    workdir = store.paths.workdir
    if workdir is None:
        report.warnings.append("a bare repository has no work tree to ingest from")
        return report
    found: dict[str, list[Section]] = {}
    unreadable: list[str] = []
    for source in read_sources(workdir):
        if source.text is None:
            unreadable.append(source.path)
            report.skipped.append(source.path)
            report.warnings.append(f"skipped {source.path}: {source.problem}; its constraints are kept as they were")
            continue
        found[source.path] = split_sections(source.path, source.text)
        report.files.append(source.path)
        report.warnings += [f"{s.source}: section '{s.heading}' is longer than a fact body; kept its start"
                            for s in found[source.path] if s.truncated]
    project_id, org_id, author = store.project_id, store.org_id, store.author

    def new_fact(section: Section, tags: tuple[str, ...]) -> Fact:
        fact = Fact(id=new_fact_id(), subject=section.heading, body=section.text, kind=FactKind.CONSTRAINT,
                    scope=FactScope.PROJECT, org_id=org_id, project_id=project_id, tags=tags,
                    metadata=FactMetadata(confidence=CONFIDENCE, source_file=section.source, author=author,
                                          provenance="structural"))
        return Fact.from_dict(fact.to_dict())  # the one validation path for every fact

    planned: list[IngestPlan] = []

    def body(facts):
        plan = plan_ingest(facts, found, unreadable, new_fact, now_iso())
        planned[:] = [plan]
        return None if dry_run else plan.change

    if dry_run:
        body(store.backends[FactScope.PROJECT].load().facts)
    else:
        store.transact(FactScope.PROJECT, body)
    plan = planned[0]
    report.added = [{"id": f.id, "subject": f.subject, "supersedes": f.supersedes,
                     "sources": [t.split(":", 1)[1] for t in f.tags if t.startswith("source:")]} for f in plan.added]
    report.superseded = [list(pair) for pair in plan.superseded]
    report.retired = [list(pair) for pair in plan.retired]
    report.updated = plan.updated
    report.unchanged = plan.unchanged
    return report
