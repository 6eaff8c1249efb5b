"""`FactStore`: the one API over all scopes (DESIGN.md §11).

project → `refs/neo/facts` (RefStore); global and org → `~/.neo/facts/*.json`
and session → `.git/neo/session.json` (FileStore). Adds go through the write
policy inside the owning backend's transaction; recall reads every scope.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from neo_git import identity
from neo_git.errors import FactNotFound, InvalidFact, NeoError
from neo_git.facts import (
    MAX_BODY_CHARS, MAX_SOURCE_PROMPT_CHARS, MAX_SUBJECT_CHARS, SCOPE_ORDER, Fact, FactMetadata,
    FactScope, check_text, new_fact_id, now_iso, parse_kind, parse_scope,
)
from neo_git.redact import redact
from neo_git.store.access import AccessLog
from neo_git.store.explain import explain, supersession_chain
from neo_git.store.base import Backend, Change, LoadedScope, Transaction
from neo_git.store.filestore import FileStore
from neo_git.store.policy import SCOPE_CAPS, AddResult, plan_add
from neo_git.store.refstore import FACTS_REF, RefStore, ensure_reflog
from neo_git.store.vectors import FactVectors

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import pygit2

    from neo_git.embed import Embedder
    from neo_git.recall import ContextResult

__all__ = ["FactStore", "AddResult", "Change", "LoadedScope", "Transaction"]


class FactStore:
    """Facts of every scope visible from one repository."""

    def __init__(self, repo: "pygit2.Repository", embedder: "str | Embedder | None" = None,
                 home: Path | None = None) -> None:
        import pygit2

        self.repo = repo
        self.paths = identity.repository_paths(repo)
        self.home = Path(home) if home is not None else identity.neo_home()
        self.org_id = identity.org_id(repo)
        self.author = identity.author_identity(repo)
        name, _, email = self.author.partition(" <")
        self._signature = pygit2.Signature(name or "git-neo", email.rstrip(">") or "neo@localhost")
        self._embedder_arg = embedder
        self._embedder: Embedder | None = None
        self._vector_cache = None
        self._fact_vectors: FactVectors | None = None
        self._matrix_facts: list[Fact] | None = None
        self._matrix = None
        self.caps = dict(SCOPE_CAPS)
        self.project_store = RefStore(repo, self.paths.common_dir, self._signature,
                                      project_id=lambda: self.project_id)
        self.backends: dict[FactScope, Backend] = {
            FactScope.GLOBAL: FileStore(self.home / "facts" / "facts_global.json"),
            FactScope.ORG: FileStore(self.home / "facts" / f"facts_org_{self.org_id}.json"),
            FactScope.PROJECT: self.project_store,
            FactScope.SESSION: FileStore(self.paths.session_file),
        }
        self.access = AccessLog(self.paths.neo_dir / "access.json")
        self.warnings: list[str] = []

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, embedder: "str | Embedder | None" = None) -> "FactStore":
        """The store of the repository containing *path* (default: the one git would use here,
        honouring GIT_DIR/GIT_WORK_TREE as inside hooks); NotARepository otherwise."""
        return cls(identity.open_repository(path), embedder=embedder)

    # --- embedding -----------------------------------------------------------------

    @property
    def embedder(self) -> "Embedder":
        """The embedder in use (resolved on first use: numpy loads only when needed)."""
        if self._embedder is None:
            from neo_git.embed import get_embedder

            self._embedder = get_embedder(self._embedder_arg, repo=self.repo)
        return self._embedder

    def _vectors(self, texts: Sequence[str]) -> "np.ndarray":
        if self._vector_cache is None:
            from neo_git.embed.cache import VectorCache

            self._vector_cache = VectorCache(identity.vector_cache_dir(self.home))
        return self._vector_cache.vectors(self.embedder, texts)

    def _embed_one(self, text: str) -> "np.ndarray":
        """One text's vector straight from the embedder, bypassing the vector cache.

        Used for a query (questions rarely repeat) and for a fact being added: a cache
        append costs a locked, fsynced write. A new fact's vector is kept in this process
        (FactVectors) and reaches the cache the first time any process looks it up there,
        batched with the others."""
        import numpy as np

        vector = np.asarray(self.embedder.embed([text]), dtype=np.float32)
        if vector.shape != (1, self.embedder.dim):
            raise ValueError(f"embedder {self.embedder.id} returned shape {vector.shape} for one text")
        return vector[0]

    def _vectors_of(self, facts: Sequence[Fact]) -> "np.ndarray":
        """Vectors of *facts* (rows in order), each looked up in the cache once per process."""
        return self._vector_rows().matrix(facts)

    def _vector_rows(self) -> FactVectors:
        if self._fact_vectors is None:
            self._fact_vectors = FactVectors(self._vectors)
        return self._fact_vectors

    def _fact_matrix(self, facts: Sequence[Fact]) -> "np.ndarray":
        """Vectors of *facts*, memoised while the loaded facts are the same objects.

        Backends hand out the same Fact objects until a fact changes, so an identity
        check replaces hashing every id and text on each recall."""
        memo = self._matrix_facts
        if memo is None or len(memo) != len(facts) or not all(a is b for a, b in zip(memo, facts)):
            self._matrix = self._vectors_of(facts)
            self._matrix_facts = list(facts)
        return self._matrix

    # --- identity ------------------------------------------------------------------

    @property
    def project_id(self) -> str:
        """Stable across clones: recorded in the ref's meta.json, else the root commit."""
        recorded = self.project_store.meta().get("project_id")
        if isinstance(recorded, str) and recorded:
            return recorded
        root = identity.root_commit_id(self.repo)
        if root:
            return root
        # Unborn repository: remember one id until the first commit exists.
        marker = self.paths.neo_dir / "project_id"
        try:
            return marker.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            # Concurrent first writers must agree on one id: publish ours with link(), which
            # fails if another process got there first (then theirs wins), never half-written.
            marker.parent.mkdir(parents=True, exist_ok=True)
            candidate = marker.with_name(f".project_id.{os.getpid()}.{new_fact_id()}")
            candidate.write_text(new_fact_id() + "\n", encoding="utf-8")
            try:
                os.link(candidate, marker)
            except FileExistsError:
                pass
            finally:
                candidate.unlink()
            return marker.read_text(encoding="utf-8").strip()

    # --- setup ---------------------------------------------------------------------

    def init(self) -> dict:
        """Create `.git/neo/`, the ref's reflog and its first commit (meta.json). Idempotent."""
        self.paths.neo_dir.mkdir(parents=True, exist_ok=True)
        ensure_reflog(self.paths.common_dir, FACTS_REF)
        created = False
        if self.project_store.tip() is None:
            created = self.project_store.initialize()
        return {"ref": FACTS_REF, "created": created, "project_id": self.project_id,
                "org_id": self.org_id, "neo_dir": str(self.paths.neo_dir),
                "global_facts": str(self.backends[FactScope.GLOBAL].description)}

    # --- reading -------------------------------------------------------------------

    def _load(self, scopes: Iterable[FactScope] = SCOPE_ORDER) -> list[Fact]:
        facts: list[Fact] = []
        warnings: list[str] = []
        for scope in scopes:
            loaded = self.backends[scope].load()
            facts.extend(f for f in loaded.facts.values() if f.scope is scope)
            warnings.extend(loaded.warnings)
        self.warnings = warnings
        return facts

    def list(self, scope: str | FactScope | None = None, kind: str | None = None,
             include_invalid: bool = False) -> list[Fact]:
        """Facts, oldest first, optionally of one scope and/or kind."""
        scopes = SCOPE_ORDER if scope is None else (parse_scope(scope),)
        wanted_kind = None if kind is None else parse_kind(kind)
        facts = [self.access.apply(f) for f in self._load(scopes)
                 if (include_invalid or f.is_valid) and (wanted_kind is None or f.kind is wanted_kind)]
        return sorted(facts, key=lambda f: (f.metadata.created_at, f.id))

    def get(self, fact_id: str) -> Fact:
        """The fact with this id (or unique prefix of ≥ 4 hex digits); FactNotFound otherwise."""
        return self.access.apply(self._find(fact_id))

    def _find(self, fact_id: str, facts: Sequence[Fact] | None = None) -> Fact:
        wanted = (fact_id or "").strip().lower()
        if len(wanted) < 4 or any(c not in "0123456789abcdef" for c in wanted):
            raise FactNotFound(fact_id)
        facts = self._load() if facts is None else facts
        matches = [f for f in facts if f.id.startswith(wanted)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise NeoError(f"fact id prefix '{fact_id}' is ambiguous ({len(matches)} facts)",
                           "give more digits of the id")
        raise FactNotFound(fact_id)

    # --- writing -------------------------------------------------------------------

    def transact(self, scope: str | FactScope, plan: Transaction) -> Change | None:
        """The one write path for everything outside the store (outcomes, sync, upkeep, import,
        agents): *plan* gets the scope's current facts (read-only mapping id -> Fact) and returns
        a `Change` (facts to put, ids to remove, a log message, extra parents for a merge
        commit) or None. It runs inside the scope's transaction: the ref store retries it
        against the newest tip when another writer got there first (so *plan* must be free of
        side effects), file scopes hold their lock. Returns the change that was written."""
        fact_scope = parse_scope(scope)
        backend = self.backends[fact_scope]

        def checked(facts: Mapping[str, Fact]) -> Change | None:
            change = plan(facts)
            if change is not None:
                for fact in change.facts:
                    if fact.scope is not fact_scope:
                        raise NeoError(f"fact {fact.id} is {fact.scope.value}-scoped; "
                                       f"it cannot be written to the {fact_scope.value} scope")
                if change.parents and fact_scope is not FactScope.PROJECT:
                    raise NeoError("only the project scope (a git ref) has parent commits")
            return change

        return backend.transact(checked)

    def add(self, subject: str, body: str = "", *, kind: str = "pattern", scope: str = "project",
            depends_on: Sequence[str] = (), supersedes: str | None = None, tags: Sequence[str] = (),
            confidence: float = 0.5, source_file: str | None = None, source_prompt: str | None = None,
            provenance: str = "observed") -> Fact:
        """Add a fact under the write policy; returns the stored fact (or the existing duplicate)."""
        return self.add_detailed(subject, body, kind=kind, scope=scope, depends_on=depends_on,
                                 supersedes=supersedes, tags=tags, confidence=confidence,
                                 source_file=source_file, source_prompt=source_prompt,
                                 provenance=provenance).fact

    def add_detailed(self, subject: str, body: str = "", *, kind: str = "pattern", scope: str = "project",
                     depends_on: Sequence[str] = (), supersedes: str | None = None, tags: Sequence[str] = (),
                     confidence: float = 0.5, source_file: str | None = None,
                     source_prompt: str | None = None, provenance: str = "observed") -> AddResult:
        """`add`, returning what happened: supersession, duplicates, flags, evictions."""
        fact = self._new_fact(subject, body, kind, scope, depends_on, tags, confidence,
                              source_file, source_prompt, provenance)
        explicit = None if supersedes is None else self._resolve_id(supersedes, fact.scope)
        depends = tuple(self._resolve_id(d, fact.scope) for d in fact.depends_on)
        fact = fact.evolve(depends_on=depends)
        new_vector = self._embed_one(fact.text)
        embedder = self.embedder
        self._vector_rows().remember(fact, new_vector)  # the next add compares with it without a lookup
        results: list[AddResult] = []

        def similarity(group):
            return self._vector_rows().group_scores(group, new_vector)

        def body_(facts: Mapping[str, Fact]) -> Change | None:
            result, change = plan_add(facts, fact, similarity=similarity, threshold=embedder.supersede_threshold,
                                      embedder_id=embedder.id, explicit=explicit, cap=self.caps.get(fact.scope))
            results[:] = [result]
            return change

        self.backends[fact.scope].transact(body_)
        return results[0]

    def _new_fact(self, subject, body, kind, scope, depends_on, tags, confidence,
                  source_file, source_prompt, provenance) -> Fact:
        subject = redact(check_text("subject", subject, MAX_SUBJECT_CHARS, required=True).strip())
        body = redact(check_text("body", body or "", MAX_BODY_CHARS).strip())
        if source_prompt is not None:
            source_prompt = redact(check_text("source_prompt", source_prompt, 100_000))[:MAX_SOURCE_PROMPT_CHARS]
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
            raise InvalidFact(f"confidence must be between 0 and 1, not {confidence!r}")
        fact_scope = parse_scope(scope)
        project_id = self.project_id if fact_scope in (FactScope.PROJECT, FactScope.SESSION) else None
        raw = {
            "id": new_fact_id(), "subject": subject, "body": body, "kind": parse_kind(kind).value,
            "scope": fact_scope.value, "tags": list(tags), "depends_on": [],
            "org_id": self.org_id if fact_scope is not FactScope.GLOBAL else None,
            "project_id": project_id,
            "metadata": FactMetadata(confidence=float(confidence), author=self.author, source_file=source_file,
                                     source_prompt=source_prompt, provenance=provenance).to_dict(),
        }
        fact = Fact.from_dict(raw)  # one validation path for every fact
        return fact.evolve(depends_on=tuple(depends_on))

    def _resolve_id(self, fact_id: str, scope: FactScope) -> str:
        facts = list(self.backends[scope].load().facts.values())
        try:
            return self._find(fact_id, facts).id
        except FactNotFound:
            raise NeoError(f"no fact '{fact_id}' in the {scope.value} scope",
                           "facts can point only at facts of their own scope; `git neo list --all` shows ids")

    def _update(self, fact: Fact, message: str, make: Any) -> Fact:
        """Rewrite one fact (and its neighbours) through its backend's transaction."""
        out: list[Fact] = []

        def body_(facts: Mapping[str, Fact]) -> Change | None:
            current = facts.get(fact.id)
            if current is None:
                raise FactNotFound(fact.id)
            changed = make(current, facts)
            out[:] = [changed[0]] if changed else [current]
            return Change(tuple(changed), message) if changed else None

        self.backends[fact.scope].transact(body_)
        return out[0]

    def invalidate(self, fact_id: str, reason: str = "") -> Fact:
        """Mark a fact no longer true (keeps its text); restore undoes it."""
        fact = self._find(fact_id)

        def make(current: Fact, facts: Mapping[str, Fact]) -> list[Fact]:
            if not current.is_valid:
                return []
            return [current.evolve(is_valid=False, metadata={"invalidation": {
                "reason": "invalidated", "at": now_iso(), "detail": reason or "invalidated by hand"}})]

        return self._update(fact, f"invalidate {fact.id}: {fact.subject}"[:120], make)

    def restore(self, fact_id: str) -> Fact:
        """Bring back a superseded, evicted or invalidated fact; the supersession pointers are undone."""
        fact = self._find(fact_id)
        if fact.is_valid:
            raise NeoError(f"fact {fact.id} is already valid", "nothing to restore")

        def make(current: Fact, facts: Mapping[str, Fact]) -> list[Fact]:
            if current.is_valid:
                return []
            changed = [current.evolve(is_valid=True, superseded_by=None, metadata={"invalidation": None})]
            successor = facts.get(current.superseded_by or "")
            if successor is not None and successor.supersedes == current.id:
                changed.append(successor.evolve(supersedes=None))
            return changed

        restored = self._update(fact, f"restore {fact.id}: {fact.subject}"[:120], make)
        return self.access.apply(restored)

    # --- explaining ----------------------------------------------------------------

    def history(self, fact_id: str) -> list[Fact]:
        """The supersession chain through this fact, oldest first."""
        facts = self._load()
        chain = supersession_chain(self._find(fact_id, facts), {f.id: f for f in facts})
        return [self.access.apply(f) for f in chain]

    def why(self, fact_id: str) -> dict:
        """Why a fact is in its state: valid, superseded (by what, similarity, threshold), evicted, ..."""
        facts = self._load()
        return explain(self._find(fact_id, facts), {f.id: f for f in facts})

    # --- recall --------------------------------------------------------------------

    def recall(self, query: str, k: int = 5, max_tokens: int = 12000) -> "ContextResult":
        """Constraints, ranked facts, what changed and known unknowns for *query*."""
        from neo_git.recall import assemble

        check_text("query", query, 100_000, required=True)
        if k < 0 or max_tokens <= 0:
            raise NeoError("k must be ≥ 0 and max-tokens > 0")
        facts = self._load()
        if facts:
            cosines = self._fact_matrix(facts) @ self._embed_one(query)
        else:
            cosines = []
        accessed = self.access.counts()
        result = assemble(query, facts, cosines, k=k, max_tokens=max_tokens,
                          environment=self.environment(), last_accessed={i: v[1] for i, v in accessed.items()},
                          untrusted=frozenset(self.untrusted()))
        self.access.record(result.returned_ids)
        apply = self.access.apply
        return result.with_facts(apply)

    def untrusted(self) -> dict[str, str]:
        """{fact id: author e-mail} of project facts whose author is not trusted here: claims
        (computed from the ref's history and `neo.trusted`, never stored; see neo_git.sync.trust)."""
        from neo_git.sync.trust import untrusted_authors

        return untrusted_authors(self)

    def environment(self) -> dict:
        """Where the question is asked from (see `recall.environment`)."""
        from neo_git.recall import environment

        return environment(self.repo, self.paths, self.org_id)
