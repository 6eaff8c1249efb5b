"""The doctor's check of a damaged facts ref, and the repair that restores its last good tip.

Whatever the damage (store/ref_damage.py decides: a loose or packed line that holds no id, a
folder in the ref's place, a symbolic ref, a ref to a blob, a tree, a missing or a non-facts
commit, a ref deleted while its reflog or the parse cache remember it), git itself often
refuses to move the ref (`git update-ref` cannot lock what it cannot resolve; a bad packed-refs
line makes every git command fail). The repair:

1. finds the last good tip: the newest reflog entry that is a facts commit here, else a
   remote's tracking ref `refs/remotes/<r>/neo/facts`, else (only with `--fix`) a fetch of the
   remote's `refs/neo/facts` into that tracking ref;
2. takes `<ref>.lock` exclusively (git's lock protocol), moves a folder in the ref's place
   aside to `.git/neo/damaged/`, drops the ref's line from `packed-refs` (under
   `packed-refs.lock`), writes the tip into the lock, fsyncs and renames it over the ref;
3. says so in the reflog.

It never writes a new, empty root: with no good tip anywhere, the finding says how to look
for one and nothing is changed.
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

from neo_git.doctor.findings import Context, Finding
from neo_git.errors import CorruptStore, NeoError
from neo_git.store.ref_damage import checked_tip, is_oid, last_good_tip, packed_line

REF = "refs/neo/facts"
ACTION = "restore-ref"
CHECK = "ref-file"


def ref_problem(ctx: Context, ref: str = REF) -> str | None:
    """What is wrong with *ref* (None: fine, or it never existed)."""
    try:
        checked_tip(ctx.repo, ctx.paths.common_dir, ref)
    except CorruptStore as exc:
        return exc.message
    packed = packed_line(ctx.paths.common_dir, ref)
    if packed is not None and not is_oid(packed):
        # The loose file wins, so git-neo reads it; but git fails on every command reading packed-refs.
        return (f"{ref}: its line in {ctx.paths.common_dir / 'packed-refs'} holds {packed[:44]!r}, not an "
                "object id (git fails on every command that reads packed-refs)")
    return None


def check_ref_file(ctx: Context) -> list[Finding]:
    """A damaged facts ref, with the tip `--fix` would restore (or how to find one)."""
    problem = ref_problem(ctx)
    findings = _other_packed_lines(ctx)
    if problem is None:
        return findings
    path = str(Path(ctx.paths.common_dir) / REF)
    if _sound_tip(ctx) is not None:
        return [Finding(CHECK, problem, fix="drop its line from packed-refs (the loose ref, which git-neo reads, "
                                             "is kept)", path=path, action=ACTION), *findings]
    found = _local_tip(ctx)
    if found is not None:
        tip, where = found
        return [Finding(CHECK, problem, fix=f"restore {REF} to {tip[:12]}, its last good tip, from {where}",
                        path=path, action=ACTION), *findings]
    remote = _remote(ctx)
    if remote is not None:
        return [Finding(CHECK, problem, fix=f"fetch {REF} from {remote} and restore it (nothing good is here)",
                        path=path, action=ACTION), *findings]
    return [Finding(CHECK, problem, hint=(
        f"no reflog entry, remote copy or remote names a good tip; `git fsck --lost-found` lists unreachable "
        f"commits (a facts commit's message starts with add/merge/supersede/init): "
        f"`git update-ref {REF} <commit>` after moving the damaged ref aside"), path=path), *findings]


def _sound_tip(ctx: Context) -> object | None:
    """The ref's tip when the ref itself reads fine (None: it is damaged or absent)."""
    try:
        return checked_tip(ctx.repo, ctx.paths.common_dir, REF)
    except CorruptStore:
        return None


