"""The add and review paths of `FactStore` (a mixin: the class lives in `store/__init__.py`).

Every add goes through `add_many_detailed`: one commit per scope, the write policy
(`policy.plan_many`) deciding supersessions inside the scope's transaction, facts of one
batch never superseding each other. Review accepts or rejects possible supersessions
(`store/review/`).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from neo_git.citing import Resolve, resolver_for
from neo_git.errors import FactNotFound, InvalidFact, NeoError
from neo_git.fact_schema import Citation, JudgeVerdict
from neo_git.facts import (
    MAX_BODY_CHARS,
    MAX_SOURCE_PROMPT_CHARS,
    MAX_SUBJECT_CHARS,
    SCOPE_ORDER,
    Fact,
    FactMetadata,
    FactScope,
    check_text,
    new_fact_id,
    parse_kind,
    parse_scope,
)
from neo_git.redact import citation_names, redact, refuse_secrets
from neo_git.store.base import Change

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import pygit2

    from neo_git.embed import Embedder
    from neo_git.identity import RepositoryPaths
    from neo_git.store import FactStore
    from neo_git.store.base import Backend
    from neo_git.store.policy import AddResult, PlanItem
    from neo_git.store.refstore import RefStore
    from neo_git.store.vectors import FactVectors

# The write policy (policy, review, supersession) is imported by the methods that write:
# a process that only reads (a cold `git neo recall`) never loads it.

# What each add_many item may carry besides subject and supersedes (add()'s keyword arguments).
_ADD_ARGS = frozenset({"body", "kind", "scope", "depends_on", "tags", "confidence", "source_file",
                       "source_prompt", "provenance", "proposal", "cites", "paths"})


class WritePaths:
    """add, add_detailed, add_many(_detailed), review, accept, reject."""

    # What FactStore (store/__init__.py) and its embedding half (store/embedding.py) give it:
    repo: pygit2.Repository | None
    paths: RepositoryPaths | None
    author: str
    org_id: str
    backends: dict[FactScope, Backend]
    caps: dict[FactScope, int]

    if TYPE_CHECKING:  # pragma: no cover
        @property
        def project_id(self) -> str: ...
        @property
        def embedder(self) -> Embedder: ...
        def get(self, fact_id: str) -> Fact: ...
        def untrusted(self) -> dict[str, str]: ...
        def _find(self, fact_id: str, facts: Sequence[Fact] | None = None) -> Fact: ...
        def _load(self, scopes: Iterable[FactScope] = SCOPE_ORDER) -> list[Fact]: ...
        def _embed_one(self, text: str) -> np.ndarray: ...
        def _vectors_of(self, facts: Sequence[Fact]) -> np.ndarray: ...
        def _vector_rows(self) -> FactVectors: ...

    def add(self, subject: str, body: str = "", *, kind: str = "pattern", scope: str = "project",
            depends_on: Sequence[str] = (), supersedes: str | None = None, tags: Sequence[str] = (),
            confidence: float = 0.5, source_file: str | None = None, source_prompt: str | None = None,
            provenance: str = "observed", proposal: str | None = None, cites: Sequence[str | Mapping] = (),
            paths: Sequence[str] = ()) -> Fact:
        """Add a fact under the write policy; returns the stored fact (or the existing duplicate).
        `fact.supersedes` names what it replaced; `fact.metadata.possibly_supersedes` what it may
        replace (for `review`). *proposal* "open" marks an agent's proposal (it retires nothing and
        is no standing constraint until a person accepts it). *cites*: code the fact is about
        (`PATH`, `PATH:SYMBOL`, `PATH:START-END`, relative to the repository root; checked now,
        NeoError naming close matches when absent); *paths*: git pathspec globs the fact is
        limited to."""
        return self.add_detailed(subject, body, kind=kind, scope=scope, depends_on=depends_on,
                                 supersedes=supersedes, tags=tags, confidence=confidence,
                                 source_file=source_file, source_prompt=source_prompt,
                                 provenance=provenance, proposal=proposal, cites=cites, paths=paths).fact

    def add_detailed(self, subject: str, body: str = "", *, kind: str = "pattern", scope: str = "project",
                     depends_on: Sequence[str] = (), supersedes: str | None = None, tags: Sequence[str] = (),
                     confidence: float = 0.5, source_file: str | None = None,
                     source_prompt: str | None = None, provenance: str = "observed",
                     proposal: str | None = None, cites: Sequence[str | Mapping] = (),
                     paths: Sequence[str] = ()) -> AddResult:
        """`add`, returning what happened: supersession (and by which rule), possible
        supersessions, duplicates, flags, evictions."""
        return self.add_many_detailed([dict(subject=subject, body=body, kind=kind, scope=scope,
                                            depends_on=depends_on, supersedes=supersedes, tags=tags,
                                            confidence=confidence, source_file=source_file,
                                            source_prompt=source_prompt, provenance=provenance,
                                            proposal=proposal, cites=cites, paths=paths)])[0]

    def add_many(self, items: Iterable[Mapping[str, Any]]) -> list[Fact]:
        """Add facts asserted together (each item the keyword arguments of `add`): one commit per
        scope, and no fact of the batch supersedes another (they may supersede older facts)."""
        return [result.fact for result in self.add_many_detailed(items)]

    def add_many_detailed(self, items: Iterable[Mapping[str, Any]]) -> list[AddResult]:
        """`add_many`, returning an AddResult per item (in order)."""
        from neo_git.store.policy import PlanItem

        planned: list[tuple[FactScope, PlanItem]] = []
        for item in items:
            if not isinstance(item, Mapping):
                raise NeoError(f"add_many wants mappings of add()'s arguments, not {type(item).__name__}")
            args = dict(item)
            subject = args.pop("subject", None)
            if subject is None:
                raise InvalidFact("a fact needs a subject")
            supersedes = args.pop("supersedes", None)
            unknown = set(args) - _ADD_ARGS
            if unknown:
                raise NeoError(f"add_many: unknown argument(s) {', '.join(sorted(unknown))}",
                               "each item takes the keyword arguments of add()")
            fact = self._new_fact(subject, args.get("body", ""), args.get("kind", "pattern"),
                                  args.get("scope", "project"), args.get("depends_on", ()), args.get("tags", ()),
                                  args.get("confidence", 0.5), args.get("source_file"),
                                  args.get("source_prompt"), args.get("provenance", "observed"),
                                  args.get("proposal"), args.get("cites", ()), args.get("paths", ()))
            planned.append((fact.scope, PlanItem(fact, supersedes)))
        results: dict[int, AddResult] = {}
        for scope in dict.fromkeys(scope for scope, _ in planned):
            positions = [i for i, (s, _) in enumerate(planned) if s is scope]
            for i, result in zip(positions, self._add_batch(scope, [planned[i][1] for i in positions])):
                results[i] = result
        return [results[i] for i in range(len(planned))]

    def _add_batch(self, scope: FactScope, items: list[PlanItem]) -> list[AddResult]:
        from neo_git.store.policy import PlanItem, plan_many
        from neo_git.store.supersession import Thresholds

        batch_ids = {item.fact.id for item in items}
        resolved = []
        for item in items:  # ids may be prefixes; a batch may point at its own earlier facts
            fact = item.fact
            depends = tuple(d if d in batch_ids else self._resolve_id(d, scope) for d in fact.depends_on)
            explicit = item.explicit
            if explicit is not None and explicit not in batch_ids:
                explicit = self._resolve_id(explicit, scope)
            resolved.append(PlanItem(fact.evolve(depends_on=depends), explicit))
        embedder = self.embedder
        if len(resolved) == 1:
            vectors = {resolved[0].fact.id: self._embed_one(resolved[0].fact.text)}
        else:  # one embedder call for the batch, straight from the embedder like a single add
            import numpy as np

            matrix = np.asarray(embedder.embed([item.fact.text for item in resolved]), dtype=np.float32)
            vectors = {item.fact.id: matrix[i] for i, item in enumerate(resolved)}
        rows = self._vector_rows()
        for item in resolved:  # the next add compares with them without a cache lookup
            rows.remember(item.fact, vectors[item.fact.id])
        out: list[list[AddResult]] = [[]]

        def similarity(group, fact: Fact):
            return rows.group_scores(group, vectors[fact.id])

        def plan(facts: Mapping[str, Fact]) -> Change | None:
            results, change = plan_many(facts, resolved, similarity=similarity,
                                        thresholds=Thresholds.of(embedder), cap=self.cap_of(scope),
                                        body_similarity=self._body_similarity)
            out[0] = results
            return change

        self.backends[scope].transact(plan)
        return out[0]

    def cap_of(self, scope: FactScope):
        """The scope's cap. In project scope it bounds the local user's own facts: facts whose
        author (the ref's history) is someone else are not counted and never evicted by our
        writes, and claims using our address are evicted first."""
        from neo_git.store.base import ScopeCap

        cap = self.caps.get(scope)
        if cap is None or scope is not FactScope.PROJECT:
            return cap
        return ScopeCap.of(cap, lambda: frozenset(self.untrusted()), self._facts_of_others)

    def _facts_of_others(self) -> frozenset[str]:
        """Ids of project facts whose author (`provenance.fact_origins`) is not the local user."""
        from neo_git.store.provenance import Origins, fact_origins
        from neo_git.store.trust import local_email

        if self.repo is None or self.paths is None:
            return frozenset()
        me = local_email(cast("FactStore", self))
        origins = fact_origins(self.repo, self.paths.common_dir)
        if isinstance(origins, Origins) and all(email == me for (email, _commit), _ids in origins.groups()):
            return frozenset()   # every fact ours: no need to walk 50,000 of them
        return frozenset(i for i, (email, _commit) in origins.items() if email != me)

    def _body_similarity(self, a: Fact, b: Fact) -> float:
        """Cosine of two facts' bodies (rule 2's guard; asked only for long bodies of one subject)."""
        import numpy as np

        vectors = np.asarray(self.embedder.embed([a.body, b.body]), dtype=np.float32)
        return float(vectors[0] @ vectors[1])

    def _new_fact(self, subject, body, kind, scope, depends_on, tags, confidence,
                  source_file, source_prompt, provenance, proposal=None, cites=(), paths=()) -> Fact:
        subject = redact(check_text("subject", subject, MAX_SUBJECT_CHARS, required=True).strip())
        body = redact(check_text("body", body or "", MAX_BODY_CHARS).strip())
        if source_prompt is not None:
            source_prompt = redact(check_text("source_prompt", source_prompt, 100_000))[:MAX_SOURCE_PROMPT_CHARS]
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
            raise InvalidFact(f"confidence must be between 0 and 1, not {confidence!r}")
        refuse_secrets(tags=tags, source_file=source_file)
        fact_scope = parse_scope(scope)
        project_id = self.project_id if fact_scope in (FactScope.PROJECT, FactScope.SESSION) else None
        raw = {
            "id": new_fact_id(), "subject": subject, "body": body, "kind": parse_kind(kind).value,
            "scope": fact_scope.value, "tags": list(tags), "depends_on": [],
            "org_id": self.org_id if fact_scope is not FactScope.GLOBAL else None,
            "project_id": project_id,
            "metadata": FactMetadata(confidence=float(confidence), author=self.author, source_file=source_file,
                                     source_prompt=source_prompt, provenance=provenance,
                                     proposal=proposal).to_dict(),
        }
        citations = self._resolve_cites(cites, fact_scope)
        refuse_secrets(paths=[paths] if isinstance(paths, str) else paths, citations=citation_names(citations))
        if citations:
            raw["metadata"]["citations"] = [citation.to_json() for citation in citations]
        if paths:
            if isinstance(paths, str):
                paths = [paths]
            raw["metadata"]["paths"] = [str(p).strip() for p in paths]
        fact = Fact.from_dict(raw)  # one validation path for every fact
        return fact.evolve(depends_on=tuple(depends_on))

    def _resolve_cites(self, cites: Any, scope: FactScope) -> list[Citation]:
        """Citations from `--cite` strings (resolved against the work tree and HEAD now) or
        already-resolved citations (their stored form: validated here)."""
        if not cites:
            return []
        if isinstance(cites, (str, Mapping)):
            cites = [cites]
        if scope not in (FactScope.PROJECT, FactScope.SESSION):
            raise NeoError(f"a {scope.value} fact cannot cite code", "citations name files of this repository: "
                           "use --scope project (or session)")
        if self.repo is None:
            raise NeoError("an in-memory store has no code to cite", "open a repository with FactStore.open(path)")
        resolve: Resolve | None = None
        out: list[Citation] = []
        for cite in cites:
            if isinstance(cite, Mapping):
                citation = Citation.from_json(cite)
            else:
                if resolve is None:
                    resolve = resolver_for(self.repo, self.paths.workdir if self.paths else None)
                citation = resolve(str(cite))
            if not any(c.cited == citation.cited for c in out):   # cited twice: once
                out.append(citation)
        return out

    def _resolve_id(self, fact_id: str, scope: FactScope) -> str:
        """The full id of the fact of *scope* that *fact_id* (a prefix) names; a ref-backed scope
        answers from its rows without decoding a fact (`--supersedes`, `--depends-on`)."""
        backend = self.backends[scope]
        try:
            if hasattr(backend, "table"):
                wanted = (fact_id or "").strip().lower()
                matches = backend.table()[0].ids_with_prefix(wanted) if len(wanted) >= 4 else []
                if len(matches) > 1:
                    raise NeoError(f"fact id prefix '{fact_id}' is ambiguous ({len(matches)} facts)",
                                   "give more digits of the id")
                if not matches:
                    raise FactNotFound(fact_id)
                return matches[0]
            return self._find(fact_id, list(backend.load().facts.values())).id
        except FactNotFound:
            raise NeoError(f"no fact '{fact_id}' in the {scope.value} scope",
                           "facts can point only at facts of their own scope; `git neo list --all` shows ids") from None

    def review(self, scope: str | FactScope | None = None, types: Any = None) -> list[dict]:
        """Open review items of every type (or of *types*), scope by scope, oldest first
        (`store/review/`: possible supersessions, and every source registered there)."""
        from neo_git.store import review
        from neo_git.store.review.possible import with_quotes

        scopes = SCOPE_ORDER if scope is None else (parse_scope(scope),)
        out: list[dict] = []
        for fact_scope in scopes:
            loaded = self.backends[fact_scope].load()
            local = self._review_dir(fact_scope)
            scoped = {i: f for i, f in loaded.facts.items() if f.scope is fact_scope}
            out.extend(with_quotes(review.items(scoped, types, local), scoped))
        return out

    def _review_dir(self, scope: FactScope) -> Path | None:
        """Where the local review queues of *scope* live (`incoming`: what a sync held back):
        the repository's `.git/neo` for project facts, the org memory's own `neo` folder for a
        connected org (its sync files them there), none for file-backed scopes."""
        if scope is FactScope.PROJECT:
            return self.paths.neo_dir if self.paths is not None else None
        backend = self.backends[scope]
        if scope is FactScope.ORG and getattr(backend, "scope", None) is FactScope.ORG:  # a connected org memory
            return Path(cast("RefStore", backend).common_dir) / "neo"
        return None

    def resolve_review(self, action: str, fact_id: str, arg: str | None = None,
                       type: str | None = None) -> dict:
        """Take *action* on the open review item about *fact_id* (a unique prefix works); *arg* is
        the action's argument (a candidate id for possible supersessions). Returns the source's
        result; NeoError when no open item about the fact offers the action."""
        from neo_git.store import review

        if type is not None:
            review.source_for(type)
        fact = self._find(fact_id)
        out: list = []
        local = self._review_dir(fact.scope)
        scoped_now = {i: f for i, f in self.backends[fact.scope].load().facts.items() if f.scope is fact.scope}
        picked = review.pick(review.items(scoped_now, None, local), fact.id, action, type)
        prepare = getattr(review.SOURCES[picked["type"]], "prepare", None)
        if prepare is not None:  # what the plan needs from outside the facts (stale: the code now)
            arg = prepare(cast("FactStore", self), picked, action, arg)

        def plan(facts: Mapping[str, Fact]) -> Change | None:
            if fact.id not in facts:
                raise FactNotFound(fact.id)
            scoped = {i: f for i, f in facts.items() if f.scope is fact.scope}
            item = {**review.pick(review.items(scoped, None, local), fact.id, action, type), "named": fact.id}
            result, change = review.SOURCES[item["type"]].plan(scoped, item, action, arg, self.embedder.id)
            out[:] = [result, item]
            return change

        self.backends[fact.scope].transact(plan)
        source = review.SOURCES[out[1]["type"]]
        if hasattr(source, "settle"):
            source.settle(local, out[1], action)
        return out[0]

    def accept(self, fact_id: str, candidate: str | None = None) -> Fact:
        """Accept a possible supersession: *fact_id* supersedes its candidate (the only one, or
        *candidate*); returns the retired fact. `restore` undoes it exactly."""
        result = self._possible("accept", fact_id, candidate)
        return self.get(result["superseded"])

    def reject(self, fact_id: str, candidate: str | None = None) -> str:
        """Reject a possible supersession: the pair is recorded as distinct and never proposed
        again; returns the candidate's id."""
        return self._possible("reject", fact_id, candidate)["distinct_from"]

    def record_verdict(self, fact_id: str, candidate: str, verdict: Mapping,
                       accept: bool = False, proposed: Mapping | None = None) -> dict:
        """Record a review judge's *verdict* on the possible supersession of *candidate* by
        *fact_id* (first proposed as the link *proposed* when the judge found the pair itself,
        `judge_candidates`); with *accept* (and verdict "updated") also supersede the candidate
        through the normal path (rule "judge": `restore` undoes it, `why` names the judge). One commit."""
        from neo_git.store.review.possible import plan_accept, plan_verdict

        fact = self._find(fact_id)
        try:
            clean = JudgeVerdict.from_json(dict(verdict))
        except InvalidFact as exc:
            raise NeoError(f"not a verdict: {exc}") from None
        out: dict = {}

        def plan(facts: Mapping[str, Fact]) -> Change:
            scoped = {i: f for i, f in facts.items() if f.scope is fact.scope}
            change = plan_verdict(scoped, fact.id, candidate, clean, proposed)
            out.clear()
            out.update(id=fact.id, candidate=candidate, **clean.to_json(), superseded=None)
            # A fact supersedes one fact: a second "updated" for it (an earlier verdict of this run
            # retired another) is left to a person, or the first retired fact's successor would no
            # longer name it and its restore would not undo the supersession.
            if not (accept and clean.verdict == "updated") or change.facts[0].supersedes is not None:
                return change
            judged = {**scoped, fact.id: change.facts[0]}
            old, accepted = plan_accept(judged, fact.id, candidate, self.embedder.id, judge=clean)
            out["superseded"] = old.id
            return Change(accepted.facts, accepted.message, (*change.details, *accepted.details))

        self.backends[fact.scope].transact(plan)
        return dict(out)

    def judge_candidates(self, newest: int | None = None) -> Iterator[dict]:
        """Pairs of project facts only a judge reads (`review.candidates`): for the *newest* facts
        (default `candidates.NEWEST`), newest first, their most similar earlier long facts that no
        link proposes and no judge in this clone answered, as items shaped like the review queue's
        (`similarity`, `new`, `old`, both creation times)."""
        from neo_git.store.review.candidates import candidate_pairs, judged
        from neo_git.store.supersession import Thresholds

        scope = FactScope.PROJECT
        facts = [f for f in self._load((scope,)) if f.is_valid and f.scope is scope]
        if len(facts) < 2:
            return
        vectors = self._vectors_of(facts)
        answered = judged(self._review_dir(scope))
        thresholds = Thresholds.of(self.embedder)
        for new, old, score in candidate_pairs(facts, vectors, thresholds, answered, newest):
            yield {"type": "possible_supersession", "id": new.id, "candidate": old.id, "similarity": round(score, 4),
                   "threshold": thresholds.long_floor, "scope": scope.value,
                   "kind": new.kind.value, "new": {"subject": new.subject, "body": new.body},
                   "old": {"subject": old.subject, "body": old.body},
                   "new_created_at": new.metadata.created_at, "old_created_at": old.metadata.created_at}

    def remember_judged(self, fact_id: str, candidate: str, verdict: Mapping) -> None:
        """Remember in this clone that a judge answered the pair (`judge_candidates` skips it after)."""
        from neo_git.store.review.candidates import pair_key, remember

        remember(self._review_dir(FactScope.PROJECT), {pair_key(fact_id, candidate): verdict})

    def _possible(self, action: str, fact_id: str, candidate: str | None) -> dict:
        from neo_git.store.review.possible import TYPE, pick_link

        fact = self._find(fact_id)
        pick_link(fact, candidate)  # the precise error ("proposes no supersession", "say which")
        return self.resolve_review(action, fact.id, candidate, type=TYPE)
