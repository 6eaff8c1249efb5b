"""Whose facts count as knowledge, and whose are claims awaiting trust.

Trusted authors are e-mail addresses: the local user (git's author identity) always,
plus every `neo.trusted` value in git config (multi-valued: `git neo trust add` runs
`git config --add neo.trusted <email>`) and a `"trusted": [...]` list in
`~/.neo/config.json` for people trusted in every repository.

"Untrusted" is computed, never stored on the ref: the project facts whose author
(`provenance.fact_origins`, the commit that gave them their text) is not trusted.
A commit a sync brought in is judged by what git verified about it
(`store/received.py`): a good signature by a trusted address, or a remote listed in
`neo.trustUnsigned`; the e-mail it claims counts only for commits made here. Trusting someone takes effect at once, on every fact they brought.
Recall ranks such *claims* below trusted facts, keeps them out of the constraint
layer, and lists them in `ContextResult.untrusted` so prompts can mark them.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from neo_git.config import neo_config_list
from neo_git.errors import NeoError
from neo_git.store import received
from neo_git.store.provenance import fact_origins

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.store import FactStore

TRUST_KEY = "neo.trusted"
TRUST_UNSIGNED_KEY = "trustUnsigned"   # neo.trustUnsigned: remotes whose unsigned commits count
_EMAIL = re.compile(r"^[^\s<>,;\"']{1,254}$")


def normalize_email(text: str) -> str:
    """`Ada <ada@example.com>` or `ADA@example.com` -> `ada@example.com`; NeoError if not an address."""
    value = (text or "").strip()
    match = re.search(r"<([^<>]*)>\s*$", value)
    if match:
        value = match.group(1).strip()
    if not _EMAIL.match(value) or "@" not in value:
        raise NeoError(f"'{text}' is not an e-mail address", "trust works by the e-mail of git authors, "
                       "e.g. `git neo trust add alice@example.com`")
    return value.lower()


def local_email(store: "FactStore") -> str:
    """The local user's e-mail (lower case), from git's author identity."""
    match = re.search(r"<([^<>]*)>\s*$", store.author)
    return (match.group(1) if match else store.author).strip().lower()


def configured_trust(repo: pygit2.Repository) -> list[str]:
    """Addresses trusted in git config (`neo.trusted`, every level) and `~/.neo/config.json`."""
    out = []
    for value in neo_config_list(TRUST_KEY, repo=repo):
        try:
            email = normalize_email(value)
        except NeoError:
            continue  # a typo in a config file must not break recall
        if email not in out:
            out.append(email)
    return out


def trusted_emails(store: "FactStore") -> frozenset[str]:
    """Everyone whose facts count as knowledge here: the local user and the configured list."""
    return frozenset([local_email(store), *configured_trust(store.repo)])


def trusted_remotes(repo: "pygit2.Repository") -> list[str]:
    """Remotes whose write access is trusted (`neo.trustUnsigned`, multi-valued; `*` = all):
    their unsigned commits count as trusted changes."""
    return [v.strip() for v in neo_config_list(TRUST_UNSIGNED_KEY, repo=repo) if v.strip()]


def commit_is_trusted(store: "FactStore", commit: str, claimed: str, *, trusted: frozenset[str] | None = None,
                      remotes: list[str] | None = None) -> bool:
    """Whether the change *commit* made counts: judged by its received verdict when a sync
    brought it, else (made in this clone) by its author's e-mail."""
    trusted = trusted if trusted is not None else trusted_emails(store)
    verdict = received.verdicts(store.paths.neo_dir).get(commit)
    if verdict is None:
        return claimed in trusted
    return received.is_trusted(verdict, trusted, remotes if remotes is not None else trusted_remotes(store.repo))


def untrusted_authors(store: "FactStore") -> dict[str, str]:
    """{fact id: author e-mail as claimed} of project facts whose author is not trusted (claims)."""
    if store.repo is None or store.paths is None:
        return {}  # an in-memory store has no history, hence no teammates
    origins = fact_origins(store.repo, store.paths.common_dir)
    if not origins:
        return {}
    trusted = trusted_emails(store)
    table = received.verdicts(store.paths.neo_dir)
    remotes = trusted_remotes(store.repo) if table else []
    out = {}
    for fact_id, (email, commit) in origins.items():
        verdict = table.get(commit)
        if verdict is None:
            ok = email in trusted
        else:
            ok = received.is_trusted(verdict, trusted, remotes)
        if not ok:
            out[fact_id] = email
    return out


def unverified_commits(store: "FactStore") -> dict[str, str]:
    """{fact id: how its author is known} for claims whose commit a sync brought in unverified
    (`show` marks the author they state about themselves as self-declared)."""
    if store.repo is None or store.paths is None:
        return {}
    table = received.verdicts(store.paths.neo_dir)
    if not table:
        return {}
    origins = fact_origins(store.repo, store.paths.common_dir)
    return {fact_id: received.describe(table[commit]) for fact_id, (_email, commit) in origins.items()
            if commit in table}
