"""Moving `refs/neo/facts` and `refs/notes/neo` over the network with the `git` command.

libgit2 does not read the user's ssh config, credential helpers or proxies, so every
network step is `git` (through `run_git`: list args, timeout, no prompts):

- `git ls-remote` first, so a remote without notes (or without facts) is not an error
  and an unchanged remote costs one round trip and no fetch;
- `git fetch --no-filter` into tracking refs only (`refs/remotes/<r>/neo/facts`,
  `refs/notes/remotes/<r>/neo`): never into the local refs, so fetching loses nothing.
  `--no-filter` because a partial clone (`--filter=blob:none`) would otherwise fetch the
  facts' commits without their blobs, and libgit2 cannot fetch missing objects lazily.
  (git 2.39 has no `fetch --porcelain`, which came in 2.41; the refs are read back instead.)
- `git push --porcelain` without force, `--atomic` when both refs move; each ref's
  status line is parsed to tell "the remote moved" (retry after a merge) from
  "the remote refused" (stop, with the remote's own message).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from neo_git.errors import NeoError
from neo_git.gitrun import GitCommandError, git_dir_args, run_git
from neo_git.identity import RepositoryPaths

FACTS_REF = "refs/neo/facts"
NOTES_REF = "refs/notes/neo"
BRANCH_FACTS_REF = "refs/heads/neo/facts"   # the `neo.refName` fallback for branch-only remotes
BRANCH_NOTES_REF = "refs/heads/neo/notes"
# Reasons git (send-pack / receive-pack) gives when the remote ref is not what we last saw.
_MOVED = ("fetch first", "non-fast-forward", "stale info", "already exists", "failed to lock",
          "cannot lock ref", "failed to update ref", "incorrect old value", "but expected")
_REF = re.compile(r"^refs/[A-Za-z0-9._/-]+$")
# Every fetch: no tags, full blobs even in a partial clone, FETCH_HEAD and submodules untouched.
_FETCH = ("fetch", "--no-tags", "--no-filter", "--no-write-fetch-head", "--recurse-submodules=no", "--quiet")


@dataclass(frozen=True)
class RefNames:
    """Where the two refs live on the remote and in the local tracking namespace."""

    remote: str
    facts_remote: str
    notes_remote: str
    facts_tracking: str
    notes_tracking: str


def ref_names(remote: str, facts_remote: str = FACTS_REF, notes_remote: str | None = None) -> RefNames:
    """The ref names for *remote*; with `neo.refName` on a branch, notes move to a branch too."""
    for ref in (facts_remote, notes_remote or NOTES_REF):
        if not _REF.match(ref) or ".." in ref or ref.endswith((".", "/", ".lock")):
            raise NeoError(f"invalid ref name '{ref}' in neo.refName/neo.notesRefName",
                           f"use {FACTS_REF} (default) or {BRANCH_FACTS_REF}")
    if notes_remote is None:
        notes_remote = BRANCH_NOTES_REF if facts_remote.startswith("refs/heads/") else NOTES_REF
    return RefNames(remote, facts_remote, notes_remote, f"refs/remotes/{remote}/neo/facts",
                    f"refs/notes/remotes/{remote}/neo")


class Git:
    """`git` bound to one repository and one timeout."""

    def __init__(self, paths: RepositoryPaths, timeout: float) -> None:
        self.prefix = git_dir_args(paths.git_dir, paths.workdir)
        self.cwd = paths.workdir or paths.git_dir
        self.timeout = timeout

    def run(self, args: Sequence[str], *, check: bool = True, input: str | None = None):
        """Run `git <args>` in this repository."""
        return run_git([*self.prefix, *args], cwd=self.cwd, timeout=self.timeout, check=check, input=input)


def ls_remote(git: Git, remote: str, refs: Sequence[str]) -> dict[str, str]:
    """{ref: object id} for those of *refs* the remote has (one round trip)."""
    try:
        proc = git.run(["ls-remote", "--", remote, *refs])
    except GitCommandError as exc:
        raise NeoError(f"could not reach {remote}: {_last_line(exc.stderr)}",
                       "check `git remote -v` and that `git ls-remote` works from here") from None
    found = {}
    for line in proc.stdout.splitlines():
        oid, _, name = line.partition("\t")
        if name in refs:  # ls-remote matches patterns by suffix; keep exact names only
            found[name] = oid
    return found


def fetch(git: Git, remote: str, pairs: Sequence[tuple[str, str]]) -> None:
    """Fetch remote refs into local tracking refs (the tracking refs mirror the remote, so
    they are updated even when the remote was rewritten; local refs are never touched)."""
    if not pairs:
        return
    refspecs = [f"+{src}:{dst}" for src, dst in pairs]
    try:
        git.run([*_FETCH, remote, *refspecs])
    except GitCommandError as exc:
        raise NeoError(f"could not fetch from {remote}: {_last_line(exc.stderr)}",
                       "check the remote with `git fetch` and try again") from None


def ensure_blobs(git: Git, remote: str, tip: str, have: Sequence[str]) -> int:
    """In a partial clone, fetch the blobs of *tip*'s history that are missing (a plain
    `git fetch` with the configured filter may have brought the commits without them).
    Returns how many objects were fetched."""
    proc = git.run(["rev-list", "--objects", "--missing=print", tip, "--not", *have, "--"], check=False)
    missing = [line[1:].strip() for line in proc.stdout.splitlines() if line.startswith("?")]
    if missing:
        try:
            git.run([*_FETCH, "--stdin", remote], input="\n".join(missing) + "\n")
        except GitCommandError as exc:
            raise NeoError(f"could not fetch the facts' contents from {remote}: {_last_line(exc.stderr)}",
                           "this partial clone's remote must serve blobs by id (uploadpack.allowFilter)") from None
    return len(missing)


@dataclass(frozen=True)
class RefStatus:
    """One line of `git push --porcelain`: `<flag>\\t<src>:<dst>\\t<summary> (<reason>)`."""

    flag: str
    src: str
    dst: str
    summary: str
    reason: str

    @property
    def rejected(self) -> bool:
        """True when this ref was not updated."""
        return self.flag == "!"


@dataclass
class PushResult:
    """What a push did, ref by ref, and what the remote said."""

    statuses: list[RefStatus] = field(default_factory=list)
    remote_messages: list[str] = field(default_factory=list)
    stderr: str = ""
    returncode: int = 0

    @property
    def ok(self) -> bool:
        """Every ref was updated (or already up to date)."""
        return self.returncode == 0 and not any(s.rejected for s in self.statuses)

    @property
    def remote_moved(self) -> bool:
        """Rejected because the remote ref is not what we merged with: fetch, merge, retry."""
        return any(s.rejected and any(m in s.reason for m in _MOVED) for s in self.statuses)

    def refusal(self) -> str:
        """The remote's own words for a refusal, for the `fatal:` line."""
        rejected = [s for s in self.statuses if s.rejected and "atomic push failed" not in s.reason]
        rejected = rejected or [s for s in self.statuses if s.rejected]
        what = "; ".join(f"{s.dst}: {s.summary} ({s.reason})" if s.reason else f"{s.dst}: {s.summary}"
                         for s in rejected) or _last_line(self.stderr)
        said = " / ".join(self.remote_messages[-3:])
        return what + (f"; the remote said: {said}" if said else "")


