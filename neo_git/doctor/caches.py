"""The doctor's check of local derived caches: the parse cache, vector records, the access log."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.doctor.findings import Finding
from neo_git.doctor.leftovers import glob_paths

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.identity import RepositoryPaths


def check_caches(paths: RepositoryPaths, home: Path, ref: str = "refs/neo/facts") -> list[Finding]:
    """Derived files that do not verify: the parse cache against the blobs it names, vector
    records against their checksums, the access log against JSON."""
    from neo_git import safejson
    from neo_git.embed.cache import DATA_FILE
    from neo_git.embed.vecfile import untrusted_records
    from neo_git.store.parse_cache import parse_cache_path
    from neo_git.store.parse_journal import untrusted_entries

    findings = []
    snapshot = parse_cache_path(paths.common_dir, ref)
    in_the_way = [p for p in (snapshot, paths.neo_dir / "access.json", paths.neo_dir / "access.log", *glob_paths(home / "cache" / "vectors", "*/vectors.bin"))
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
