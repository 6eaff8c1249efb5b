"""`git neo doctor`: check the facts ref, the local caches, locks and temp files.

The ref is shared, so the doctor only reports on it (every blob must be a valid
fact at the path its id names, pointers must lead to facts on the ref, and
supersession must not loop) and says what to do. Local state is derived or
leftover, so `--fix` may repair it: caches that do not verify against the ref
are deleted (rebuilt on demand: costs time, never facts), a ref lock whose owner
is gone and temp files nobody has open are removed.

"Owner is gone" is decided by asking the kernel: a git process updating a ref
keeps its `.lock` open, as an interrupted `atomic_write` keeps its temp file, so
a file no process has open and that is older than any live update is stale.
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from neo_git.errors import InvalidFact, NeoError

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.identity import RepositoryPaths

STALE_SECONDS = 60.0  # a temp file or lock untouched this long, and not open, is a leftover


@dataclass(frozen=True)
class Finding:
    """One problem: which check found it, what it is, and what `--fix` does about it (None: by hand)."""

    check: str
    problem: str
    fix: str | None = None
    hint: str | None = None
    path: str | None = None

    def to_dict(self) -> dict:
        """Plain JSON form."""
        return asdict(self)


# --- the facts ref -------------------------------------------------------------------


def check_ref(repo: "pygit2.Repository", ref: str = "refs/neo/facts") -> list[Finding]:
    """Every blob on *ref* parses, is a valid fact filed at its id's path; pointers resolve; no loops."""
    import pygit2

    from neo_git.store.ref_facts import fact_from_blob, pointer_problems

    try:
        reference = repo.references[ref]
    except KeyError:
        return []
    if reference.type == pygit2.enums.ReferenceType.SYMBOLIC:
        return [Finding("ref", f"{ref} is a symbolic ref (to {reference.target})",
                        hint=f"`git symbolic-ref --delete {ref}`, then `git neo init`")]
    findings: list[Finding] = []
    commit = repo.get(reference.target)
    if not isinstance(commit, pygit2.Commit):
        return [Finding("ref", f"{ref} does not point at a commit", hint=f"inspect it with `git log {ref}`")]
    root = repo.get(commit.tree_id)
    if root is None:
        return [_missing(ref, commit.tree_id, "the root tree")]
    facts_entry = root["facts"] if "facts" in root else None
    facts_tree = repo.get(facts_entry.id) if facts_entry is not None else None
    if facts_entry is not None and facts_tree is None:
        return [_missing(ref, facts_entry.id, "facts/")]
    facts = {}
    for folder in facts_tree if isinstance(facts_tree, pygit2.Tree) else ():
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
    findings += [Finding("ref", problem, hint="`git neo why ID` explains the fact; a purge or a partial push "
                                              "can leave such pointers")
                 for problem in pointer_problems(facts, ref)]
    findings += _loops(facts, ref)
    return findings


_REF_HINT = ("readers skip it and a write carries it through untouched; ask its author to fix it, "
             "or remove it with a commit on the ref")


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


# --- local caches ---------------------------------------------------------------------


