"""What a pull's signing keys mean, in words: keys pinned on first use, and keys that did not match.

A pin is worth saying once, when it is made: from then on that key, and only that key, speaks
for the address from that remote. A commit whose key does not speak for the address it claims
while another key should (yours, a bound one, the pinned one) is what a forger's push looks like,
and also what a teammate's new machine looks like: said every time it arrives, with what to do.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from neo_git.store.signers import Signers


@dataclass(frozen=True)
class KeyNews:
    """Lines for the sync report: `notes` (pins made) and `warnings` (keys that did not match)."""

    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def key_news(signers: Signers, pinned: Iterable[Mapping], verdicts: Iterable[Mapping], trusted: Iterable[str],
             remote: str) -> KeyNews:
    """What the keys of one pull's commits (*verdicts*) and the pins they made (*pinned*) mean here."""
    trusted = set(trusted)
    notes = []
    for pin in pinned:
        address, key = pin["address"], pin["key"]
        if signers.reserved(address) or signers.addresses_of(key) is not None:
            continue   # only bound keys count for that address, or that key: the pin changes nothing
        if address in trusted:
            status = "you trust them, so commits it signs count as theirs"
        else:
            status = (f"their facts are team knowledge; `git neo trust add {address}` gives commits it signs "
                      "authority here")
        notes.append(f"pinned the signing key of {address} from {remote} on first use ({key}): {status}")
    counts: dict[str, int] = {}
    hints: dict[str, str] = {}
    for verdict in verdicts:
        why = signers.conflict(verdict)
        if why:
            counts[why] = counts.get(why, 0) + 1
            hints[why] = _hint(signers, verdict)
    warnings = [f"{n} commit(s) from {remote} {why}: they stay unverified claims; {hints[why]}"
                for why, n in counts.items()]
    return KeyNews(notes, warnings)


def _hint(signers: Signers, verdict: Mapping) -> str:
    claimed = verdict.get("claimed", "")
    if claimed == signers.me:
        return (f"if it is your own key from another machine (its `git neo trust list` shows it), "
                f"`git neo trust add {claimed} --key '<that key>'`")
    return (f"if {claimed} changed keys, check with them, then `git neo trust add {claimed} --key '<their key>'` "
            "(`git neo trust list` shows the keys seen)")