def _local_tip(ctx: Context) -> tuple[str, str] | None:
    """The last good tip found without the network: the reflog, a remote's tracking ref, else
    the lost commit the parse cache remembers."""
    found = last_good_tip(ctx.repo, ctx.paths.common_dir, REF)
    if found is None:
        lost = _unreachable_tip(ctx)
        if lost is not None:
            found = (lost, "an unreachable commit (`git fsck`) whose facts folders the parse cache holds")
    return found


def _unreachable_tip(ctx: Context) -> str | None:
    """The lost tip the parse cache remembers (a ref deleted with its reflog): the newest
    unreachable facts commit whose `facts/` folders are exactly those the cache holds."""
    import pygit2

    from neo_git.gitrun import git_dir_args, run_git
    from neo_git.store.parse_cache import parse_cache_path
    from neo_git.store.parse_journal import read_parse_cache
    from neo_git.store.ref_damage import tip_problem

    cached = {name: sub.oid for name, sub in read_parse_cache(parse_cache_path(ctx.paths.common_dir, REF), REF).items()}
    if not cached:
        return None
    try:
        proc = run_git([*git_dir_args(ctx.paths.common_dir), "fsck", "--unreachable", "--no-reflogs", "--no-progress"],
                       check=False, timeout=600.0)
    except NeoError:
        return None
    best: tuple[int, str] | None = None
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[:2] != ["unreachable", "commit"]:
            continue
        commit = ctx.repo.get(parts[2])
        if not isinstance(commit, pygit2.Commit) or tip_problem(ctx.repo, commit.id, strict=True) is not None:
            continue
        tree = commit.tree
        facts = ctx.repo.get(tree["facts"].id) if "facts" in tree else None
        folders = {entry.name: entry.id for entry in facts} if isinstance(facts, pygit2.Tree) else {}
        if folders == cached and (best is None or commit.commit_time > best[0]):
            best = (commit.commit_time, parts[2])
    return best[1] if best else None


def _other_packed_lines(ctx: Context) -> list[Finding]:
    """Other refs' packed-refs lines that hold no id: git fails on them too (not ours to rewrite)."""
    try:
        text = (Path(ctx.paths.common_dir) / "packed-refs").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    bad = []
    for line in text.splitlines():
        if not line or line.startswith("#") or line.startswith("^"):
            continue
        value, _, name = line.partition(" ")
        if name != REF and not is_oid(value):
            bad.append(name or line[:40])
    if not bad:
        return []
    return [Finding(CHECK, f"{len(bad)} other line{'s' if len(bad) != 1 else ''} of "
                           f"{ctx.paths.common_dir / 'packed-refs'} hold{'s' if len(bad) == 1 else ''} no object id ({', '.join(bad[:5])}"
                           f"{', …' if len(bad) > 5 else ''}): git fails on every command that reads it",
                    hint="remove those lines from packed-refs by hand, then `git update-ref <ref> <id>` with the "
                         "id from `.git/logs/<ref>` (git-neo rewrites only its own ref)")]


def _remote(ctx: Context) -> str | None:
    """The remote a fetch would restore from: `neo.remote`, else the only remote."""
    from neo_git.sync.remotes import chosen_remote

    try:
        chosen = chosen_remote(ctx.repo)
        names = list(ctx.repo.remotes.names())
    except Exception:  # noqa: BLE001 - a broken remote config: nothing to fetch from
        return None
    if chosen in names:
        return chosen
    return names[0] if len(names) == 1 else None


def _fetch(ctx: Context, remote: str) -> None:
    """Fetch the remote's facts ref into its tracking ref (the one network step of the doctor,
    taken only by `--fix` when nothing here holds a good tip)."""
    from neo_git.gitrun import git_dir_args, run_git

    tracking = f"refs/remotes/{remote}/{REF.removeprefix('refs/')}"
    proc = run_git([*git_dir_args(ctx.paths.common_dir), "fetch", "--quiet", "--no-tags",
                    "--no-write-fetch-head", remote, f"+{REF}:{tracking}"], check=False, timeout=120.0)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [""])[-1]
        hint = ("first remove the other lines of packed-refs that hold no id (`git neo doctor` lists them): git "
                "fetches nothing while they are there" if _other_packed_lines(ctx) else "check the connection")
        raise NeoError(f"could not fetch {REF} from {remote}: {last}",
                       f"{hint}, then run `git neo doctor --fix` again; {REF} was not written")


