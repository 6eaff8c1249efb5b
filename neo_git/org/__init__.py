"""Org memory shared through a git remote (docs/architecture.md §15).

    from neo_git.org import connect, disconnect, sync_org, org_status
    connect(store, "git@github.com:acme/neo-org.git")     # facts_org_acme.json -> ~/.neo/org/acme.git
    sync_org(store)                                        # fetch, merge, push, like `git neo sync`
    disconnect(store)                                      # back to facts_org_acme.json, nothing lost

The org memory is a bare repository under NEO_HOME (`store/org_memory.py`) whose
`refs/neo/facts` holds org-scoped facts in the project scope's layout; the remote is
its `origin`. Every repository whose org id matches reads it as its org scope.
"""
from __future__ import annotations

from neo_git.org.memory import connect, disconnect, org_status, resolve_org, sync_org

__all__ = ["connect", "disconnect", "sync_org", "org_status", "resolve_org"]
