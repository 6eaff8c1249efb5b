"""Whose facts count as knowledge, and whose are claims awaiting trust.

Trusted authors are e-mail addresses: the local user (git's author identity) always,
plus every `neo.trusted` value in git config (multi-valued: `git neo trust add` runs
`git config --add neo.trusted <email>`) and a `"trusted": [...]` list in
`~/.neo/config.json` for people trusted in every repository.

"Untrusted" is computed, never stored on the ref: the project facts whose author
(`provenance.fact_origins`, the commit that gave them their text) is not trusted.
A commit a sync brought in is judged by what git verified about it
(`store/received.py`): a good signature by a trusted address, or a remote listed in
`neo.trustUnsigned`, or a signing key that speaks for a trusted address (`store/signers.py`:
your own key, a key bound with `trust add --key`, a key pinned per remote on first use); the
e-mail it claims counts only for commits this clone wrote
(`store/local_writes.py`, from the ref's reflog). A commit that is neither (the record
lost, the ref moved by plain `git fetch`) counts as unverified: trust fails closed. Trusting someone takes effect at once, on every fact they brought.
Recall ranks such *claims* below trusted facts, keeps them out of the constraint
layer, and lists them in `ContextResult.untrusted` so prompts can mark them.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from neo_git.config import neo_config_list
from neo_git.errors import NeoError
from neo_git.facts import FactScope
from neo_git.store import accepted, received
from neo_git.store.local_writes import written_here
from neo_git.store.provenance import Origins, fact_origins, split_ids
from neo_git.store.signers import NONE as NO_SIGNERS, signers_for

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.identity import RepositoryPaths
    from neo_git.store.base import Backend
    from neo_git.store.refstore import RefStore


class TrustedStore(Protocol):
    """What trust reads of a store: `FactStore` (store/__init__.py, which imports this module)."""

    repo: pygit2.Repository | None
    paths: RepositoryPaths | None
    home: Path | None
    author: str
    backends: dict[FactScope, Backend]


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


def local_email(store: TrustedStore) -> str:
    """The local user's e-mail (lower case), from git's author identity."""
    match = re.search(r"<([^<>]*)>\s*$", store.author)
    return (match.group(1) if match else store.author).strip().lower()


def configured_trust(repo: pygit2.Repository | None) -> list[str]:
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


def trusted_emails(store: TrustedStore) -> frozenset[str]:
    """Everyone whose facts count as knowledge here: the local user and the configured list."""
    return frozenset([local_email(store), *configured_trust(store.repo)])


def trusted_remotes(repo: pygit2.Repository) -> list[str]:
    """Remotes whose write access is trusted (`neo.trustUnsigned`, multi-valued; `*` = all):
    their unsigned commits count as trusted changes."""
    return [v.strip() for v in neo_config_list(TRUST_UNSIGNED_KEY, repo=repo) if v.strip()]


def untrusted_authors(store: TrustedStore) -> dict[str, str]:
    """{fact id: author e-mail as claimed} of project facts (and of a connected org memory's
    facts) whose author is not trusted (claims)."""
    if store.repo is None or store.paths is None:
        return {}  # an in-memory store has no history, hence no teammates
    refs = [(store.repo, store.paths.common_dir)]
    org = store.backends.get(FactScope.ORG)
    if getattr(org, "scope", None) is FactScope.ORG:  # a connected org memory: a ref with a history
        org_ref = cast("RefStore", org)
        refs.append((org_ref.repo, org_ref.common_dir))
    trusted, me = trusted_emails(store), local_email(store)
    if len(refs) == 1:  # the same dict while nothing changed: recall then reuses what it built from it
        return ref_claims(*refs[0], trusted, me, store.home)
    claims: dict[str, str] = {}
    for repo, common_dir in refs:
        claims.update(ref_claims(repo, common_dir, trusted, me, store.home))
    return claims


def ref_claims(repo: pygit2.Repository, common_dir: Path, trusted: frozenset[str], me: str | None = None,
               home: Path | None = None) -> dict[str, str]:
    """{fact id: claimed e-mail} of the facts on one repository's facts ref whose author is not
    trusted: a commit a sync brought in by its verdict (`store/received.py`, kept in that
    repository's `neo/` folder) and the key that signed it (`store/signers.py`), one made there
    by its author's e-mail. *me*: the local user's address (default: *repo*'s git identity);
    *home*: their NEO_HOME (default `$NEO_HOME`), where their key is."""
    origins = fact_origins(repo, common_dir)
    if not origins:
        return {}
    neo_dir = Path(common_dir) / "neo"
    table = received.verdicts(neo_dir)
    written = written_here(repo, common_dir)
    decided = accepted.decisions(neo_dir)
    remotes = tuple(trusted_remotes(repo)) if table else ()
    keys = signers_for(neo_dir, me if me is not None else local_address(repo), home) if table else NO_SIGNERS
    key = str(common_dir)
    memo = _CLAIMS.get(key)
    # fact_origins, verdicts, written_here, decisions and the signers come back as the same objects
    # while the tip and the records are unchanged: then the claims are too, unless the trust set
    # changed (one pass over 50,000 facts cost 10 ms per recall).
    if memo is not None and memo[0] is origins and memo[1] is table and memo[2] is written \
            and memo[3] is decided and memo[4] == (trusted, remotes) and memo[5] is keys:
        kept: dict[str, str] = memo[6]
        return kept
    def believed(email: str, commit: str) -> bool:
        if commit in written:   # made in this clone: its author is the local user's claim to check
            return email in trusted
        verdict = table.get(commit)   # brought in: only its verdict counts; none is no trust (closed)
        return verdict is not None and received.is_trusted(verdict, trusted, remotes, keys)

    claims: dict[str, str] = {}
    if isinstance(origins, Origins):   # from the cache: one answer per commit, facts split only for claims
        for (email, commit), joined in origins.groups():
            if believed(email, commit):
                for fact_id in split_ids(joined) if claims else ():
                    claims.pop(fact_id, None)   # an id under two origins: the later one holds
                continue
            for fact_id in split_ids(joined):
                if decided and accepted.is_accepted(decided, fact_id, commit):
                    claims.pop(fact_id, None)
                else:
                    claims[fact_id] = email
    else:
        verdicts: dict[tuple[str, str], bool] = {}
        for fact_id, origin in origins.items():
            ok = verdicts.get(origin)
            if ok is None:
                ok = verdicts[origin] = believed(*origin)
            if not ok and not (decided and accepted.is_accepted(decided, fact_id, origin[1])):
                claims[fact_id] = origin[0]
    _CLAIMS[key] = (origins, table, written, decided, (trusted, remotes), keys, claims)
    return claims


def claim_origins(repo: pygit2.Repository, common_dir: Path, trusted: frozenset[str]) -> dict[str, tuple[str, str]]:
    """{fact id: (claimed e-mail, the commit that gave it its text)} of the claims on one ref."""
    origins = fact_origins(repo, common_dir)
    return {fact_id: origins[fact_id] for fact_id in ref_claims(repo, common_dir, trusted) if fact_id in origins}


def local_address(repo: pygit2.Repository) -> str:
    """The local user's address in *repo* (git's author identity, lower case; "" when none)."""
    from neo_git.identity import author_identity

    match = re.search(r"<([^<>]*)>\s*$", author_identity(repo))
    return (match.group(1) if match else "").strip().lower()


def trusted_here(repo: pygit2.Repository) -> frozenset[str]:
    """The trust set of a repository without a FactStore: its git identity and the configured list."""
    return frozenset([local_address(repo), *configured_trust(repo)])


# common dir -> (origins, verdicts, written here, decisions, (trust set, trusted remotes), signers, the claims).
_CLAIMS: dict[str, tuple[Any, ...]] = {}


def unverified_commits(store: TrustedStore) -> dict[str, str]:
    """{fact id: how its author is known} for project claims whose commit a sync brought in
    (`show` marks the author they state about themselves as self-declared)."""
    if store.repo is None or store.paths is None:
        return {}
    table = received.verdicts(store.paths.neo_dir)
    if not table:
        return {}
    origins = fact_origins(store.repo, store.paths.common_dir)
    keys = signers_for(store.paths.neo_dir, local_email(store), store.home)
    return {fact_id: received.describe(table[commit], keys) for fact_id, (_email, commit) in origins.items()
            if commit in table}
