"""`git neo trust add|remove`: changing who is trusted (in this repository's git config).
Who counts as trusted, and which facts are claims, is `neo_git.store.trust`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from neo_git.errors import NeoError
from neo_git.gitrun import GitCommandError, git_dir_args, run_git
from neo_git.store.trust import (  # noqa: F401 - re-exported for the trust command
    TRUST_KEY,
    configured_trust,
    local_email,
    normalize_email,
    trusted_emails,
    trusted_remotes,
    untrusted_authors,
)

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store import FactStore


def add_trusted(store: FactStore, who: str) -> str:
    """Trust *who* (an e-mail) in this repository; returns the normalized address."""
    email = normalize_email(who)
    if email not in configured_trust(store.repo):
        _git_config(store, ["--add", TRUST_KEY, email])
    return email


def remove_trusted(store: FactStore, who: str) -> str:
    """Stop trusting *who* in this repository (NeoError if it was not trusted here)."""
    email = normalize_email(who)
    if email not in configured_trust(store.repo):
        raise NeoError(f"{email} is not in the trusted list", "`git neo trust list` shows it")
    proc = _git_config(store, ["--unset-all", "--fixed-value", TRUST_KEY, email], check=False)
    if proc.returncode not in (0, 5):  # 5: not set in this repository's own config file
        raise NeoError(f"could not remove {email}: {proc.stderr.strip()}")
    if email in configured_trust(store.repo):
        raise NeoError(f"{email} is trusted outside this repository",
                       "remove it from `git config --global neo.trusted` or ~/.neo/config.json")
    return email


def _git_config(store: FactStore, args: list[str], check: bool = True):
    paths = store.paths
    assert paths is not None   # a repository's config
    try:
        return run_git([*git_dir_args(paths.git_dir), "config", "--local", *args], cwd=paths.git_dir,
                       timeout=10, check=check)
    except GitCommandError as exc:
        raise NeoError(f"could not change the trusted list: {exc.message}") from None


def bind_key(who: str, key: str) -> tuple[str, str, bool]:
    """Bind an ssh public key (the key itself, `ssh-ed25519 AAAA…`, or a `.pub` file) to *who* in
    the person's allowed-signers record; (address, fingerprint, whether it was new)."""
    from pathlib import Path

    from neo_git.store import keyring

    email = normalize_email(who)
    text = key.strip()
    try:
        keyring.parse_public_key(text)
        public = text
    except ValueError:
        if not Path(text).expanduser().is_file():
            raise NeoError(f"'{key[:60]}' is neither an ssh public key nor a file holding one",
                           "pass the key as its owner's `git neo trust list` prints it, or their `.pub` file") from None
        public = keyring.read_public_key(Path(text).expanduser())
    try:
        new = keyring.bind(email, public)
    except (OSError, ValueError) as exc:
        raise NeoError(f"could not record the key: {exc}", "check that ~/.neo/keys is writable") from None
    return email, keyring.fingerprint(public), new


@dataclass(frozen=True)
class KeyListing:
    """What `git neo trust list` says about signing keys."""

    signing: str                    # how this clone signs facts commits (`store/signing.py` mode, or "off")
    own_public: str                 # your key (`ssh-ed25519 AAAA…`), "" before the first signed write
    own_fingerprint: str
    bound: list[tuple[str, str]]    # (address, fingerprint) from the allowed-signers record, yours left out
    pins: list[dict]                # {remote, address, key, commit, trusted, counts}
    conflicts: list[dict]           # {remote, address, key, commits, why}


def key_listing(store: FactStore) -> KeyListing:
    """Your key, the keys bound to addresses, the keys pinned per remote and the commits whose key
    did not match, as this clone knows them."""
    from neo_git.store import keyring, received
    from neo_git.store.signers import signers_for
    from neo_git.store.signing import signing_mode
    from neo_git.store.signing_key import own_public_key

    assert store.repo is not None and store.paths is not None   # a repository's keys
    me = local_email(store)
    signers = signers_for(store.paths.neo_dir, me, store.home)
    trusted = trusted_emails(store)
    try:
        bound_table = keyring.bound_keys(store.home)
        public = own_public_key(store.home)
    except NeoError:
        bound_table, public = {}, ""
    bound = sorted((address, key) for key, addresses in bound_table.items() for address in addresses
                   if key != signers.own)
    pins = []
    for (remote, address), pin in sorted(signers.pinned.items()):
        counts = not signers.reserved(address) and signers.addresses_of(pin["key"]) is None
        pins.append({"remote": remote, "address": address, "key": pin["key"], "commit": pin.get("commit", ""),
                     "counts": counts, "trusted": counts and address in trusted})
    grouped: dict[tuple[str, str, str], dict] = {}
    for verdict in received.verdicts(store.paths.neo_dir).values():
        why = signers.conflict(verdict)
        if why:
            row = grouped.setdefault((verdict.get("remote", ""), verdict.get("claimed", ""), verdict.get("key", "")),
                                     {"remote": verdict.get("remote", ""), "address": verdict.get("claimed", ""),
                                      "key": verdict.get("key", ""), "commits": 0, "why": why})
            row["commits"] += 1
    mode = signing_mode(store.repo)
    return KeyListing(mode or "off", public, signers.own, bound, pins, list(grouped.values()))
