"""`FactStore`: the one API over all scopes (docs/architecture.md §11).

project → `refs/neo/facts` (RefStore); global and org → `~/.neo/facts/*.json`
and session → `.git/neo/session.json` (FileStore). Adds go through the write
policy inside the owning backend's transaction; recall reads every scope.
"""
from __future__ import annotations

import builtins
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from neo_git import identity
from neo_git.errors import FactNotFound, NeoError
from neo_git.fact_schema import Invalidation
from neo_git.facts import SCOPE_ORDER, Fact, FactScope, check_text, new_fact_id, now_iso, parse_kind, parse_scope
from neo_git.fileio import publish_once
from neo_git.redact import redact
from neo_git.store.access import AccessLog
from neo_git.store.base import SCOPE_CAPS, Backend, Change, LoadedScope, Transaction
from neo_git.store.embedding import StoreEmbedding
from neo_git.store.explain import explain, supersession_chain
from neo_git.store.filestore import FileStore
from neo_git.store.org_memory import open_org_memory
from neo_git.store.refstore import FACTS_REF, RefStore, ensure_reflog
from neo_git.store.vectors import FactVectors
from neo_git.store.writing import WritePaths

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.embed import Embedder
    from neo_git.recall import ContextResult
    from neo_git.store.policy import AddResult

__all__ = ["FactStore", "AddResult", "Change", "LoadedScope", "Transaction"]


