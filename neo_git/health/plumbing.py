"""The staged change and HEAD as git's plumbing commands show them: what the pre-commit hook
measures, without pygit2.

The guard runs on every commit that stages source code, and importing pygit2 cost it more
than everything else it does (~120 ms of CPU of a ~250 ms run on a 2-core machine). So the
hook reads what the pygit2 sources read from git itself, with three commands started side by
side: `git rev-parse` (the git folder, HEAD and its tree), `git diff-index --cached -M` (what
is staged, renames included) and `git config --get-regexp` (the neo.* settings:
`config.ConfigValues`); blobs come from one `git cat-file --batch`, and `git ls-files --stage`
runs only when a path has to be looked up (a resolver's config file, `.gitattributes`). HEAD's
entries are the index's with the staged change taken back, so they cost no command of their
own; `git diff-tree` runs only when HEAD's state was never stored and has to be derived from
an older one.

Everything here reads: the cache is opened read-only, and no state, blob result or tree is
written before the commit is made. The post-commit worker measures the new commit and stores
its state (`outcomes.records.health_deltas`), which is where the next guard starts.

`open_staged` returns None where this view does not apply (no commit yet, a conflicted
index, git failing): the caller then measures through pygit2 as every command does.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from neo_git.config import ConfigValues
from neo_git.gitrun import GitCommandError, StartedGit, git_env, run_git
from neo_git.health.cache import KeptWrites, MetricsCache, StoredState
from neo_git.health.cache_file import CACHE_FILE
from neo_git.health.scan import Scan
from neo_git.health.snapshot import HealthSnapshot, snapshot_from_state
from neo_git.health.sources import MODE_TREE, Change, Entry, file_reader
from neo_git.health.versions import analyzer_version, state_version
from neo_git.identity import repository_paths

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

GIT_TIMEOUT = 60.0   # seconds per command; the guard's own limit (neo.guardTimeoutMs) ends it sooner
STAGED_DIFF = ("diff-index", "--cached", "-z", "--raw", "-M")   # + a tree: the staged change, renames found


@dataclass(frozen=True)
class RepositoryView:
    """The parts of a pygit2.Repository that settings and folders are read from (`config`,
    `path`, `workdir`: see `config.neo_config`, `identity.repository_paths`), as git reports them."""

    path: str                 # the git folder (per worktree), as pygit2 gives it: ending in "/"
    workdir: str | None
    config: ConfigValues


class Git:
    """git's plumbing commands for the repository of the current folder, in the environment git
    gave the hook (GIT_DIR, GIT_INDEX_FILE, ...); blobs come from one `git cat-file --batch`.
    Close it (or use it as a context manager) to end that process."""

    def __init__(self, cwd: str | os.PathLike | None = None) -> None:
        self.cwd = cwd   # None: the current folder
        self._batch: subprocess.Popen | None = None

    def output(self, *args: str) -> bytes:
        """stdout of `git *args`; GitCommandError when it fails."""
        return run_git(list(args), cwd=self.cwd, text=False, timeout=GIT_TIMEOUT).stdout

    def start(self, *args: str, env: dict[str, str] | None = None) -> StartedGit:
        """`git *args` started now; its output is collected with `.output()`."""
        return StartedGit(list(args), cwd=self.cwd, timeout=GIT_TIMEOUT, env=env)

    def start_blobs(self) -> None:
        """Start the `git cat-file --batch` process blobs are read from (if not yet started), so
        that it is ready by the time the first blob is asked for."""
        if self._batch is None:
            self._batch = subprocess.Popen(["git", "cat-file", "--batch"], stdin=subprocess.PIPE, cwd=self.cwd,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=git_env())

    def blob(self, oid: str) -> bytes | None:
        """The bytes of blob *oid*; None when it is missing or not a blob."""
        self.start_blobs()
        assert self._batch is not None
        stdin, stdout = self._batch.stdin, self._batch.stdout
        assert stdin is not None and stdout is not None
        stdin.write(oid.encode("ascii") + b"\n")
        stdin.flush()
        header = stdout.readline().split()
        if len(header) != 3:            # "<oid> missing", or git gone
            return None
        data = _read_exactly(stdout, int(header[2]) + 1)[:-1]   # the content, then a newline
        return data if header[1] == b"blob" else None

    def close(self) -> None:
        """End the `git cat-file` process, if one was started."""
        batch, self._batch = self._batch, None
        if batch is not None:
            for stream in (batch.stdin, batch.stdout):
                try:
                    stream.close()   # type: ignore[union-attr]
                except OSError:
                    pass
            try:
                batch.wait(timeout=5)
            except subprocess.TimeoutExpired:
                batch.kill()
                batch.wait()

    def __enter__(self) -> Git:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise OSError("git cat-file --batch ended early")
    return data


@dataclass(frozen=True)
class Staged:
    """One staged change: the repository, HEAD's tree and the index as sources, and what git's
    rename detection makes of the change (for the guard's report)."""

    repository: RepositoryView
    cache_file: Path
    head: HeadTree
    index: StagedIndex
    touched: list[str]              # paths added or modified (renamed ones under the new name), sorted
    renamed: dict[str, str]         # old path -> new path


def open_staged(git: Git) -> Staged | None:
    """The staged change against HEAD, or None when this view does not apply (see the module doc)."""
    # three commands that do not wait for each other run side by side, and the blob reader starts
    where = git.start("rev-parse", "--absolute-git-dir", "--show-toplevel", "HEAD", "HEAD^{tree}")
    staged = git.start(*STAGED_DIFF, "HEAD")
    settings = git.start(*ConfigValues.ARGS, env=ConfigValues.ENV)
    git.start_blobs()
    lines = where.output(check=False).splitlines()
    staged_output = staged.output(check=False)
    config = ConfigValues.parse(settings.output(check=False))   # exit 1: no neo.* setting
    if where.proc.returncode != 0 or staged.proc.returncode != 0 or len(lines) != 4:
        return None   # no commit yet, a bare repository, not a repository: pygit2 says which
    git_dir, workdir, commit, head = (os.fsdecode(line) for line in lines)
    records = raw_records(staged_output)
    if records is None:
        return None   # a conflict, or output this reader does not know
    touched, renamed = touched_and_renamed(records)
    changes: list[Change] = []
    for status, old, new in records:
        if status == "R":
            changes += [(old.path, None), (None, new)]   # without rename detection: gone, and new
        else:
            changes.append((old.path if status != "A" else None, new if status != "D" else None))
    repository = RepositoryView(path=git_dir.rstrip("/") + "/", workdir=workdir, config=config)
    # The view has what repository_paths reads of a repository (path, workdir, config).
    cache_file = repository_paths(cast("pygit2.Repository", repository)).neo_dir / CACHE_FILE
    index = StagedIndex(git, head, changes)
    return Staged(repository, cache_file, HeadTree(git, commit, head, index, records), index, touched, renamed)


def staged_records(git: Git, tree: str) -> list[tuple[str, Entry, Entry]] | None:
    """The index against *tree* with git's rename detection (`git diff-index --cached -M`: content
    at least 50 % similar, as `git status` shows it), as `raw_records` gives them."""
    return raw_records(git.output(*STAGED_DIFF, tree))


def touched_and_renamed(records: list[tuple[str, Entry, Entry]]) -> tuple[list[str], dict[str, str]]:
    """(the paths added, modified or renamed, under their new names, sorted; {old path: new path})."""
    touched = sorted(new.path for status, _old, new in records if status != "D")
    return touched, {old.path: new.path for status, old, new in records if status == "R"}


def measure_staged(staged: Staged) -> tuple[HealthSnapshot, HealthSnapshot, KeptWrites]:
    """(HEAD's snapshot, the index's, what a scan would have written), as
    `measure.staged_against_head` measures them, over a read-only cache: HEAD's state is stored
    (or derived from the latest stored one), the index's starts from it, and nothing is written
    here. What was kept (per-file results; HEAD's state when it had to be derived) is the
    caller's to write once the commit no longer waits (`KeptWrites.write`)."""
    rows: dict = {}
    with MetricsCache(staged.cache_file, analyzer_version(), state_version(), read_only=True,
                      keep_writes=True) as cache:
        head = Scan(None, staged.head, progress=False, workers=1, cache=cache, rows=rows)
        head_state = head.state()
        index = Scan(None, staged.index, progress=False, workers=1, cache=cache, rows=rows, store=False,
                     base=StoredState(bytes.fromhex(staged.head.tree), head_state))
        index_state = index.state()
        kept = cache.kept
    assert kept is not None
    before = snapshot_from_state(staged.repository, staged.head.rev, head_state, False, head.row_metrics,
                                 read=file_reader(staged.head))
    after = snapshot_from_state(staged.repository, "index", index_state, False, index.row_metrics,
                                read=file_reader(staged.index))
    return before, after, kept


class StagedIndex:
    """The index (`$GIT_INDEX_FILE` when git names one) as a scan's source (sources.Source)."""

    rev = "index"
    tree_id = None

    def __init__(self, git: Git, head: str, head_changes: list[Change]) -> None:
        self.git, self.head, self.head_changes = git, head, head_changes
        self._entries: dict[str, tuple[str, int]] | None = None

    @property
    def base_ids(self) -> list[bytes]:
        """HEAD's tree."""
        return [bytes.fromhex(self.head)]

    def changes_since(self, base: bytes, limit: int) -> list[Change] | None:
        """From HEAD: the staged change itself; from another tree, `git diff-index --cached`."""
        if base.hex() == self.head:
            changes = self.head_changes
        else:
            try:
                records = raw_records(self.git.output("diff-index", "--cached", "-z", "--raw", "--no-renames",
                                                       base.hex()))
            except GitCommandError:
                return None
            if records is None:
                return None
            changes = [(old.path if status != "A" else None, new if status != "D" else None)
                       for status, old, new in records]
        return changes if len(changes) <= limit else None

    def listing(self) -> dict[str, tuple[str, int]]:
        """path -> (blob id, mode) of every stage-0 entry (`git ls-files --stage`)."""
        if self._entries is None:
            entries = {}
            for item in self.git.output("ls-files", "--stage", "-z").split(b"\0"):
                if item:
                    info, _tab, path = item.partition(b"\t")
                    mode, oid, stage = info.split()
                    if stage == b"0" and int(mode, 8) != MODE_TREE:   # a sparse folder: not expanded here
                        entries[os.fsdecode(path)] = (oid.decode("ascii"), int(mode, 8))
            self._entries = entries
        return self._entries

    def entries(self) -> Iterator[Entry]:
        """Every file of the index."""
        return (Entry(path, oid, mode) for path, (oid, mode) in self.listing().items())

    def lookup(self, path: str) -> tuple[str, int] | None:
        """(blob id, mode) of *path* in the index."""
        return self.listing().get(path)

    def blob(self, oid: str) -> bytes | None:
        """The blob's bytes."""
        return self.git.blob(oid)


class HeadTree:
    """HEAD's tree as a scan's source: the index's entries with the staged change taken back."""

    def __init__(self, git: Git, commit: str, tree: str, index: StagedIndex, records: list) -> None:
        self.git, self.rev, self.tree, self.index = git, commit, tree, index
        self._undo: dict[str, Entry | None] = {}   # path -> HEAD's entry (None: not in HEAD)
        for status, old, new in records:
            if status != "A":
                self._undo[old.path] = old
            if status in "AR":
                self._undo[new.path] = None

    @property
    def tree_id(self) -> bytes | None:
        """HEAD's tree."""
        return bytes.fromhex(self.tree)

    @property
    def base_ids(self) -> list[bytes]:
        """None known here: a scan falls back to the latest stored state."""
        return []

    def changes_since(self, base: bytes, limit: int) -> list[Change] | None:
        """`git diff-tree` from *base* to HEAD's tree."""
        try:
            records = raw_records(self.git.output("diff-tree", "-r", "-z", "--raw", "--no-renames", base.hex(),
                                                   self.tree))
        except GitCommandError:
            return None
        if records is None or len(records) > limit:
            return None
        return [(old.path if status != "A" else None, new if status != "D" else None) for status, old, new in records]

    def entries(self) -> Iterator[Entry]:
        """Every file of HEAD's tree."""
        for path, (oid, mode) in self.index.listing().items():
            if path not in self._undo:
                yield Entry(path, oid, mode)
        yield from (entry for entry in self._undo.values() if entry is not None)

    def lookup(self, path: str) -> tuple[str, int] | None:
        """(blob id, mode) of *path* in HEAD's tree."""
        if path in self._undo:
            entry = self._undo[path]
            return None if entry is None else (entry.id, entry.mode)
        return self.index.lookup(path)

    def blob(self, oid: str) -> bytes | None:
        """The blob's bytes."""
        return self.git.blob(oid)


def raw_records(raw: bytes) -> list[tuple[str, Entry, Entry]] | None:
    """`git diff-* -z --raw` output as (status letter, old side, new side); None when it holds a
    status other than added, deleted, modified, renamed or type-changed (a conflict: U)."""
    items = raw.split(b"\0")
    records = []
    i = 0
    while i < len(items) - 1:
        header = items[i].decode("ascii", "replace")
        if not header.startswith(":"):
            return None
        old_mode, new_mode, old_id, new_id, status = header[1:].split()
        letter = status[:1]
        if letter not in "ADMTR":
            return None
        old_path = os.fsdecode(items[i + 1])
        new_path = old_path
        i += 2
        if letter == "R":
            new_path = os.fsdecode(items[i])
            i += 1
        records.append((letter, Entry(old_path, old_id, int(old_mode, 8)), Entry(new_path, new_id, int(new_mode, 8))))
    return records
