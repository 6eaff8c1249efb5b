"""Who could have made the commits a sync brings in: git's signature verdicts, recorded.

A commit's author e-mail is typed by whoever made it, so it proves nothing. Git itself
verifies signatures (`git log --format=%G?` runs gpg or `ssh-keygen -Y verify` as
`git verify-commit` does, with the user's `gpg.ssh.allowedSignersFile` and gpg trust),
and names the signer (`%GS`: the ssh principal from the allowed-signers file, or the gpg
user id) and the key (`%GF`). Each new commit's verdict is recorded locally
(`store/received.py`), and the first key seen signing as an address from a remote is pinned
(`store/pins.py`); trust then reads both, and the sync gate (`sync/gate.py`) uses them to decide
which incoming changes may touch trusted facts.

git cannot check an ssh signature at all without an allowed-signers file (`%G?` is N and it
prints an error), so when the user has none git-neo gives it an empty one: a valid signature
by a key no file names is then U with its fingerprint, which is what the keys git-neo knows
(`store/signers.py`) and pinning need.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from neo_git.errors import NeoError
from neo_git.store import pins, received

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.sync.transport import Git

# unit and record separators: no signer name or e-mail can hold them (git strips controls)
_FORMAT = "%H%x1f%G?%x1f%GS%x1f%ae%x1f%GF%x1e"


class Judged(NamedTuple):
    """What judging a pull's new commits found."""

    verdicts: dict[str, dict]   # commit id -> verdict: these and every one recorded before
    brought: list[str]          # the commits theirs brings, newest first
    pinned: list[dict]          # keys pinned on first use by these commits (`store/pins.py`)


def verify_args(git: Git) -> list[str]:
    """`-c gpg.ssh.allowedSignersFile=<empty>` for git's verification when the user set no usable
    file (theirs is used when it exists: it may name their team's keys). With an empty one git
    reports every valid ssh signature as U with its key, and `store/signers.py` says whom the key
    speaks for (git-neo's own record is not handed to git: its G would let a bound key vouch for
    any address its commit claims)."""
    proc = git.run(["config", "--type=path", "--get", "gpg.ssh.allowedSignersFile"], check=False)
    configured = proc.stdout.strip()
    if proc.returncode == 0 and configured and (Path(git.cwd) / configured).is_file():
        return []
    return ["-c", f"gpg.ssh.allowedSignersFile={os.devnull}"]


def _rows(text: str) -> list[tuple[str, dict]]:
    """(commit, verdict without its remote) for each record of `_FORMAT` output, in git's order."""
    out = []
    for row in text.split("\x1e"):
        fields = row.strip("\n").split("\x1f")
        if len(fields) != 5 or not fields[0]:
            continue
        commit, sig, signer, claimed, key = (f.strip() for f in fields)
        verdict = {"sig": sig, "signer": signer, "claimed": claimed.lower()}
        if key and sig in pins.SIGNED:
            verdict["key"] = key
        out.append((commit, verdict))
    return out


def judge_incoming(git: Git, neo_dir, remote: str, theirs: pygit2.Oid,
                   ours: pygit2.Oid | None) -> Judged:
    """Verdicts for every commit of *theirs* that *ours* does not have (recorded), and the keys
    their first uses pin (oldest commit first)."""
    args = [*verify_args(git), "log", "--topo-order", f"--format={_FORMAT}", str(theirs)]
    if ours is not None:
        args += ["--not", str(ours)]
    proc = git.run(args, check=False)
    if proc.returncode != 0:
        # Without verdicts the commits would be judged by the e-mail they claim: stop instead.
        raise NeoError(f"could not check the signatures of {remote}'s new commits: "
                       f"{(proc.stderr.strip().splitlines() or ['git log failed'])[-1]}",
                       "nothing was merged; `git fsck` checks the repository")
    known = received.verdicts(neo_dir)
    new: dict[str, dict] = {}
    brought: list[str] = []
    for commit, verdict in _rows(proc.stdout):
        brought.append(commit)
        if commit not in known:
            new[commit] = {"remote": remote, **verdict}
    received.record(neo_dir, new)
    pinned = pins.pin_first_uses(neo_dir, reversed(list(new.items())))
    return Judged({**known, **new}, brought, pinned)


def unjudged(git: Git, repo: pygit2.Repository, common_dir, ref: str = "refs/neo/facts") -> list[str]:
    """Commits on *ref* this clone did not write and has no verdict for (a lost or damaged
    record, a ref moved by plain `git fetch` or a mirror clone): they count as unverified."""
    from neo_git.store.local_writes import written_here

    proc = git.run(["rev-list", ref], check=False)
    if proc.returncode != 0:
        return []
    known = received.verdicts(Path(common_dir) / "neo")
    written = written_here(repo, common_dir, ref)
    return [c for c in proc.stdout.split() if c not in known and c not in written]