def __getattr__(name: str):  # AddResult loads with the write policy, which readers never need
    if name == "AddResult":
        from neo_git.store.policy import AddResult

        return AddResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class FactStore(WritePaths, StoreEmbedding):
    """Facts of every scope visible from one repository (adds and reviews: `store/writing.py`)."""

    def __init__(self, repo: pygit2.Repository, embedder: str | Embedder | None = None,
                 home: Path | None = None) -> None:
        import pygit2

        paths = identity.repository_paths(repo)
        home = Path(home) if home is not None else identity.neo_home()
        org_id = identity.org_id(repo)
        author = identity.author_identity(repo)
        name, _, email = author.partition(" <")
        signature = pygit2.Signature(name or "git-neo", email.rstrip(">") or "neo@localhost")
        project_store = RefStore(repo, paths.common_dir, signature, project_id=lambda: self.project_id, home=home)
        # A connected org memory is a ref store of its own; otherwise (one is_dir) the plain file.
        org_store = open_org_memory(home, org_id, signature) or FileStore(home / "facts" / f"facts_org_{org_id}.json")
        self._setup(repo, paths, home, org_id, author, embedder, {
            FactScope.GLOBAL: FileStore(home / "facts" / "facts_global.json"),
            FactScope.ORG: org_store,
            FactScope.PROJECT: project_store,
            FactScope.SESSION: FileStore(paths.session_file),
        }, AccessLog(paths.neo_dir / "access.json"))

    @classmethod
    def in_memory(cls, embedder: str | Embedder | None = "hash", *, org_id: str = "memory",
                  project_id: str = "0" * 16, author: str = "git-neo <neo@localhost>") -> FactStore:
        """A store whose four scopes live in this process (`MemoryBackend`): no repository, no
        files, no vector cache on disk. Same policy, recall and `transact` as a real store;
        `init` needs a repository, and recall's environment names none."""
        from neo_git.store.memory import MemoryBackend

        store = cls.__new__(cls)
        backends: dict[FactScope, Backend] = {scope: MemoryBackend(description=f"memory:{scope.value}")
                                              for scope in SCOPE_ORDER}
        store._setup(None, None, None, org_id, author, embedder, backends, AccessLog(None))
        store._fixed_project_id = project_id
        return store

    @classmethod
    def outside_repository(cls, where: str | os.PathLike | None = None, embedder: str | Embedder | None = None,
                           home: Path | None = None) -> FactStore:
        """The store of a process started outside any repository: global and org scope from
        NEO_HOME (the org whose facts file is the only one there, else "unknown"), project and
        session scope empty and refusing writes (`store/unavailable.py`)."""
        from neo_git.store.unavailable import UnavailableScope

        home = Path(home) if home is not None else identity.neo_home()
        orgs = sorted(p.name[len("facts_org_"):-len(".json")] for p in (home / "facts").glob("facts_org_*.json"))
        org_id = orgs[0] if len(orgs) == 1 else "unknown"
        label = str(where if where is not None else Path.cwd())
        store = cls.__new__(cls)
        store._setup(None, None, home, org_id, _user_identity(), embedder, {
            FactScope.GLOBAL: FileStore(home / "facts" / "facts_global.json"),
            FactScope.ORG: FileStore(home / "facts" / f"facts_org_{org_id}.json"),
            FactScope.PROJECT: UnavailableScope("project", label),
            FactScope.SESSION: UnavailableScope("session", label),
        }, AccessLog(None))
        store._fixed_project_id = "0" * 16
        return store

    def _setup(self, repo: pygit2.Repository | None, paths: identity.RepositoryPaths | None,
               home: Path | None, org_id: str, author: str, embedder: str | Embedder | None,
               backends: dict[FactScope, Backend], access: AccessLog) -> None:
        self.repo = repo
        self.paths = paths
        self.home = home
        self.org_id = org_id
        self.author = author
        self._embedder_arg = embedder
        self._embedder: Embedder | None = None
        self._vector_cache = None
        self._fact_vectors: FactVectors | None = None
        self._load_memo: tuple | None = None
        # Recall's view of every scope (`_table`), per scope and combined, and its vectors: the
        # first recall of a store streams the vector file (`embed/stream.py`), later ones keep
        # the rows in memory (`_recall_rows`: the table and its RowView).
        self._scope_tables: dict[FactScope, tuple] = {}
        self._table_memo: tuple | None = None
        self._recall_rows: tuple | None = None
        self._streamed = False
        self._claims: tuple[dict, frozenset] = ({}, frozenset())
        self._fixed_project_id: str | None = None
        self._relevance_floor: float | None = None
        self._term_index = None
        self._relevance_floor_set: float | None = None
        self.caps = dict(SCOPE_CAPS)
        self.backends = backends
        self.project_store = backends[FactScope.PROJECT]
        self.access = access
        self.warnings: list[str] = []

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, embedder: str | Embedder | None = None) -> FactStore:
        """The store of the repository containing *path* (default: the one git would use here,
        honouring GIT_DIR/GIT_WORK_TREE as inside hooks); NotARepository otherwise."""
        return cls(identity.open_repository(path), embedder=embedder)

    # --- identity ------------------------------------------------------------------

    @property
    def project_id(self) -> str:
        """Stable across clones: recorded in the ref's meta.json, else the root commit."""
        if self._fixed_project_id is not None:
            return self._fixed_project_id
        # Only an in-memory store has no repository, and it has a fixed id.
        assert self.repo is not None and self.paths is not None
        recorded = cast(RefStore, self.project_store).meta().get("project_id")
        if isinstance(recorded, str) and recorded:
            return recorded
        root = identity.root_commit_id(self.repo)
        if root:
            return root
        # Unborn repository: one id, kept until the first commit exists (first writer wins).
        return publish_once(self.paths.neo_dir / "project_id", new_fact_id() + "\n").strip()

    # --- setup ---------------------------------------------------------------------

    def init(self) -> dict:
        """Create `.git/neo/`, the ref's reflog and its first commit (meta.json). Idempotent."""
        if self.repo is None:
            raise NeoError("an in-memory store has no repository to initialise",
                           "open one with FactStore.open(path)")
        assert self.paths is not None
        self.paths.neo_dir.mkdir(parents=True, exist_ok=True)
        ensure_reflog(self.paths.common_dir, FACTS_REF)
        created = False
        project = cast(RefStore, self.project_store)   # a store with a repository keeps its project facts on the ref
        if project.tip() is None:
            created = project.initialize()
        return {"ref": FACTS_REF, "created": created, "project_id": self.project_id,
                "org_id": self.org_id, "neo_dir": str(self.paths.neo_dir),
                "global_facts": str(self.backends[FactScope.GLOBAL].description)}

    # --- reading -------------------------------------------------------------------

    def _load(self, scopes: Iterable[FactScope] = SCOPE_ORDER) -> list[Fact]:
        """Every fact of *scopes*, in scope order. While no backend changed (each hands back the
        same LoadedScope object) the same list object comes back: recall's vector matrix and
        layout are then reused by identity, without a pass over every fact. Read it only."""
        scopes = tuple(scopes)
        loaded = [self.backends[scope].load() for scope in scopes]
        memo = self._load_memo
        if memo is not None and memo[0] == scopes and all(a is b for a, b in zip(memo[1], loaded)):
            self.warnings = list(memo[3])
            return memo[2]
        facts: list[Fact] = []
        warnings: list[str] = []
        for scope, part in zip(scopes, loaded):
            facts.extend(f for f in part.facts.values() if f.scope is scope)
            warnings.extend(part.warnings)
        self.warnings = warnings
        self._load_memo = (scopes, loaded, facts, tuple(warnings))
        return facts

    def _table(self):
        """Every fact of every scope as one `FactTable`, in scope order (as `_load` lists them):
        the ref's facts stay undecoded until read. While no backend changed, the same table
        object (recall's layout is then reused by identity)."""
        from neo_git.fact_table import SCOPE_INDEX, FactTable

        parts, warnings = [], []
        for scope in SCOPE_ORDER:
            backend = self.backends[scope]
            table_of = getattr(backend, "table", None)
            if table_of is not None:
                part, part_warnings = table_of()
                if len(part) and bool((part.rows["scope"] != SCOPE_INDEX[scope]).any()):
                    raise NeoError(f"the {scope.value} scope handed out facts of another scope")  # a bug
            else:
                loaded = backend.load()
                kept = self._scope_tables.get(scope)
                if kept is None or kept[0] is not loaded:
                    kept = self._scope_tables[scope] = (
                        loaded, FactTable.of([f for f in loaded.facts.values() if f.scope is scope]))
                part, part_warnings = kept[1], loaded.warnings
            parts.append(part)
            warnings.extend(part_warnings)
        memo = self._table_memo
        if memo is not None and all(a is b for a, b in zip(memo[0], parts)):
            table = memo[1]
        else:
            table = FactTable.concat(parts)
            self._table_memo = (parts, table)
        self.warnings = warnings
        return table

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
                if change.parents and fact_scope is not FactScope.PROJECT and not isinstance(backend, RefStore):
                    raise NeoError(f"the {fact_scope.value} scope is a file: it has no parent commits")
            return change

        return backend.transact(checked)

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
        """Retract a fact without a successor (keeps its text and the reason); restore undoes it."""
        reason = redact(check_text("reason", reason or "", 1000).strip())
        fact = self._find(fact_id)

        def make(current: Fact, facts: Mapping[str, Fact]) -> list[Fact]:
            if not current.is_valid:
                return []
            return [current.evolve(is_valid=False, metadata={"invalidation": Invalidation(
                reason="invalidated", at=now_iso(), detail=reason or "invalidated by hand")})]

        return self._update(fact, f"invalidate {fact.id}: {fact.subject}"[:120], make)

    def restore(self, fact_id: str) -> Fact:
        """Bring back a superseded, evicted or invalidated fact; the supersession pointers are undone."""
        fact = self._find(fact_id)
        if fact.is_valid:
            raise NeoError(f"fact {fact.id} is already valid", "nothing to restore")

        def make(current: Fact, facts: Mapping[str, Fact]) -> list[Fact]:
            from neo_git.store.review import undo_supersession

            return [] if current.is_valid else undo_supersession(current, facts)

        restored = self._update(fact, f"restore {fact.id}: {fact.subject}"[:120], make)
        return self.access.apply(restored)

    # --- explaining ----------------------------------------------------------------

    def history(self, fact_id: str) -> builtins.list[Fact]:
        """The supersession chain through this fact, oldest first."""
        facts = self._load()
        chain = supersession_chain(self._find(fact_id, facts), {f.id: f for f in facts})
        return [self.access.apply(f) for f in chain]

    def why(self, fact_id: str) -> dict:
        """Why a fact is in its state: valid, superseded (by what, similarity, threshold), evicted, ..."""
        from neo_git.store import trail  # what upkeep did lives in the ref's log

        facts = self._load()
        try:
            fact = self._find(fact_id, facts)
        except FactNotFound:
            purged = None if self.paths is None else trail.explain_purged(self.paths.common_dir, fact_id)
            if purged is None:
                raise
            return purged
        info = explain(fact, {f.id: f for f in facts})
        if fact.is_valid and fact.scope is FactScope.PROJECT and self.paths is not None:
            trail.add_upkeep_trail(info, self.paths.common_dir, fact.id)
        return info

    def nearest(self, text: str, *, scope: str = "project", kind: str = "pattern", k: int = 3,
                exclude: Sequence[str] = ()) -> builtins.list[tuple[Fact, float]]:
        """The *k* valid facts of this scope and kind closest to *text* (cosine, highest first),
        so a caller (an agent) can pass `supersedes` explicitly when it means to replace one."""
        fact_scope, fact_kind = parse_scope(scope), parse_kind(kind)
        skip = set(exclude)
        peers = [f for f in self._load((fact_scope,))
                 if f.is_valid and f.kind is fact_kind and f.scope is fact_scope and f.id not in skip]
        if not peers or k <= 0:
            return []
        scores = self._vectors_of(peers) @ self._embed_one(text)
        ranked = sorted(zip(peers, (float(x) for x in scores)), key=lambda pair: (-pair[1], pair[0].id))
        return [(fact, round(score, 4)) for fact, score in ranked[:k] if score == score]

    # --- recall --------------------------------------------------------------------

    def recall(self, query: str, k: int = 5, max_tokens: int = 12000, file: str | None = None,
               explain: bool = False) -> ContextResult:
        """Constraints, ranked facts, what changed and known unknowns for *query*; with *file* (a path
        relative to the repository root) the facts citing it or scoped to it come first and its
        path-scoped constraints apply; with *explain* the result carries why each ranked fact is
        relevant (`relevance.Explanation`)."""
        from neo_git.recall import assemble, scored_positions

        check_text("query", query, 100_000, required=True)
        if k < 0 or max_tokens <= 0:
            raise NeoError("k must be ≥ 0 and max-tokens > 0")
        from neo_git.embed import family_threshold, noise
        from neo_git.store.term_index import pool_words

        table = self._table()
        cosines, matrix = self._table_cosines(table, self._embed_one(query), scored_positions(table.rows)) \
            if len(table) else ([], None)
        claims = self.untrusted()
        if claims is not self._claims[0]:  # the same dict while the tips and the trust set are
            self._claims = (claims, frozenset(claims))
        result = assemble(query, table, cosines, k=k, max_tokens=max_tokens,
                          environment=self.environment(), last_accessed=self.access.last_accessed(),
                          untrusted=self._claims[1], vectors=matrix,
                          family_threshold=family_threshold(self.embedder), file=file,
                          floor=self.relevance_override, noise=noise(self.embedder),
                          lexical=lambda rows: pool_words(self.term_index, query, table, rows), explain=explain)
        self.access.record(result.returned_ids)
        apply = self.access.apply
        return result.with_facts(apply)

    def untrusted(self) -> dict[str, str]:
        """{fact id: author e-mail} of project facts whose author is not trusted here: claims
        (computed from the ref's history and `neo.trusted`, never stored; see neo_git.sync.trust)."""
        from neo_git.store.trust import untrusted_authors

        return untrusted_authors(self)

    def environment(self) -> dict:
        """Where the question is asked from (see `recall.environment`)."""
        from neo_git.recall import environment

        return environment(self.repo, self.paths, self.org_id)


def _user_identity() -> str:
    """`Name <email>` outside a repository: the environment, else the user's git config."""
    from neo_git.gitrun import run_git

    def value(key: str, env: str) -> str | None:
        if os.environ.get(env):
            return os.environ[env]
        try:
            proc = run_git(["config", "--get", key], check=False, timeout=5)
        except NeoError:
            return None
        return proc.stdout.strip() or None if proc.returncode == 0 else None

    return f"{value('user.name', 'GIT_AUTHOR_NAME') or 'unknown'} <{value('user.email', 'GIT_AUTHOR_EMAIL') or 'unknown'}>"
