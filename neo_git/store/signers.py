"""Whom a signed commit speaks for: your own key, keys bound to an address, keys pinned on first use.

git verifies a commit's signature and names its key (`%GF`, recorded as the verdict's `key`:
`store/received.py`); this module says which address, if any, that key speaks for:

- **Your own key is you.** The key in `$NEO_HOME/keys` speaks for the local user whatever
  address its commit shows (your clones may use another one): whoever holds that folder is you.
- **A bound key speaks for its addresses only.** A key in the allowed-signers record
  (`store/keyring.py`: given with `git neo trust add EMAIL --key …`) speaks for the addresses it
  names; signed with it, a commit that claims anyone else speaks for nobody.
- **An address with a bound key, and your own address, are spoken for only by bound keys**: no
  pin can take them, so a forger's key never becomes "you".
- **Any other key speaks for the address its commit claims only when it is the key pinned for
  that address from that remote** (`store/pins.py`: the first key seen there); a different key
  is a *conflict*, reported and never trusted.

Speaking for an address is identity, not authority: a commit gets authority only when the
address it speaks for is trusted here (`store/trust.py`: you, `git neo trust add`, `neo.trusted`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from neo_git.errors import NeoError
from neo_git.store import keyring, pins
from neo_git.store.keyring import signer_email
from neo_git.store.signing_key import key_path, own_fingerprint

SIGNED = pins.SIGNED


@dataclass(frozen=True)
class Signers:
    """What this clone knows about keys: enough to say whom a verdict's key speaks for."""

    me: str = ""                                             # the local user's address
    own: str = ""                                            # your key's fingerprint ("" when none)
    bound: Mapping[str, frozenset[str]] = field(default_factory=dict)   # fingerprint -> addresses
    pinned: Mapping[tuple[str, str], dict] = field(default_factory=dict)  # (remote, address) -> pin

    def addresses_of(self, key: str) -> frozenset[str] | None:
        """The addresses a bound key speaks for (None: the key is bound to nobody)."""
        addresses = self.bound.get(key)
        if key and key == self.own:
            return frozenset({self.me}) | (addresses or frozenset())
        return addresses

    def reserved(self, address: str) -> bool:
        """Whether only bound keys may speak for *address* (you, or someone with a bound key)."""
        return address == self.me or any(address in a for a in self.bound.values())

    def speaks_for(self, verdict: Mapping) -> str:
        """The address the commit's key speaks for ("" when none)."""
        key, claimed = str(verdict.get("key") or ""), str(verdict.get("claimed") or "")
        if verdict.get("sig") not in SIGNED or not key or not claimed:
            return ""
        if key == self.own:
            return self.me
        addresses = self.addresses_of(key)
        if addresses is not None:
            return claimed if claimed in addresses else ""
        if self.reserved(claimed):
            return ""
        pin = self.pinned.get((str(verdict.get("remote") or ""), claimed))
        return claimed if pin is not None and pin.get("key") == key else ""

    def conflict(self, verdict: Mapping) -> str:
        """Why a validly signed commit's key does not speak for the address it claims, when it
        should have ("" when it does, or when no key was ever tied to that address)."""
        key, claimed = str(verdict.get("key") or ""), str(verdict.get("claimed") or "")
        if verdict.get("sig") not in SIGNED or not key or not claimed or self.speaks_for(verdict):
            return ""
        if verdict.get("sig") == "G" and _address(verdict.get("signer", "")) == claimed:
            return ""   # the user's own allowed-signers file names this key for that address
        addresses = self.addresses_of(key)
        if addresses is not None:
            return f"signed with the key bound to {', '.join(sorted(addresses))} ({key}) but claims {claimed}"
        if claimed == self.me:
            return f"signed as you ({claimed}) by a key that is not yours ({key})"
        if self.reserved(claimed):
            return f"signed as {claimed} by a key not bound to them ({key})"
        pin = self.pinned.get((str(verdict.get("remote") or ""), claimed))
        if pin is not None:
            return (f"signed as {claimed} by a key other than the one pinned from {pin['remote']} "
                    f"({key}; pinned: {pin['key']})")
        return ""

    def describe(self, verdict: Mapping) -> str:
        """How the commit's key is known, for people ("" when it is not signed)."""
        key, claimed = str(verdict.get("key") or ""), str(verdict.get("claimed") or "")
        if verdict.get("sig") not in SIGNED or not key:
            return ""
        who = self.speaks_for(verdict)
        if who:
            if key == self.own:
                return "signed with your key"
            if self.addresses_of(key) is not None:
                return f"signed with a key bound to {who}"
            return f"signed with the key pinned for {who} from {verdict.get('remote')} on first use"
        return self.conflict(verdict) or f"signed by a key bound to nobody ({key}), claims {claimed}"


NONE = Signers()


def _address(principal: str) -> str:
    return signer_email(principal)


# (neo dir, me) -> (own key's stamp, bound, pinned, the Signers built from them)
_MEMO: dict[tuple[str, str], tuple[tuple, object, object, Signers]] = {}


def signers_for(neo_dir: Path, me: str, home: Path | None = None) -> Signers:
    """The key knowledge of one repository (its `neo/` folder) for local user *me* whose NEO_HOME
    is *home* (default `$NEO_HOME`): the same object while nothing it is built from changed (trust
    memoises on it). An unusable NEO_HOME leaves out your key and bound keys: fewer commits speak
    for anyone (closed)."""
    try:
        public = key_path(home).with_suffix(".pub")
        bound = keyring.bound_keys(home)
    except NeoError:
        public, bound = None, {}
    try:
        info = public.stat() if public is not None else None
        stamp: tuple = (str(public), info.st_mtime_ns, info.st_size) if info is not None else ()
    except OSError:
        stamp = ()
    pinned = pins.pins(Path(neo_dir))
    memo_key = (str(neo_dir), me)
    memo = _MEMO.get(memo_key)
    if memo is not None and memo[0] == stamp and memo[1] is bound and memo[2] is pinned:
        return memo[3]
    own = own_fingerprint(home) if stamp else ""
    signers = Signers(me, own, bound, pinned)
    _MEMO[memo_key] = (stamp, bound, pinned, signers)
    return signers
