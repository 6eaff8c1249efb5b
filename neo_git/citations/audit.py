"""`git neo verify [--rev REV]`: every cited fact checked against a revision.

    report = verify_facts(store, "HEAD")
    report.to_dict()   # {"rev": <commit>, "facts": [{"id", "citations": [{"path", "symbol", "state", "since"}]}]}

`symbol` is the cited symbol, or `START-END` for a line span, or null for a whole file.
`since` is the commit that brought the state when known: the one recorded on the citation
when the state is the recorded one, else found by walking first parents back from REV
(a bounded walk: null when it ends first). Checking HEAD (or the commit HEAD is at) also
records what changed, exactly as the commit worker would (one commit on the facts ref);
another revision is only reported.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from neo_git.citation_states import BROKEN, MOVED, UNKNOWN
from neo_git.citations.recording import Recheck
from neo_git.citations.verify import find_since
from neo_git.errors import NeoError
from neo_git.fact_schema import Citation

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store import FactStore

MAX_WALK_STEPS = 2_000   # commits read, over one verify, looking for when states began


@dataclass
class CitedFact:
    """One fact's checked citations (rows: {"path", "symbol", "state", "since"} plus "detail")."""

    id: str
    subject: str
    rows: list[dict]

    @property
    def stale(self) -> bool:
        """Every citation changed or gone."""
        return bool(self.rows) and all(r["state"] in BROKEN for r in self.rows)


@dataclass
class VerifyReport:
    """What `git neo verify` found."""

    rev: str
    facts: list[CitedFact] = field(default_factory=list)
    recorded: int = 0          # facts whose recorded citations were updated
    transitions: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """The `--json` shape."""
        return {"rev": self.rev, "facts": [
            {"id": f.id, "citations": [{k: r[k] for k in ("path", "symbol", "state", "since")} for r in f.rows]}
            for f in self.facts]}

    def counts(self) -> dict[str, int]:
        """Citations per state."""
        out: dict[str, int] = {}
        for fact in self.facts:
            for row in fact.rows:
                out[row["state"]] = out.get(row["state"], 0) + 1
        return out


def _symbol_field(citation: Citation) -> str | None:
    if citation.symbol:
        return citation.symbol
    span = citation.span
    return f"{span[0]}-{span[1]}" if span else None


def verify_facts(store: FactStore, rev: str = "HEAD", *, record: bool | None = None) -> VerifyReport:
    """Check every cited fact (project and session scope) against *rev*; *record* (default: when
    *rev* is where HEAD is) writes the changes found."""
    import pygit2

    repo = store.repo
    if repo is None:
        raise NeoError("an in-memory store has no code to verify against", "open a repository")
    try:
        commit = repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        raise NeoError(f"unknown revision '{rev}'", "give a commit, branch or tag (`git log --oneline` lists them)") \
            from None
    at_head = not repo.head_is_unborn and repo.head.target == commit.id
    record = at_head if record is None else record
    run = Recheck(store)
    budget = [MAX_WALK_STEPS]

    def since(citation: Citation, state: str, checked: pygit2.Commit) -> pygit2.Commit | None:
        if state not in BROKEN or budget[0] <= 0:
            return None
        steps = min(64, budget[0])
        budget[0] -= steps
        assert run.reader is not None   # set by the recheck before it asks
        return find_since(repo, run.reader, citation, state, checked, limit=steps)

    try:
        checked = run.verify_all(commit, since)
        report = VerifyReport(str(commit.id))
        for fact_id, pairs in checked.items():
            rows = []
            for check, now in pairs:
                if check.state == UNKNOWN:
                    state, when = UNKNOWN, None
                elif check.state == MOVED:
                    state, when = MOVED, now.since
                else:
                    state = check.state
                    when = now.since if now.state == state else None
                rows.append({"path": now.path, "symbol": _symbol_field(now), "state": state, "since": when,
                             "detail": check.detail, "label": now.label})
            report.facts.append(CitedFact(fact_id, run.facts[fact_id].subject, rows))
        report.transitions = list(run.transitions)
        if record and run.changed_facts():
            report.recorded = run.write(f"verify at {str(commit.id)[:12]}: {len(run.transitions)} citation "
                                        "state(s) recorded")
        return report
    finally:
        run.close()
