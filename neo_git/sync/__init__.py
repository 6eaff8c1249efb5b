"""Team sharing: fetch, merge and push `refs/neo/facts` and `refs/notes/neo` (docs/architecture.md §9).

    from neo_git.sync import Syncer
    report = Syncer(store, "origin").sync()     # or .pull() / .push()

- `engine`: pull / push / sync with bounded retries; `transport`: the `git` commands;
- `treemerge`: the 3-way merge of two facts trees; `fieldmerge.merge_fact`: one fact
  changed on both sides (pure); `trees`: validation of incoming facts;
- `notes`: `git notes merge -s cat_sort_uniq`; `trust` and `provenance`: who brought
  each fact and whether they are trusted; `remote_config`: fetch refspecs for plain
  `git fetch`.
"""
from __future__ import annotations

from neo_git.sync.engine import RemoteMoved, Syncer, SyncReport, resolve_remote
from neo_git.sync.fieldmerge import merge_fact
from neo_git.sync.remote_config import configure_remote_fetch

__all__ = ["Syncer", "SyncReport", "RemoteMoved", "resolve_remote", "merge_fact", "configure_remote_fetch"]
