"""The doctor's check of the facts ref: every blob a valid fact at its id's path, pointers
resolve, supersession never loops. The ref is shared: problems are reported, never rewritten."""
from __future__ import annotations

from typing import TYPE_CHECKING

from neo_git.doctor.findings import Finding
from neo_git.errors import InvalidFact

if TYPE_CHECKING:  # pragma: no cover
    import pygit2


def check_ref(repo: pygit2.Repository, ref: str = "refs/neo/facts") -> list[Finding]:
    """Every blob on *ref* parses, is a valid fact filed at its id's path; pointers resolve; no loops."""
    import pygit2

    from neo_git.store.ref_facts import fact_from_blob, pointer_problems

    try:
        reference = repo.references[ref]
    except KeyError:
        return []
    except (pygit2.GitError, OSError):
        return []   # a ref file that holds no id, a link loop: the "ref-file" check reports it (doctor/refdamage.py)
    if reference.type == pygit2.enums.ReferenceType.SYMBOLIC:
        return []   # the "ref-file" check reports it, with the tip `--fix` restores
    findings: list[Finding] = []
    commit = repo.get(reference.target)
    if not isinstance(commit, pygit2.Commit):
        return []   # a blob, a tree, a missing commit: the "ref-file" check reports it
    root = repo.get(commit.tree_id)
    if root is None:
        return [_missing(ref, commit.tree_id, "the root tree")]
    facts_entry = root["facts"] if "facts" in root else None
    if facts_entry is not None and facts_entry.filemode != pygit2.enums.FileMode.TREE:
        return [Finding("ref", f"{ref}:facts is not a folder (mode {int(facts_entry.filemode):o})",
                        path="facts", hint=_REF_HINT)]
    facts_tree = repo.get(facts_entry.id) if facts_entry is not None else None
    if facts_entry is not None and facts_tree is None:
        return [_missing(ref, facts_entry.id, "facts/")]
    facts = {}
    for folder in facts_tree if isinstance(facts_tree, pygit2.Tree) else ():
        if folder.filemode != pygit2.enums.FileMode.TREE:   # a gitlink's commit is never here
            findings.append(Finding("ref", f"{ref}:facts/{folder.name} is not a folder "
                                    f"(mode {int(folder.filemode):o})", path=f"facts/{folder.name}", hint=_REF_HINT))
            continue
        sub = repo.get(folder.id)
        if sub is None:
            findings.append(_missing(ref, folder.id, f"facts/{folder.name}/"))
            continue
        if not isinstance(sub, pygit2.Tree):
            findings.append(Finding("ref", f"{ref}:facts/{folder.name} is not a folder", path=f"facts/{folder.name}",
                                    hint=_REF_HINT))
            continue
        for entry in sub:
            path = f"facts/{folder.name}/{entry.name}"
            if entry.filemode != pygit2.enums.FileMode.BLOB:
                findings.append(Finding("ref", f"{ref}:{path} is not a regular file (mode {int(entry.filemode):o})",
                                        path=path, hint=_REF_HINT))
                continue
            blob = repo.get(entry.id)
            if blob is None:
                findings.append(_missing(ref, entry.id, path))
                continue
            try:
                if not isinstance(blob, pygit2.Blob):
                    raise InvalidFact(f"{ref}:{path}: not a file")
                fact = fact_from_blob(blob.data, path, ref)
            except InvalidFact as exc:
                findings.append(Finding("ref", exc.message, path=path, hint=_REF_HINT))
                continue
            facts[fact.id] = fact
    findings += [Finding("ref", problem, hint="`git neo doctor --fix --ref` proposes a commit that cuts such "
                                              "pointers (a purge or a partial import leaves them)")
                 for problem in pointer_problems(facts, ref)]
    findings += _loops(facts, ref)
    return findings


_REF_HINT = ("readers skip it and a write carries it through untouched (unless a new fact needs its "
             "folder name, which then replaces it); ask its author to fix it, or remove it with a commit on the ref")


def _missing(ref: str, oid, where: str) -> Finding:
    return Finding("ref", f"object {oid} ({ref}:{where}) is missing from this repository",
                   hint="`git fetch` it from a complete clone; `git fsck` lists what is missing")


def _loops(facts: dict, ref: str) -> list[Finding]:
    """Supersession chains that come back to themselves (A superseded by B superseded by A)."""
    reported: set[frozenset] = set()
    out = []
    for start in facts.values():
        seen: list[str] = []
        fact = start
        while fact is not None and fact.id not in seen:
            seen.append(fact.id)
            fact = facts.get(fact.superseded_by or "")
        if fact is not None:  # came back to an id already on the path: a loop
            loop = frozenset(seen[seen.index(fact.id):])
            if loop not in reported:
                reported.add(loop)
                out.append(Finding("ref", f"{ref}: supersession loops through {', '.join(sorted(loop))}",
                                   hint="`git neo restore ID` on one of them breaks the loop"))
    return out
