"""Keys pinned per remote on first use: the first key seen signing as an address from a remote.

git-neo signs every facts commit (`store/signing.py`), so most commits a sync brings carry a
signature git can check even when nobody distributed keys. For a key nobody bound to an address
(`store/keyring.py`), the first valid signature on a commit that claims an address, from a given
remote, pins that key to that address for that remote (trust on first use, as ssh does for hosts):

    .git/neo/trust/pins.json  {"format": 1, "pins": {"origin alice@example.com":
        {"remote": "origin", "address": "alice@example.com", "key": "SHA256:…", "commit": "<first>"}}}

The first pin stands: a later commit from that remote claiming that address with another key is
a *conflict* (`store/signers.py`), never a new pin. A key pinned to one address on a remote is not
pinned to a second one. A pin says only "the same key as the first time"; what it is worth is
decided in `store/signers.py` and `store/trust.py` (authority only for addresses the person
trusts). The record is local and never pushed. Lost, it is rebuilt from the verdicts in the
order the facts history gives (`sync/signatures.rejudge`); until then no pin counts (closed).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType

from neo_git.store.file_memo import FileMemo

RECORD = Path("trust") / "pins.json"
SIGNED = ("G", "U")    # git: a good signature; U = good, by a key no allowed-signers file names
_MEMO: FileMemo[Mapping[tuple[str, str], dict]] = FileMemo(MappingProxyType({}))


def record_path(neo_dir: Path) -> Path:
    """Where one repository's pins live."""
    return Path(neo_dir) / RECORD


def pins(neo_dir: Path) -> Mapping[tuple[str, str], dict]:
    """{(remote, address): pin} (the same object while the file is unchanged: trust memoises on it)."""
    from neo_git.fileio import read_table

    def load(path: Path) -> Mapping[tuple[str, str], dict]:
        return {(row["remote"], row["address"]): row for row in read_table(path, "pins").values() if _valid(row)}

    return _MEMO.get(record_path(neo_dir), load)


def _valid(row: Mapping) -> bool:
    return all(isinstance(row.get(k), str) and row.get(k) for k in ("remote", "address", "key"))


def state(neo_dir: Path) -> str:
    """"missing", "unreadable" or "ok"."""
    from neo_git.fileio import read_record

    path = record_path(neo_dir)
    if not path.exists():
        return "missing"
    return "ok" if isinstance(read_record(path, "pins"), dict) else "unreadable"


def pinnable(verdict: Mapping) -> bool:
    """Whether a verdict can pin a key: a valid signature with a fingerprint, from a named remote,
    on a commit that claims an address."""
    return verdict.get("sig") in SIGNED and bool(verdict.get("key")) and bool(verdict.get("remote")) \
        and "@" in str(verdict.get("claimed", ""))


def pin_first_uses(neo_dir: Path, judged: Iterable[tuple[str, Mapping]], *, always: bool = False) -> list[dict]:
    """Pin, for each (remote, claimed address) with no pin yet, the key of the first of *judged*
    ((commit, verdict) pairs, oldest first) that signed as it; returns the new pins. A key already
    pinned to another address on that remote is not pinned again. *always*: write the record even
    when nothing is new (a rebuilt record)."""
    from neo_git.fileio import rewrite_record

    candidates = [(c, v) for c, v in judged if pinnable(v)]
    if not candidates and not always:
        return []
    made: list[dict] = []

    def change(current) -> dict:
        rows = current if isinstance(current, dict) else {}
        table = {k: v for k, v in rows.items() if isinstance(v, dict) and _valid(v)}
        taken = {(v["remote"], v["key"]): v["address"] for v in table.values()}
        for commit, verdict in candidates:
            remote, address, key = verdict["remote"], verdict["claimed"], verdict["key"]
            name = f"{remote} {address}"
            if name in table or taken.get((remote, key), address) != address:
                continue
            row = {"remote": remote, "address": address, "key": key, "commit": commit}
            table[name] = row
            taken[(remote, key)] = address
            made.append(row)
        return table

    path = record_path(neo_dir)
    rewrite_record(path, "pins", change)
    _MEMO.forget(path)
    return made


def clear_memo() -> None:
    """Forget pins read by this process (tests that rewrite the file within one mtime tick)."""
    _MEMO.forget()