def restore_ref(finding: Finding, ctx: Context | None, held: set[str] | None) -> bool:
    """The "restore-ref" repair: put the last good tip back with git's lock protocol."""
    if ctx is None or ref_problem(ctx) is None:
        return False
    common = Path(ctx.paths.common_dir)
    if _sound_tip(ctx) is not None:   # only the packed line is bad: the loose ref stays as it is
        _drop_packed_line(common)
        return True
    path = common / REF
    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise NeoError(f"{lock} exists: another process is updating the ref",
                       "run `git neo doctor --fix` again once it is done (the doctor clears it if it is stale)") \
            from None
    try:
        # First the packed line: while it holds no id, git (a fetch below included) fails outright.
        _drop_packed_line(common)
        found = _local_tip(ctx)
        if found is None:
            remote = _remote(ctx)
            if remote is None:
                raise NeoError(f"no good tip of {REF} is here", finding.hint)
            _fetch(ctx, remote)
            found = last_good_tip(ctx.repo, common, REF)
            if found is None:
                raise NeoError(f"{remote}'s {REF} is not a facts commit either", finding.hint)
        tip, where = found
        if path.is_dir():
            _move_aside(common, path)
        os.write(fd, (tip + "\n").encode())
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(lock, path)   # over a loose file that held no id, or a symbolic ref's file
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            lock.unlink()
        except FileNotFoundError:
            pass
        raise
    _log(ctx, tip, where)
    return True


def _move_aside(common: Path, path: Path) -> Path:
    """Move the folder at the ref's place to `.git/neo/damaged/` (outside refs/: git would read
    any file in it as a ref)."""
    folder = common / "neo" / "damaged"
    folder.mkdir(parents=True, exist_ok=True)
    aside = folder / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', REF)}.{time.strftime('%Y%m%dT%H%M%S')}.{os.getpid()}"
    os.replace(path, aside)
    return aside


def _drop_packed_line(common: Path) -> None:
    """Rewrite `packed-refs` without the facts ref's line (and its `^peeled` line), under
    `packed-refs.lock` as git does; the loose ref written next is then the only one."""
    packed = common / "packed-refs"
    if packed_line(common, REF) is None:
        return
    lock = common / "packed-refs.lock"
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise NeoError(f"{lock} exists: another git process is rewriting packed refs",
                       "run `git neo doctor --fix` again once it is done (the doctor clears it if it is stale)") \
            from None
    try:
        kept, skip_peeled = [], False
        for line in packed.read_bytes().splitlines(keepends=True):
            if skip_peeled and line.startswith(b"^"):
                continue
            skip_peeled = line.rstrip(b"\r\n").endswith(b" " + REF.encode())
            if not skip_peeled:
                kept.append(line)
        os.write(fd, b"".join(kept))
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(lock, packed)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        lock.unlink(missing_ok=True)
        raise


def _log(ctx: Context, tip: str, where: str) -> None:
    """Say in the reflog what happened (git appends the same way: `old new who when\tmessage`)."""
    from neo_git.identity import author_identity

    who = author_identity(ctx.repo)
    stamp = time.strftime("%z")
    line = (f"{'0' * len(tip)} {tip} {who} {int(time.time())} {stamp}\t"
            f"neo: doctor restored the last good tip (from {where})\n")
    try:
        path = Path(ctx.paths.common_dir) / "logs" / REF
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as log:
            log.write(line)
    except OSError:
        pass   # the ref is restored; a reflog line is a courtesy
