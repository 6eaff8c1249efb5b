"""The doctor's check of pointers that lead nowhere, and their repair.

A fact's `supersedes`, `superseded_by` and `depends_on` name facts of its own scope. An
import of a partial export, a purge, or a hand-edited file can leave one naming a fact that is
not there: every read warns, and `restore`/`why` cannot follow it. Cutting such a pointer
loses nothing the store still has (the target is gone) and keeps the fact's own state: a
retired fact stays retired, its reason says the successor is missing.

* Local scopes (global, org: `~/.neo/facts/*.json`; session: `.git/neo/session.json`) are
  this person's files: `doctor --fix` cuts the pointers (action "cut-pointers").
* The project scope is the shared ref: `ref.py` reports its dangling pointers, and
  `doctor --fix --ref` shows the commit that would cut them and makes it only when the user
  confirms (`propose_ref_fix`); a plain `--fix` never rewrites the ref.
"""
from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from neo_git.doctor.findings import Context, Finding
from neo_git.fact_schema import Invalidation
from neo_git.facts import Fact, FactScope

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store import FactStore

LOCAL_SCOPES = (FactScope.GLOBAL, FactScope.ORG, FactScope.SESSION)
ACTION = "cut-pointers"


def missing_pointers(fact: Fact, known: Container[str]) -> list[tuple[str, str]]:
    """[(pointer name, target id), …] of *fact*'s pointers at ids not in *known*."""
    missing = [(name, target) for name in ("supersedes", "superseded_by")
               for target in (getattr(fact, name),) if target is not None and target not in known]
    return missing + [("depends_on", target) for target in fact.depends_on if target not in known]


def dangling(facts: Mapping[str, Fact]) -> dict[str, list[tuple[str, str]]]:
    """{fact id: [(pointer name, missing id), …]} for the facts of *facts* that point nowhere."""
    out: dict[str, list[tuple[str, str]]] = {}
    for fact in facts.values():
        missing = missing_pointers(fact, facts)
        if missing:
            out[fact.id] = missing
    return out


def cut(fact: Fact, missing: list[tuple[str, str]]) -> Fact:
    """*fact* without the pointers in *missing* (a retired fact keeps its state and says why)."""
    names = {name for name, _ in missing}
    gone = {target for name, target in missing if name == "depends_on"}
    changes: dict = {}
    if "supersedes" in names:
        changes["supersedes"] = None
    if "superseded_by" in names:
        changes["superseded_by"] = None
        reason = fact.metadata.invalidation or Invalidation()
        detail = ((reason.detail + "; ") if reason.detail else "") + \
            f"its successor {fact.superseded_by} is missing (pointer cut by git neo doctor)"
        changes["metadata"] = {"invalidation": replace(reason, detail=detail)}
    if gone:
        changes["depends_on"] = tuple(d for d in fact.depends_on if d not in gone)
    return fact.evolve(**changes)


def _describe(fact_id: str, missing: list[tuple[str, str]]) -> str:
    return f"{fact_id}: " + ", ".join(f"{name} → {target}" for name, target in missing)


def _store(ctx: Context) -> FactStore:
    from neo_git.store import FactStore

    return FactStore(ctx.repo, home=ctx.home)


def check_pointers(ctx: Context) -> list[Finding]:
    """One finding per local scope whose facts point at facts that are not there."""
    store = _store(ctx)
    findings = []
    for scope in LOCAL_SCOPES:
        try:
            loaded = store.backends[scope].load()
        except Exception:  # noqa: BLE001 - an unreadable file is the caches/leftovers checks' business
            continue
        facts = {i: f for i, f in loaded.facts.items() if f.scope is scope}
        found = dangling(facts)
        if found:
            shown = "; ".join(_describe(i, m) for i, m in sorted(found.items())[:5])
            more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
            findings.append(Finding("pointers", f"{scope.value} facts point at facts that are not there: {shown}{more}",
                                    fix=f"cut the {sum(len(m) for m in found.values())} dangling pointer(s) of "
                                        f"{len(found)} {scope.value} fact(s)",
                                    path=scope.value, action=ACTION))
    return findings


def cut_local(finding: Finding, ctx: Context | None, held: set[str] | None) -> bool:
    """The repair: cut the dangling pointers of one local scope (re-planned on its current state)."""
    if ctx is None or finding.path is None:
        return False
    from neo_git.facts import parse_scope
    from neo_git.store.base import Change

    scope = parse_scope(finding.path)

    def plan(facts: Mapping[str, Fact]) -> Change | None:
        scoped = {i: f for i, f in facts.items() if f.scope is scope}
        found = dangling(scoped)
        if not found:
            return None
        return Change(tuple(cut(scoped[i], m) for i, m in sorted(found.items())),
                      f"doctor: cut dangling pointers of {len(found)} fact(s)")

    return _store(ctx).transact(scope, plan) is not None


@dataclass(frozen=True)
class RefProposal:
    """The commit `doctor --fix --ref` would make: what it changes, and how to make it."""

    lines: tuple[str, ...]
    apply: Callable[[], bool]


def propose_ref_fix(ctx: Context) -> RefProposal | None:
    """The commit that cuts the dangling pointers on `refs/neo/facts`, for the user to confirm
    (None when there are none). `apply()` re-plans on the ref's newest tip (compare-and-swap)."""
    from neo_git.store.base import Change

    store = _store(ctx)
    facts = {i: f for i, f in store.project_store.load().facts.items() if f.scope is FactScope.PROJECT}
    found = dangling(facts)
    if not found:
        return None
    lines = tuple(_describe(i, m) for i, m in sorted(found.items()))

    def plan(current: Mapping[str, Fact]) -> Change | None:
        scoped = {i: f for i, f in current.items() if f.scope is FactScope.PROJECT}
        now = dangling(scoped)
        if not now:
            return None
        return Change(tuple(cut(scoped[i], m) for i, m in sorted(now.items())),
                      f"doctor: cut dangling pointers of {len(now)} fact(s)",
                      tuple(f"cut {_describe(i, m)}" for i, m in sorted(now.items())))

    return RefProposal(lines, lambda: store.transact(FactScope.PROJECT, plan) is not None)
