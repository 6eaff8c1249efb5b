"""Connecting, syncing and disconnecting the org memory (`<NEO_HOME>/org/<org>.git`).

- connect: create the bare repository with the remote as `origin`, write the facts of
  `facts_org_<org>.json` into it as one commit, move the file aside (kept as a backup:
  `facts_org_<org>.json.connected-<time>`), then sync (a remote that already holds the
  org's facts is merged with ours field by field, as a teammate's clone would be).
- sync: the project sync engine (`neo_git.sync.Syncer`) on the org memory's repository,
  without the outcome notes (they belong to repositories).
- disconnect: every org fact (valid or retired) goes back into `facts_org_<org>.json`
  (merged with whatever the file holds), and the bare repository is moved aside
  (`<org>.git.disconnected-<time>`: its history stays readable); the remote is untouched.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from neo_git.errors import NeoError
from neo_git.fileio import locked
from neo_git.gitrun import GitCommandError, run_git
from neo_git.identity import UNKNOWN_ORG, RepositoryPaths, sanitize_id
from neo_git.store.base import Change
from neo_git.store.filestore import FileStore
from neo_git.store.org_memory import open_org_memory, org_memory_path

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store import FactStore
    from neo_git.store.refstore import RefStore
    from neo_git.sync import SyncReport

REMOTE = "origin"


def resolve_org(store: FactStore, org: str | None = None) -> str:
    """The org to act on: *org* (sanitised like an org id), else this repository's org id."""
    name = sanitize_id(org) if org is not None else store.org_id
    if not name or name == UNKNOWN_ORG:
        raise NeoError("no organisation for this repository" if org is None else f"'{org}' is not an org name",
                       "name one with `--org NAME` (the org id comes from the origin remote's URL, "
                       "e.g. github.com/acme/api -> acme)")
    return name


def _org_file(home: Path, org: str) -> Path:
    return Path(home) / "facts" / f"facts_org_{org}.json"


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"


def _git(path: Path, *args: str, check: bool = True):
    return run_git([f"--git-dir={path}", *args], cwd=path, timeout=30, check=check)


def _backend(store: FactStore, home: Path, org: str) -> RefStore:
    backend = open_org_memory(home, org, cast("RefStore", store.project_store).signature)
    if backend is None:
        raise NeoError(f"the org memory of '{org}' is not connected",
                       f"connect it first: `git neo org connect <url> --org {org}`")
    return backend


def _target(store: FactStore, backend: RefStore):
    """The org memory as a sync target, trusting whom the project store trusts (the bare
    repository has no user of its own: its git config would name only the global identity)."""
    from neo_git.store.trust import trusted_emails
    from neo_git.sync.engine import SyncTarget

    path = backend.common_dir
    return SyncTarget(backend.repo, RepositoryPaths(git_dir=path, common_dir=path, workdir=None), backend,
                      notes=False, trusted=trusted_emails(store))


def _home(store: FactStore) -> Path:
    if store.home is None:
        raise NeoError("an in-memory store has no org memory to connect")
    return Path(store.home)


def connect(store: FactStore, url: str, org: str | None = None) -> dict:
    """Keep *org*'s facts in a bare repository synced with *url*; returns what was done."""
    home = _home(store)
    name = resolve_org(store, org)
    url = (url or "").strip()
    if not url or url.startswith("-"):
        raise NeoError(f"'{url}' is not a remote URL", "give the URL of a git repository for the org's memory")
    if "://" not in url and os.path.exists(url):
        # A local path: git would read it relative to the org memory's own folder later.
        url = os.path.abspath(url)
    path = org_memory_path(home, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path.parent / f"{name}.lock"):
        if path.exists():
            current = _git(path, "remote", "get-url", REMOTE, check=False).stdout.strip()
            if current != url:
                raise NeoError(f"the org memory of '{name}' is already connected to {current or '(nothing)'}",
                               "disconnect it first: `git neo org disconnect" + (f" --org {name}`" if org else "`"))
            imported, aside = 0, None
        else:
            tmp = path.with_name(f"{path.name}.tmp-{_stamp()}")
            try:
                run_git(["init", "--bare", "--quiet", str(tmp)], cwd=tmp.parent, timeout=30)
                _git(tmp, "remote", "add", REMOTE, url)
            except GitCommandError as exc:
                raise NeoError(f"could not create the org memory: {exc.message}") from None
            os.replace(tmp, path)  # whole or not at all: a half-made repository is never "connected"
            imported, aside = _import_file(store, home, name)
    report: dict[str, Any] = {"org": name, "path": str(path), "url": url, "imported": imported,
              "file_moved_to": str(aside) if aside else None, "sync": None, "warnings": []}
    try:
        synced = sync_org(store, name)
    except NeoError as exc:
        report["warnings"].append(f"connected, but the first sync failed: {exc.message}")
        return report
    report["sync"] = synced.to_dict()
    report["warnings"] += synced.warnings
    return report


