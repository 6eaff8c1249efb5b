"""Neo v2.0 facts files: `{"version": "2.0", "facts": [...]}` in, and out.

Import is all-or-nothing: every entry is validated first and one bad entry
stops the import with its position and reason, so a half-imported file never
happens. Ids are kept, so importing the same file twice adds nothing. Inline
`embedding` arrays are derived data: used to warm the vector cache when they
match the active embedder's space, otherwise ignored.

Round trips keep the store sound: an export of the valid facts also carries the facts they
point at (`supersedes`, `depends_on`: the retired predecessors, the trail of what changed),
and an import cuts a pointer at a fact that is neither in the file nor in the store, saying
which (`cut_pointers`), instead of leaving one that every later read warns about.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neo_git import safejson
from neo_git.errors import InvalidFact, NeoError
from neo_git.facts import SCOPE_ORDER, Fact, FactScope, now_iso, parse_scope, redact_fact
from neo_git.redact import citation_names, redact, refuse_secrets
from neo_git.store.base import Change
from neo_git.store.filestore import ENVELOPE_VERSION
from neo_git.store.policy import plan_evictions

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store import FactStore

MAX_IMPORT_BYTES = 512 * 1024 * 1024
NEO_EMBEDDING_MODEL = "fastembed:jinaai/jina-embeddings-v2-base-code"


def read_envelope(path: Path) -> list:
    """The `facts` list of a Neo v2.0 file (or a bare list), with clear errors."""
    from neo_git.readfile import read_regular

    try:
        # A FIFO, a device (/dev/zero) or a directory is refused before it is read.
        data = safejson.loads(read_regular(path, MAX_IMPORT_BYTES))
    except FileNotFoundError:
        raise NeoError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise NeoError(f"{path} is a directory, not a facts file") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise NeoError(f"{path} is not valid JSON ({exc})", 'expected {"version": "2.0", "facts": [...]}') from None
    if isinstance(data, dict) and isinstance(data.get("facts"), list):
        version = str(data.get("version", ENVELOPE_VERSION))
        if not version.startswith("2."):
            raise NeoError(f"{path} is a Neo v{version} file; only v2.x is supported")
        return data["facts"]
    if isinstance(data, list):
        return data
    raise NeoError(f"{path} is not a facts file", 'expected {"version": "2.0", "facts": [...]}')


def _normalise(raw: Any, scope: FactScope | None) -> tuple[Fact, list | None]:
    """A Fact from one Neo entry (lenient about missing optional fields), and its embedding."""
    if not isinstance(raw, dict):
        raise InvalidFact(f"expected an object, got {type(raw).__name__}")
    entry = dict(raw)
    embedding = entry.pop("embedding", None)
    if not entry.get("subject") and isinstance(entry.get("body"), str):
        first = redact(entry["body"].strip().splitlines()[0]) if entry["body"].strip() else ""
        entry["subject"] = first[:120]   # redacted before the cut, as every text is
    given = entry.get("metadata")
    meta: dict[str, Any] = given if isinstance(given, dict) else {}
    for key in ("created_at", "last_accessed", "access_count", "source_file", "source_prompt",
                "confidence", "success_count", "provenance", "author"):
        if key in entry and key not in meta:  # flat Neo layouts keep these at the top level
            meta[key] = entry.pop(key)
    entry["metadata"] = meta
    if scope is not None:
        entry["scope"] = scope.value
    if entry.get("id") is None:
        # No id in the file: derive one from the content, so importing it twice adds nothing.
        canonical = json.dumps(entry, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
        entry["id"] = hashlib.sha256(canonical).hexdigest()[:16]
    fact = Fact.from_dict(entry)
    refuse_secrets(tags=fact.tags, source_file=fact.metadata.source_file, paths=fact.metadata.paths,
                   citations=citation_names(fact.metadata.citations))
    fact = redact_fact(fact)   # metadata too: source_prompt, author, invalidation.detail reach the ref
    return fact, embedding if isinstance(embedding, list) else None


def import_file(store: FactStore, path: str | Path, scope: str | None = None,
                skip_other_orgs: bool = False) -> dict:
    """Import every fact of a Neo v2.0 file; returns counts per scope. Org facts go only to
    their own org (`org_id`, else the file's `org`): another org's are refused (NeoError, nothing
    imported) or, with *skip_other_orgs*, left out and listed in `other_org`."""
    path = Path(path)
    entries = read_envelope(path)
    file_org = _file_org(path)
    target = parse_scope(scope) if scope else None
    parsed: list[tuple[Fact, list | None]] = []
    for index, raw in enumerate(entries):
        try:
            parsed.append(_normalise(raw, target))
        except InvalidFact as exc:
            raise NeoError(f"{path}: fact #{index}: {exc.message}; nothing was imported", exc.hint) from None
    parsed, other_org = _own_org_only(store, parsed, file_org, path, skip_other_orgs)
    summary: dict[str, Any] = {"file": str(path), "read": len(parsed) + len(other_org), "added": {},
                               "skipped_existing": 0, "evicted": {}, "embeddings": "none", "cut_pointers": [],
                               "other_org": other_org}
    # Ids are unique across scopes: an id already stored anywhere is skipped.
    elsewhere = {f.id for f in store.list(include_invalid=True)}
    parsed, summary["cut_pointers"] = cut_dangling(parsed, elsewhere)
    for fact_scope in SCOPE_ORDER:
        batch = [f for f, _ in parsed if f.scope is fact_scope]
        summary["skipped_existing"] += sum(1 for f in batch if f.id in elsewhere)
        batch = [f for f in batch if f.id not in elsewhere]
        if not batch:
            continue
        added: list[Fact] = []
        evicted: list[str] = []
        cap = store.cap_of(fact_scope)

        def body(facts: Mapping[str, Fact], batch=batch, added=added, evicted=evicted, cap=cap,
                 fact_scope=fact_scope) -> Change | None:
            added[:] = [f for f in batch if f.id not in facts]
            if not added:
                return None
            # The cap applies to this write, as to an add: otherwise the next add would evict
            # thousands of facts in one commit that says it added one.
            evictions = evict_over_cap(facts, added, fact_scope, cap)
            evicted[:] = [f.id for f in evictions]
            written = {f.id: f for f in added}
            written.update((f.id, f) for f in evictions)
            details = tuple(f"evict {fid} (over the {fact_scope.value} cap of {cap})" for fid in evicted)
            return Change(tuple(written.values()), f"import {len(added)} {fact_scope.value} facts from {path.name}",
                          details)

        store.transact(fact_scope, body)
        summary["added"][fact_scope.value] = len(added)
        if evicted:
            summary["evicted"][fact_scope.value] = list(evicted)
        summary["skipped_existing"] += len(batch) - len(added)
    summary["embeddings"] = _use_embeddings(store, parsed)
    return summary


def _file_org(path: Path) -> str | None:
    """The org a file says its org facts belong to (`"org"` in the envelope), if any."""
    try:
        data = safejson.loads(path.read_bytes())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    org = data.get("org") if isinstance(data, dict) else None
    return org.strip().lower() if isinstance(org, str) and org.strip() else None


def _own_org_only(store: FactStore, parsed: list, file_org: str | None, path: Path,
                  skip: bool) -> tuple[list, list[dict]]:
    """*parsed* without org facts of another org (issue 36: an org's facts apply only in its
    repositories; a repository without an org has no org to give them). NeoError unless *skip*."""
    from neo_git.identity import UNKNOWN_ORG

    mine = store.org_id or UNKNOWN_ORG
    kept, other = [], []
    for fact, embedding in parsed:
        org = (fact.org_id or file_org or UNKNOWN_ORG) if fact.scope is FactScope.ORG else mine
        if org == mine:
            kept.append((fact, embedding))
        else:
            other.append({"id": fact.id, "org": org, "subject": fact.subject})
    if other and not skip:
        orgs = ", ".join(sorted({o["org"] for o in other}))
        here = f"this repository's org is '{mine}'" if mine != UNKNOWN_ORG else "this repository has no org"
        raise NeoError(f"{path} holds {len(other)} org fact(s) of {orgs}, and {here}; nothing was imported",
                       f"import the file in a repository of {orgs}; or `git neo import --skip-other-orgs {path}` "
                       "imports the rest without them; or `--scope project` makes every fact this project's")
    return kept, other


def cut_dangling(parsed: list[tuple[Fact, list | None]], stored: set[str]) -> tuple[list, list[dict]]:
    """The parsed facts with every pointer at a fact neither in the file nor in *stored* cut
    (the fact keeps its state), and what was cut: [{"id", "pointer", "target"}]."""
    from neo_git.doctor.pointers import cut, missing_pointers

    known = stored | {f.id for f, _ in parsed}
    out, report = [], []
    for fact, embedding in parsed:
        missing = missing_pointers(fact, known)
        if missing:
            fact = cut(fact, missing)
            report += [{"id": fact.id, "pointer": name, "target": target} for name, target in missing]
        out.append((fact, embedding))
    return out, report


def evict_over_cap(facts: Mapping[str, Fact], added: list[Fact], scope: FactScope, cap) -> list[Fact]:
    """The facts to invalidate so that *scope* holds at most *cap* valid facts once *added* are in,
    by the rule an add follows (`store.policy.plan_evictions`: the lowest retention score first,
    never a protected fact). *cap* is the store's `cap_of(scope)`: a teammate's facts (`cap.others()`)
    are neither counted nor evicted by an import, as by an add."""
    if cap is None:
        return []
    current = {**facts, **{f.id: f for f in added}}
    theirs = cap.others() if getattr(cap, "others", None) is not None else frozenset()
    valid = [f for f in current.values() if f.is_valid and f.scope is scope and f.id not in theirs]
    return plan_evictions(valid, scope, cap, now_iso())


def _use_embeddings(store: FactStore, parsed: list[tuple[Fact, list | None]]) -> str:
    with_vectors = [(f, e) for f, e in parsed if e]
    if not with_vectors:
        return "none"
    embedder = store.embedder
    dims = {len(e) for _, e in with_vectors}
    if embedder.id != NEO_EMBEDDING_MODEL or dims != {embedder.dim}:
        return f"ignored (the file's vectors are not in the {embedder.id} space)"
    cache = store.vector_cache
    if cache is None:
        return "ignored (this store keeps no vector cache)"
    import numpy as np

    try:
        cache.put(
            embedder.id, [f.text for f, _ in with_vectors], np.asarray([e for _, e in with_vectors], dtype=np.float32))
    except (ValueError, OSError) as exc:
        return f"ignored ({exc})"
    return f"cached {len(with_vectors)} vectors"


def export_envelope(store: FactStore, scope: str | None = None, include_invalid: bool = False) -> dict:
    """The facts as a Neo v2.0 envelope (no inline embeddings: they are derived data). Without
    *include_invalid*, the retired facts the exported ones point at come along, so an import
    elsewhere keeps every pointer (`carried` counts them)."""
    facts = store.list(scope=scope, include_invalid=include_invalid)
    carried: list[Fact] = []
    if not include_invalid:
        every = {f.id: f for f in store.list(scope=scope, include_invalid=True)}
        chosen = {f.id for f in facts}
        todo = [f for f in facts]
        while todo:
            fact = todo.pop()
            for target in (fact.supersedes, *fact.depends_on):
                if target and target not in chosen and target in every:
                    chosen.add(target)
                    carried.append(every[target])
                    todo.append(every[target])
        facts = sorted(facts + carried, key=lambda f: (f.metadata.created_at, f.id))
    # Redacted again on the way out: a file written by an older version, or by hand, may hold one.
    # "org": whose org facts these are (each also carries its `org_id`); import writes them only there.
    return {"version": ENVELOPE_VERSION, "org": store.org_id, "facts": [redact_fact(f).to_dict() for f in facts],
            "carried": len(carried)}
