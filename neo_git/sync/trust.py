"""`git neo trust add|remove`: changing who is trusted (in this repository's git config).
Who counts as trusted, and which facts are claims, is `neo_git.store.trust`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from neo_git.errors import NeoError
from neo_git.gitrun import GitCommandError, git_dir_args, run_git
from neo_git.store.trust import (  # noqa: F401 - re-exported for the trust command
    TRUST_KEY, configured_trust, local_email, normalize_email, trusted_emails, trusted_remotes, untrusted_authors,
)

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store import FactStore


def add_trusted(store: "FactStore", who: str) -> str:
    """Trust *who* (an e-mail) in this repository; returns the normalized address."""
    email = normalize_email(who)
    if email not in configured_trust(store.repo):
        _git_config(store, ["--add", TRUST_KEY, email])
    return email


def remove_trusted(store: "FactStore", who: str) -> str:
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


def _git_config(store: "FactStore", args: list[str], check: bool = True):
    paths = store.paths
    try:
        return run_git([*git_dir_args(paths.git_dir), "config", "--local", *args], cwd=paths.git_dir,
                       timeout=10, check=check)
    except GitCommandError as exc:
        raise NeoError(f"could not change the trusted list: {exc.message}") from None
