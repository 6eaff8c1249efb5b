"""Whose facts count as knowledge, and whose are claims awaiting trust.

Trusted authors are e-mail addresses: the local user (git's author identity) always,
plus every `neo.trusted` value in git config (multi-valued: `git neo trust add` runs
`git config --add neo.trusted <email>`) and a `"trusted": [...]` list in
`~/.neo/config.json` for people trusted in every repository.

"Untrusted" is computed, never stored on the ref: the project facts whose author
(`provenance.fact_authors`, from the commit that gave them their text) is not
trusted. Trusting someone takes effect at once, on every fact they brought.
Recall ranks such *claims* below trusted facts, keeps them out of the constraint
layer, and lists them in `ContextResult.untrusted` so prompts can mark them.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from neo_git.config import neo_config_list
from neo_git.errors import NeoError
from neo_git.facts import FactScope
from neo_git.store.provenance import fact_authors

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.store import FactStore

TRUST_KEY = "neo.trusted"
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


def untrusted_authors(store: "FactStore") -> dict[str, str]:
    """{fact id: author e-mail} of project facts (and of a connected org memory's facts) whose
    author is not trusted (claims)."""
    if store.repo is None or store.paths is None:
        return {}  # an in-memory store has no history, hence no teammates
    refs = [(store.repo, store.paths.common_dir)]
    org = store.backends.get(FactScope.ORG)
    if getattr(org, "scope", None) is FactScope.ORG:  # a connected org memory: a ref with a history
        refs.append((org.repo, org.common_dir))
    sources = [authors for authors in (fact_authors(repo, common_dir) for repo, common_dir in refs) if authors]
    if not sources:
        return {}
    trusted = trusted_emails(store)
    key = (str(store.paths.common_dir), len(refs))
    memo = _CLAIMS.get(key)
    # fact_authors hands back the same dict while a ref's tip is unchanged: then the claims are
    # too, unless the trust set changed (one pass over 50,000 authors cost 10 ms per recall).
    if memo is not None and memo[1] == trusted and len(memo[0]) == len(sources) \
            and all(a is b for a, b in zip(memo[0], sources)):
        return memo[2]
    claims: dict[str, str] = {}
    for authors in sources:
        claims.update((fact_id, email) for fact_id, email in authors.items() if email not in trusted)
    _CLAIMS[key] = (sources, trusted, claims)
    return claims


# (common dir, refs) -> (the authors dicts, the trust set, the claims) of the last answer.
_CLAIMS: dict[tuple[str, int], tuple[list, frozenset, dict[str, str]]] = {}