def parse_push_porcelain(stdout: str, stderr: str, returncode: int) -> PushResult:
    """Parse `git push --porcelain` output (status lines on stdout, `remote:` lines on stderr)."""
    result = PushResult(stderr=stderr, returncode=returncode)
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1 or ":" not in parts[1]:
            continue  # "To <url>", "Done"
        src, _, dst = parts[1].partition(":")
        summary, reason = parts[2], ""
        match = re.match(r"^(.*?) \((.*)\)$", parts[2])
        if match:
            summary, reason = match.group(1), match.group(2)
        result.statuses.append(RefStatus(parts[0], src, dst, summary, reason))
    for line in stderr.splitlines():
        if line.startswith("remote:"):
            text = line[len("remote:"):].strip()
            if text:
                result.remote_messages.append(text)
    return result


def push(git: Git, remote: str, pairs: Sequence[tuple[str, str]]) -> PushResult:
    """Push local refs to remote refs without force (`--atomic` for two refs)."""
    refspecs = [f"{src}:{dst}" for src, dst in pairs]  # no leading "+": never a forced update
    args = ["push", "--porcelain", "--no-recurse-submodules", remote, *refspecs]
    if len(pairs) > 1:
        args.insert(2, "--atomic")
    proc = git.run(args, check=False)
    if proc.returncode and "does not support --atomic" in proc.stderr and len(pairs) > 1:
        # An old server: push the facts first, then the notes (each alone is still safe).
        args.remove("--atomic")
        proc = git.run(args, check=False)
    result = parse_push_porcelain(proc.stdout, proc.stderr, proc.returncode)
    if proc.returncode and not result.statuses:
        raise push_failure(remote, proc.stderr)
    return result


# What git and the big hosts print when the push itself is not allowed (ssh: "ERROR: Permission to
# o/r.git denied to u." then "Could not read from remote repository"; https: 403, or no credentials
# with prompts off; a path: "insufficient permission" / read-only file system).
_NO_ACCESS = ("permission", "denied", "could not read from remote repository", "403", "401",
              "could not read username", "authentication failed", "insufficient permission", "read-only",
              "not allowed", "unable to access")


def push_failure(remote: str, stderr: str) -> NeoError:
    """The error for a push git could not even start (no per-ref status): a remote you cannot
    push to gets its own message, quoting the remote's words rather than git's last line."""
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    said = next((line for line in lines if line.lower().startswith(("error:", "remote:", "error "))
                 and "permission" in line.lower()), None) or _last_line(stderr)
    if any(word in (stderr or "").lower() for word in _NO_ACCESS):
        return NeoError(f"you cannot push to {remote}: {said}",
                        f"nothing was pushed and your local facts are unchanged; share through a remote you can "
                        f"write to (`git remote add team <url>`, then `git neo sync --remote team`), or keep "
                        f"only pulling: `git neo pull {remote}`")
    return NeoError(f"could not push to {remote}: {said}",
                    "check the remote with `git push --dry-run` and try again")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (fatal or lines or ["(no message)"])[-1]