def check_caches(paths: "RepositoryPaths", home: Path, ref: str = "refs/neo/facts") -> list[Finding]:
    """Derived files that do not verify: the parse cache against the blobs it names, vector
    records against their checksums, the access log against JSON."""
    from neo_git import safejson
    from neo_git.embed.cache import DATA_FILE, untrusted_records
    from neo_git.store.parse_cache import parse_cache_path, untrusted_entries

    findings = []
    snapshot = parse_cache_path(paths.common_dir, ref)
    in_the_way = [p for p in (snapshot, paths.neo_dir / "access.json", *_glob(home / "cache" / "vectors", "*/vectors.bin"))
                  if p.is_dir()]
    findings += [Finding("cache", f"{p} is a folder where a cache file belongs (the cache is not used)",
                         hint=f"move {p} out of the way", path=str(p)) for p in in_the_way]
    counts = untrusted_entries(snapshot, ref) if not snapshot.is_dir() else None
    if counts and counts[1]:
        findings.append(Finding("cache", f"{snapshot}: {counts[1]} of {counts[0]} entries do not match the "
                                         "blobs they claim (never used)",
                                fix=f"delete {snapshot} (derived; rebuilt from the ref)", path=str(snapshot)))
    vectors = home / "cache" / "vectors"
    for path in sorted(vectors.glob(f"*/{DATA_FILE}")) if vectors.is_dir() else ():
        counts = None if path.is_dir() else untrusted_records(path)
        if counts and counts[1]:
            findings.append(Finding("cache", f"{path}: {counts[1]} of {counts[0]} vector records fail their "
                                             "checksum or are not unit vectors (never used)",
                                    fix=f"delete {path} (derived; texts are embedded again)", path=str(path)))
    access = paths.neo_dir / "access.json"
    if access.is_file():
        try:
            safejson.loads(access.read_bytes())
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            findings.append(Finding("cache", f"{access}: unreadable ({exc}); access counts start over",
                                    fix=f"delete {access}", path=str(access)))
    return findings


# --- locks and temp files -------------------------------------------------------------


def open_files() -> set[str] | None:
    """Paths some process has open (from /proc); None where the system does not say."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    found: set[str] = set()
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir(proc / pid / "fd"):
                try:
                    found.add(os.readlink(proc / pid / "fd" / fd))
                except OSError:
                    continue
        except OSError:
            continue
    return found


def check_leftovers(paths: "RepositoryPaths", home: Path, now: float | None = None) -> list[Finding]:
    """Ref locks whose owner is gone and temp files nobody is writing."""
    now = time.time() if now is None else now
    held = open_files()
    common = paths.common_dir
    locks = [*_glob(common / "refs" / "neo", "**/*.lock"), *_glob(common / "refs" / "notes", "**/*.lock"),
             *(p for p in (common / "packed-refs.lock",) if p.exists())]
    temps = [p for folder in (paths.neo_dir, paths.neo_dir / "cache", paths.git_dir / "neo", home / "facts",
                              *_glob(home / "cache" / "vectors", "*/"))
             for p in _glob(folder, "*.tmp")]
    findings = []
    for kind, files in (("lock", locks), ("temp file", temps)):
        for path in sorted(set(files)):
            try:
                age = now - path.stat().st_mtime
            except OSError:
                continue
            if held is not None and str(path) in held:
                continue  # someone is using it right now
            if age < STALE_SECONDS:
                continue
            owner = "no process has it open" if held is not None else "no way to ask who holds it"
            findings.append(Finding("leftovers", f"{path}: a {kind} left behind {int(age)} s ago ({owner})",
                                    fix=f"remove {path}", path=str(path)))
    return findings


def _glob(folder: Path, pattern: str) -> Iterable[Path]:
    try:
        return [p for p in folder.glob(pattern)] if folder.is_dir() else []
    except OSError:
        return []


# --- the whole examination ------------------------------------------------------------


def examine(repo: "pygit2.Repository", home: Path | None = None) -> list[Finding]:
    """Everything the doctor checks, in order: the ref, the caches, the leftovers."""
    from neo_git import identity

    paths = identity.repository_paths(repo)
    home = identity.neo_home() if home is None else Path(home)
    return check_ref(repo) + check_caches(paths, home) + check_leftovers(paths, home)


def repair(findings: Iterable[Finding]) -> list[Finding]:
    """Apply every fix `--fix` may make (removing derived or leftover files); returns those done.
    A path that changed meanwhile (now open, or gone) is left alone."""
    held = open_files()
    done = []
    for finding in findings:
        if finding.fix is None or finding.path is None:
            continue
        path = Path(finding.path)
        if held is not None and str(path) in held:
            continue
        try:
            if path.is_dir():
                continue  # a folder in the way is the user's to look at, never deleted
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise NeoError(f"cannot remove {path}: {exc.strerror}", "check its permissions") from None
        done.append(finding)
    return done
