"""What this clone learned about each commit a sync brought in: the local record trust reads.

A commit's author line is whatever its writer typed, so it says nothing about who wrote it.
When `git neo sync` brings commits from a remote it asks git to verify their signatures
(`git log --format=%G?`, which honours `gpg.ssh.allowedSignersFile` and gpg's trust) and
records, per commit, in `.git/neo/trust/received.json` (local, never pushed):

    {"remote": "origin", "sig": "G", "signer": "alice@example.com", "claimed": "alice@…",
     "key": "SHA256:…"}

`sig` is git's one-letter verdict (G good, U good but unknown key, N none, B bad, …),
`signer` the principal git names for a good signature and `key` the signing key's fingerprint
(`%GF`; for ssh, git reports it for U too: the signature is valid, the key just not in an
allowed-signers file). Whether such a commit is trusted is decided when asked (`is_trusted`),
with the configuration of that moment: a good signature by a trusted address, a key that speaks
for a trusted address (`store/signers.py`), or a remote listed in `neo.trustUnsigned`. A commit with no record
counts by its author only when this clone wrote it (`store/local_writes.py`); any other is
unverified until judged: a lost or damaged record fails closed, and the next sync (or
`git neo doctor --fix`) judges again from git data (`sync/signatures.rejudge`). `remote` is
"" for a commit no remote's history holds (it came by plain git from somewhere).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from neo_git.store.file_memo import FileMemo
from neo_git.store.keyring import signer_email

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store.signers import Signers


RECORD = Path("trust") / "received.json"
GOOD = "G"     # git: "a good (valid) signature"; U (unknown validity) is not enough
# verdicts per record file, read again when it changes: recall asks on every question; the same
# object while unchanged (and for a missing record), so recall's claims are kept while it is
_MEMO: FileMemo[Mapping[str, dict]] = FileMemo(MappingProxyType({}))


def record_path(neo_dir: Path) -> Path:
    """Where the verdicts of one repository live."""
    return Path(neo_dir) / RECORD


def verdicts(neo_dir: Path) -> Mapping[str, dict]:
    """{commit id: verdict} of every commit a sync brought in ({} before the first one)."""
    from neo_git.fileio import read_table

    # unreadable: every received commit counts as unverified
    return _MEMO.get(record_path(neo_dir), lambda path: read_table(path, "commits"))


def state(neo_dir: Path) -> str:
    """"missing", "unreadable" or "ok": whether the record can be read as a record."""
    from neo_git.fileio import read_record

    path = record_path(neo_dir)
    if not path.exists():
        return "missing"
    if verdicts(neo_dir):
        return "ok"   # parsed (and memoized) already; only an empty table needs a second look
    return "ok" if isinstance(read_record(path, "commits"), dict) else "unreadable"


def record(neo_dir: Path, new: Mapping[str, dict], *, always: bool = False, replace: bool = False) -> None:
    """Add *new* verdicts (commit id -> verdict) under the record's lock; earlier ones are kept
    (a commit's first verdict stands: it was judged as it arrived) unless *replace* (a commit
    first seen by plain git, whose remote is now known). *always*: write the record even with
    nothing new (a rebuilt record that found nothing to judge)."""
    if not new and not always:
        return
    from neo_git.fileio import add_to_table

    path = record_path(neo_dir)
    add_to_table(path, "commits", new, keep_first=not replace)
    _MEMO.forget(path)


def is_trusted(verdict: Mapping, trusted: Iterable[str], trusted_remotes: Iterable[str],
               signers: Signers | None = None) -> bool:
    """Whether a received commit counts: a remote whose write access is trusted
    (`neo.trustUnsigned`; `*` is every remote), a good signature git verified by a trusted
    address (the user's allowed-signers file or gpg), or a signing key that speaks for a trusted
    address (*signers*, `store/signers.py`: your key, a bound key, a key pinned on first use)."""
    remotes = set(trusted_remotes)
    remote = verdict.get("remote")
    if remote and (remote in remotes or "*" in remotes):
        return True
    trusted = set(trusted)
    if verdict.get("sig") == GOOD and signer_email(verdict.get("signer", "")) in trusted:
        return True
    address = signers.speaks_for(verdict) if signers is not None else ""
    return bool(address) and address in trusted


def describe(verdict: Mapping, signers: Signers | None = None) -> str:
    """How a received commit's author is known, for people: "signed by X", "unverified (…)"."""
    if verdict.get("sig") == GOOD and verdict.get("signer"):
        return f"signed by {verdict['signer']}"
    how = signers.describe(verdict) if signers is not None else ""
    if how:
        return f"{how}, from {verdict.get('remote') or '?'}"
    return f"unverified: claims {verdict.get('claimed', '?')}, from {verdict.get('remote', '?')}"


def clear_memo() -> None:
    """Forget verdicts read by this process (tests that rewrite the file within one mtime tick)."""
    _MEMO.forget()

