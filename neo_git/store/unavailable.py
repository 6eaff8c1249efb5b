"""The backend of a scope that does not exist here: project and session scope outside a
repository (`FactStore.outside_repository`, used by `git neo mcp` started in a folder that is
not a git repository). Reads find no facts; writes are refused with a message that says why."""
from __future__ import annotations

from neo_git.errors import NeoError
from neo_git.store.base import Change, LoadedScope, Transaction


class UnavailableScope:
    """No facts, and no writes: the scope needs a repository."""

    def __init__(self, scope: str, where: str) -> None:
        self.description = f"{scope} scope (unavailable: {where} is not inside a git repository)"
        self.scope = scope
        self.where = where

    def load(self) -> LoadedScope:
        """An empty scope."""
        return LoadedScope({})

    def transact(self, body: Transaction) -> Change | None:
        """Refuse: there is no repository to write the scope to."""
        raise NeoError(f"{self.where} is not inside a git repository: there is no {self.scope} scope here",
                       "use scope global or org, or start the agent inside a repository")
