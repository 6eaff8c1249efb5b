"""Who could have made the commits a sync brings in: git's signature verdicts, recorded.

A commit's author e-mail is typed by whoever made it, so it proves nothing. Git itself
verifies signatures (`git log --format=%G?` runs gpg or `ssh-keygen -Y verify` as
`git verify-commit` does, with the user's `gpg.ssh.allowedSignersFile` and gpg trust),
and names the signer (`%GS`: the ssh principal from the allowed-signers file, or the gpg
user id). Each new commit's verdict is recorded locally (`store/received.py`); trust then
reads it, and the sync gate (`sync/gate.py`) uses it to decide which incoming changes may
touch trusted facts.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.errors import NeoError
from neo_git.store import received

if TYPE_CHECKING:  # pragma: no cover
    import pygit2

    from neo_git.sync.transport import Git

# unit and record separators: no signer name or e-mail can hold them (git strips controls)
_FORMAT = "%H%x1f%G?%x1f%GS%x1f%ae%x1e"


def judge_incoming(git: "Git", neo_dir, remote: str, theirs: "pygit2.Oid",
                   ours: "pygit2.Oid | None") -> tuple[dict[str, dict], list[str]]:
    """Verdicts for every commit of *theirs* that *ours* does not have (recorded): ({commit id:
    verdict} with those recorded before, [the ids of the commits theirs brings])."""
    args = ["log", f"--format={_FORMAT}", str(theirs)]
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
    for row in proc.stdout.split("\x1e"):
        fields = row.strip("\n").split("\x1f")
        if len(fields) != 4 or not fields[0]:
            continue
        commit, sig, signer, claimed = fields
        brought.append(commit)
        if commit in known:
            continue
        new[commit] = {"remote": remote, "sig": sig.strip(), "signer": signer.strip(),
                       "claimed": claimed.strip().lower()}
    received.record(neo_dir, new)
    return {**known, **new}, brought


def unjudged(git: "Git", repo: "pygit2.Repository", common_dir, ref: str = "refs/neo/facts") -> list[str]:
    """Commits on *ref* this clone did not write and has no verdict for (a lost or damaged
    record, a ref moved by plain `git fetch` or a mirror clone): they count as unverified."""
    from neo_git.store.local_writes import written_here

    proc = git.run(["rev-list", ref], check=False)
    if proc.returncode != 0:
        return []
    known = received.verdicts(Path(common_dir) / "neo")
    written = written_here(repo, common_dir, ref)
    return [c for c in proc.stdout.split() if c not in known and c not in written]


def rejudge(git: "Git", repo: "pygit2.Repository", common_dir, ref: str = "refs/neo/facts") -> int:
    """Judge again, from git data, every commit on *ref* that has no verdict and was not written
    here: git verifies its signature, and the remote whose facts history (`refs/remotes/<r>/neo/facts`,
    left by `git neo sync`) holds it is named as where it came from ("" when none does). Records
    the verdicts (the record is written even when there were none); returns how many."""
    neo_dir = Path(common_dir) / "neo"
    marker = neo_dir / JUDGED_TIP
    tip = _tip(repo, ref)
    if tip is not None and received.state(neo_dir) == "ok" \
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


def _tip(repo: "pygit2.Repository", ref: str) -> str | None:
    try:
        return str(repo.references[ref].resolve().target)
    except Exception:  # noqa: BLE001 - no ref, or a broken one
        return None


def _rejudge(git: "Git", repo: "pygit2.Repository", common_dir, ref: str, neo_dir: Path) -> int:
    todo = unjudged(git, repo, common_dir, ref)
    # Commits judged while no remote's history held them (a plain `git fetch`): once `git neo
    # sync` has fetched that history, the remote is known.
    nowhere = {c: v for c, v in received.verdicts(neo_dir).items() if v.get("remote") == ""}
    if not todo and not nowhere:
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
    if not todo:
        return 0
    proc = git.run(["log", "--no-walk=unsorted", f"--format={_FORMAT}", "--stdin"], check=False,
                   input="\n".join(todo) + "\n")
    if proc.returncode != 0:
        raise NeoError("could not check the signatures of the facts commits: "
                       f"{(proc.stderr.strip().splitlines() or ['git log failed'])[-1]}",
                       "their facts stay unverified; `git fsck` checks the repository")
    new: dict[str, dict] = {}
    for row in proc.stdout.split("\x1e"):
        fields = row.strip("\n").split("\x1f")
        if len(fields) != 4 or not fields[0]:
            continue
        commit, sig, signer, claimed = fields
        new[commit] = {"remote": holders.get(commit, ""), "sig": sig.strip(), "signer": signer.strip(),
                       "claimed": claimed.strip().lower(), "rejudged": True}
    received.record(neo_dir, new, always=True)
    return len(new)


def _tracking_refs(repo: "pygit2.Repository") -> list[str]:
    """The facts tracking refs `git neo sync` keeps, one per remote it synced with."""
    out = []
    for name in repo.remotes.names():
        ref = f"refs/remotes/{name}/neo/facts"
        if ref in repo.references:
            out.append(ref)
    return out