def _import_file(store: FactStore, home: Path, org: str) -> tuple[int, Path | None]:
    """Write the org file's facts into the new org memory (one commit) and move the file aside."""
    source = FileStore(_org_file(home, org))
    facts = source.load().facts
    backend = _backend(store, home, org)
    if facts:
        ordered = tuple(sorted(facts.values(), key=lambda f: f.id))
        backend.transact(lambda current: Change(
            facts=ordered, message=f"import {len(ordered)} org facts from {source.path.name}"))
    if not source.path.exists():
        return len(facts), None
    aside = source.path.with_name(f"{source.path.name}.connected-{_stamp()}")
    os.replace(source.path, aside)  # kept: the facts are on the ref now, the file is the backup
    return len(facts), aside


def sync_org(store: FactStore, org: str | None = None) -> SyncReport:
    """Fetch, merge and push the org memory with its remote (the project sync engine)."""
    from neo_git.sync import Syncer

    home = _home(store)
    name = resolve_org(store, org)
    backend = _backend(store, home, name)
    return Syncer(None, REMOTE, target=_target(store, backend)).sync()


def disconnect(store: FactStore, org: str | None = None) -> dict:
    """Return *org* to the plain file: every org fact is written to `facts_org_<org>.json`,
    the bare repository is moved aside; returns what was done."""
    home = _home(store)
    name = resolve_org(store, org)
    path = org_memory_path(home, name)
    with locked(path.parent / f"{name}.lock"):
        backend = _backend(store, home, name)
        loaded = backend.load()
        facts = loaded.facts
        tracking = f"refs/remotes/{REMOTE}/neo/facts"
        tip = backend.tip()
        try:
            pushed = backend.repo.references[tracking].resolve().target
        except (KeyError, ValueError):
            pushed = None
        unpushed = tip is not None and pushed != tip and not (
            pushed is not None and backend.repo.descendant_of(pushed, tip))
        url = _git(path, "remote", "get-url", REMOTE, check=False).stdout.strip()
        target = FileStore(_org_file(home, name))
        ordered = tuple(sorted(facts.values(), key=lambda f: f.id))
        if ordered:
            target.transact(lambda current: Change(facts=ordered, message="org memory disconnected"))
        aside = path.with_name(f"{path.name}.disconnected-{_stamp()}")
        os.replace(path, aside)
    return {"org": name, "file": str(target.path), "facts": len(ordered), "history_kept_at": str(aside),
            "url": url, "unpushed": unpushed, "warnings": loaded.warnings}


def org_status(store: FactStore, org: str | None = None) -> dict:
    """Whether *org* is connected, to what, and how many facts it holds."""
    home = _home(store)
    name = resolve_org(store, org)
    backend = open_org_memory(home, name, cast("RefStore", store.project_store).signature)
    if backend is None:
        file = _org_file(home, name)
        count = len(FileStore(file).load().facts) if file.exists() else 0
        return {"org": name, "connected": False, "file": str(file), "facts": count}
    path = backend.common_dir
    tip = backend.tip()
    return {"org": name, "connected": True, "path": str(path),
            "url": _git(path, "remote", "get-url", REMOTE, check=False).stdout.strip(),
            "facts": len(backend.load().facts), "tip": str(tip) if tip else None}