def rejudge(git: Git, repo: pygit2.Repository, common_dir, ref: str = "refs/neo/facts") -> int:
    """Judge again, from git data, every commit on *ref* that has no verdict and was not written
    here: git verifies its signature, and the remote whose facts history (`refs/remotes/<r>/neo/facts`,
    left by `git neo sync`) holds it is named as where it came from ("" when none does). Records
    the verdicts (the record is written even when there were none), and rebuilds lost pins from
    them; returns how many commits were judged."""
    neo_dir = Path(common_dir) / "neo"
    marker = neo_dir / JUDGED_TIP
    tip = _tip(repo, ref)
    if tip is not None and received.state(neo_dir) == "ok" and not pins_lost(neo_dir) \
            and not any(v.get("remote") == "" for v in received.verdicts(neo_dir).values()):
        try:
            if marker.read_text(encoding="utf-8").strip() == tip:
                return 0   # nothing moved since every commit was judged (an up-to-date sync stays cheap)
        except OSError:
            pass
    judged = _rejudge(git, repo, common_dir, ref, neo_dir)
    if tip is not None and tip == _tip(repo, ref):
        try:
            from neo_git.fileio import atomic_write

            atomic_write(marker, (tip + "\n").encode("ascii"))
        except Exception:  # noqa: BLE001 - only saves work: the next sync judges again
            pass
    return judged


JUDGED_TIP = Path("trust") / "judged-tip"   # under .git/neo: the facts tip every commit of which was judged


def _tip(repo: pygit2.Repository, ref: str) -> str | None:
    try:
        return str(repo.references[ref].resolve().target)
    except Exception:  # noqa: BLE001 - no ref, or a broken one
        return None


def pins_lost(neo_dir: Path) -> bool:
    """Whether the pins record that is gone or unreadable while some verdict could pin a key."""
    return pins.state(neo_dir) != "ok" and any(pins.pinnable(v) for v in received.verdicts(neo_dir).values())


def _rejudge(git: Git, repo: pygit2.Repository, common_dir, ref: str, neo_dir: Path) -> int:
    todo = unjudged(git, repo, common_dir, ref)
    # Commits judged while no remote's history held them (a plain `git fetch`): once `git neo
    # sync` has fetched that history, the remote is known.
    nowhere = {c: v for c, v in received.verdicts(neo_dir).items() if v.get("remote") == ""}
    rebuild = pins_lost(neo_dir)
    if not todo and not nowhere and not rebuild:
        if received.state(neo_dir) != "ok":
            received.record(neo_dir, {}, always=True)
        return 0
    holders: dict[str, str] = {}
    for tracking in _tracking_refs(repo):
        proc = git.run(["rev-list", tracking], check=False)
        remote = tracking.split("/")[2]
        for commit in proc.stdout.split() if proc.returncode == 0 else ():
            holders.setdefault(commit, remote)
    found = {c: {**v, "remote": holders[c]} for c, v in nowhere.items() if c in holders}
    if found:
        received.record(neo_dir, found, replace=True)
    new: dict[str, dict] = {}
    if todo:
        proc = git.run([*verify_args(git), "log", "--no-walk=unsorted", f"--format={_FORMAT}", "--stdin"],
                       check=False, input="\n".join(todo) + "\n")
        if proc.returncode != 0:
            raise NeoError("could not check the signatures of the facts commits: "
                           f"{(proc.stderr.strip().splitlines() or ['git log failed'])[-1]}",
                           "their facts stay unverified; `git fsck` checks the repository")
        new = {commit: {"remote": holders.get(commit, ""), **verdict, "rejudged": True}
               for commit, verdict in _rows(proc.stdout)}
        received.record(neo_dir, new, always=True)
    if found or new or rebuild:
        # Pins in the order the history gives (oldest first): what first use would have pinned.
        table = received.verdicts(neo_dir)
        order = git.run(["rev-list", "--topo-order", "--reverse", ref], check=False).stdout.split()
        pins.pin_first_uses(neo_dir, _in_order(table, order), always=rebuild)
    return len(new)


def _in_order(table: Mapping[str, dict], order: Iterable[str]) -> list[tuple[str, dict]]:
    """The verdicts of *order*'s commits in that order, then any others (sorted: stable)."""
    seen = [(c, table[c]) for c in order if c in table]
    listed = {c for c, _ in seen}
    return seen + sorted((c, v) for c, v in table.items() if c not in listed)


def _tracking_refs(repo: pygit2.Repository) -> list[str]:
    """The facts tracking refs `git neo sync` keeps, one per remote it synced with."""
    out = []
    for name in repo.remotes.names():
        ref = f"refs/remotes/{name}/neo/facts"
        if ref in repo.references:
            out.append(ref)
    return out
