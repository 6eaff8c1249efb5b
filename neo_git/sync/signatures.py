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
