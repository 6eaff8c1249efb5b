"""`git neo sync | pull | push | trust`: share the facts and notes with a remote."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, cast

from neo_git.cli.output import print_json, visible, warn
from neo_git.cli.parser import json_flag

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.store.refstore import RefStore


def register(sub) -> dict[str, str]:
    """Add sync, pull, push and trust."""
    p = sub.add_parser("sync", help="fetch the chosen remote's facts and notes, merge, push ours")
    p.add_argument("remote", nargs="?", help="remote name (default: the chosen one, neo.remote)")
    p.add_argument("--remote", dest="choose", metavar="R",
                   help="share facts with R from now on (records neo.remote), then sync")
    p.add_argument("--configure-fetch", action="store_true",
                   help="instead of syncing, add fetch refspecs so plain `git fetch` brings refs/neo/* too")
    p.add_argument("--remove", action="store_true", help="with --configure-fetch: take the refspecs out")
    p.add_argument("--org", nargs="?", const=True, default=None, metavar="NAME",
                   help="sync the connected org memory instead (as `git neo org sync`; NAME: another org)")
    json_flag(p)
    p = sub.add_parser("pull", help="fetch a remote's facts and notes and merge them (no push, no choice needed)")
    p.add_argument("remote", nargs="?", help="remote name (default: neo.remote, origin, or the only remote)")
    json_flag(p)
    p = sub.add_parser("push", help="push facts and notes to the chosen remote (refuses when it moved: run sync)")
    p.add_argument("remote", nargs="?", help="remote name (default: the chosen one, neo.remote)")
    p.add_argument("--remote", dest="choose", metavar="R",
                   help="share facts with R from now on (records neo.remote), then push")
    json_flag(p)

    p = sub.add_parser("trust", help="whose facts count as knowledge (others' are unverified claims)")
    p.add_argument("action", choices=("add", "remove", "list"))
    p.add_argument("who", nargs="?", help="an author's e-mail (add/remove)")
    p.add_argument("--key", metavar="KEY",
                   help="with add: their ssh public key (`ssh-ed25519 AAAA…`, as their `git neo trust list` prints "
                        "it, or a .pub file): only it speaks for them from now on, in every repository")
    json_flag(p)
    return {"sync": "cmd_sync", "pull": "cmd_pull", "push": "cmd_push", "trust": "cmd_trust"}


def _syncer(args: argparse.Namespace):
    from neo_git.store import FactStore
    from neo_git.sync import Syncer

    store = FactStore.open()
    cast("RefStore", store.project_store).tip()   # a damaged ref: a fatal pointing at `doctor --fix` before any network
    return Syncer(store, args.remote)


def _sharing_syncer(args: argparse.Namespace):
    """The Syncer for a command that pushes: only to the remote chosen for facts (neo.remote).
    `--remote R` chooses R first; any other remote is refused, saying what would go where."""
    from neo_git.errors import NeoError
    from neo_git.store import FactStore
    from neo_git.sync import Syncer
    from neo_git.sync.remotes import choose_remote, require_chosen

    store = FactStore.open()
    assert store.repo is not None   # opened from a repository
    cast("RefStore", store.project_store).tip()   # a damaged ref is never shared (nor read as "nothing yet")
    if args.choose:
        if args.remote and args.remote != args.choose:
            raise NeoError(f"two remotes named: {args.remote} and --remote {args.choose}", "name one")
        if choose_remote(store.repo, args.choose) and not args.json:
            print(f"facts are shared with {args.choose} from now on (neo.remote)")
    # Without a name: the chosen remote, else the one a plain sync would have used (refused below,
    # naming what it would have sent there).
    syncer = Syncer(store, args.choose or args.remote)
    require_chosen(store.repo, syncer.remote, syncer.names)
    return syncer


def _print_report(report, args: argparse.Namespace) -> None:
    warn(report.warnings)
    if args.json:
        print_json(report.to_dict())
        return
    facts = report.facts + (f" ({report.summary})" if report.summary else "")
    print(f"facts: {facts}")
    print(f"notes: {report.notes}")
    for line in report.keys:
        print(visible(f"trust: {line}"))
    if report.pushed:
        print(f"pushed to {report.remote}: {', '.join(report.pushed)}")


TRUST_NOTE = "trust/announced"   # under .git/neo: the note below was shown once in this clone


def _announce_trust(syncer, report, args: argparse.Namespace) -> None:
    """The first time a sync brings others' facts in, say which trust setting is in effect."""
    plan = report.plan
    if args.json or plan is None or not plan.added or syncer.store is None:
        return
    marker = syncer.paths.neo_dir / TRUST_NOTE
    if marker.exists():
        return
    from neo_git.store.trust import trusted_remotes

    remotes = trusted_remotes(syncer.repo)
    claims = syncer.store.untrusted()
    arrived = [i for i in plan.added if i in claims]
    if remotes:
        setting = (f"neo.trustUnsigned = {', '.join(remotes)}: every commit from "
                   f"{'any remote' if '*' in remotes else ', '.join(remotes)} counts as its author's, signed or not")
    else:
        setting = ("signatures: a commit counts as its author's only when its signature is verified for someone you "
                   "trust: your own key, or the key bound to or pinned for a teammate you trusted with "
                   "`git neo trust add EMAIL`; unsigned ones, and others', are shown with the author they claim")
    print(f"trust: {setting}. Of {len(plan.added)} fact(s) from others, {len(arrived)} are unverified: they reach "
          "recall and agents as team knowledge; their constraints and changes to your facts wait for "
          "`git neo review` (`git neo trust list` shows who counts)")
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("shown\n", encoding="utf-8")
    except OSError:
        pass


def cmd_sync(args: argparse.Namespace) -> int:
    """Pull then push, retrying a bounded number of times when the remote moves."""
    if args.configure_fetch:
        return _configure_fetch(args)
    if args.org is not None:
        from neo_git.cli.org import cmd_sync_org

        if args.remote or args.choose:
            from neo_git.errors import NeoError

            raise NeoError("`git neo sync --org` syncs the org memory with its own remote",
                           "leave out the remote name (`git neo org status` shows the org's remote)")
        return cmd_sync_org(args)
    syncer = _sharing_syncer(args)
    report = syncer.sync()
    _print_report(report, args)
    _announce_trust(syncer, report, args)
    return 0


def cmd_pull(args: argparse.Namespace) -> int:
    """Fetch and merge only."""
    syncer = _syncer(args)
    report = syncer.pull()
    _print_report(report, args)
    _announce_trust(syncer, report, args)
    return 0


def cmd_push(args: argparse.Namespace) -> int:
    """Push only; refuses with a hint when the remote has something we have not merged."""
    syncer = _sharing_syncer(args)
    report = syncer.push()
    if not report.pushed and not args.json:
        print(f"{syncer.remote} already has your facts and notes")
        return 0
    _print_report(report, args)
    return 0


def _configure_fetch(args: argparse.Namespace) -> int:
    from neo_git.identity import open_repository
    from neo_git.sync import configure_remote_fetch, resolve_remote

    repo = open_repository()
    remote = resolve_remote(repo, args.choose or args.remote)
    changed = configure_remote_fetch(repo, remote, remove=args.remove)
    if args.choose:
        record_choice(repo, remote, args.remove, args.json)
    if args.json:
        print_json({"remote": remote, "removed" if args.remove else "added": changed})
    elif not changed:
        print(f"remote.{remote}.fetch already " + ("lacks" if args.remove else "has") + " the neo refspecs")
    else:
        for spec in changed:
            print(f"{'removed' if args.remove else 'added'} remote.{remote}.fetch {spec}")
    return 0


def record_choice(repo, remote: str, remove: bool, quiet: bool) -> None:
    """`--remote R` chooses R for sharing facts; with `--remove` (uninstall) it takes that back."""
    from neo_git.sync.remotes import choose_remote, forget_remote

    if remove:
        if forget_remote(repo, remote) and not quiet:
            print(f"facts are no longer shared with {remote} (neo.remote unset)")
    elif choose_remote(repo, remote) and not quiet:
        print(f"facts are shared with {remote} from now on (neo.remote)")


def cmd_trust(args: argparse.Namespace) -> int:
    """Add, remove or list trusted authors (and their signing keys)."""
    from neo_git.errors import NeoError
    from neo_git.store import FactStore
    from neo_git.sync import trust

    store = FactStore.open()
    if args.action == "list":
        return _trust_list(store, args)
    if not args.who:
        raise NeoError(f"`git neo trust {args.action}` needs an e-mail address",
                       f"e.g. `git neo trust {args.action} alice@example.com`")
    if args.key is not None and args.action != "add":
        raise NeoError("--key goes with `git neo trust add`", "e.g. `git neo trust add alice@example.com --key ssh-ed25519 AAAA…`")
    if args.action == "add":
        bound = trust.bind_key(args.who, args.key) if args.key is not None else None
        email = trust.add_trusted(store, args.who)
        message = _added_message(store, email, bound)
    else:
        email = trust.remove_trusted(store, args.who)
        message = f"no longer trusted: {email}"
    if args.json:
        print_json({"action": args.action, "email": email, **({"key": bound[1]} if args.key is not None and bound is not None else {})})
    else:
        for line in message.splitlines():
            print(visible(line))
    return 0


def _added_message(store, email: str, bound: tuple[str, str, bool] | None) -> str:
    """What `trust add` did, for signed and for unsigned commits."""
    from neo_git.sync import trust

    lines = [f"trusted {email}: commits git verifies as signed by {email} now count as theirs "
             "(gpg, or ssh with gpg.ssh.allowedSignersFile naming the key)"]
    keys = trust.key_listing(store)
    if bound is not None:
        lines.append(f"key {bound[1]} speaks for {email} in every repository (~/.neo/keys/allowed_signers): "
                     "commits it signs count as theirs here; keys pinned for them on first use no longer do")
    else:
        pinned = [p for p in keys.pins if p["address"] == email and p["counts"]]
        for pin in pinned:
            lines.append(f"their signing key pinned from {pin['remote']} on first use ({pin['key']}, first seen on "
                         f"{pin['commit'][:12]}): commits it signs count as theirs from now on; compare it with what "
                         f"`git neo trust list` shows on their machine, or bind the right one with --key")
        if not pinned and not any(a == email for a, _ in keys.bound):
            lines.append(f"no signing key of {email} was seen yet: the first one that signs as them from a remote "
                         "is pinned and counts; `--key` binds theirs now instead")
    if not trust.trusted_remotes(store.repo):
        lines.append(f"unsigned commits claiming {email} stay unverified (anyone can type an address); "
                     "`git config neo.trustUnsigned <remote>` counts every commit from a remote whose "
                     "write access you trust")
    return "\n".join(lines)


def _trust_list(store, args: argparse.Namespace) -> int:
    from neo_git.sync import trust

    me = trust.local_email(store)
    listed = trust.configured_trust(store.repo)
    remotes = trust.trusted_remotes(store.repo)
    keys = trust.key_listing(store)
    if args.json:
        print_json({"local_user": me, "trusted": listed, "trusted_remotes": remotes,
                    "signing": keys.signing, "signing_key": keys.own_public or None,
                    "signing_key_fingerprint": keys.own_fingerprint or None,
                    "keys": [{"address": a, "key": k} for a, k in keys.bound],
                    "pins": keys.pins, "conflicts": keys.conflicts})
        return 0
    print(visible(f"{me} (you): commits this clone wrote, and commits signed with your key"))
    if keys.own_public:
        print(visible(f"  your signing key ({keys.own_fingerprint}): {keys.own_public}"))
        print(visible(f"  your other machines: `git neo trust add {me} --key '{keys.own_public}'`"))
    elif keys.signing == "own-key":
        print("  your signing key: none yet (made in ~/.neo/keys with your first write)")
    if keys.signing == "off":
        print("  facts commits here are not signed (neo.signCommits false or neo.autoSign false)")
    for email in listed:
        if email != me:
            print(visible(f"{email}: commits git verifies as signed by this address, or signed by a key bound to "
                          "them or pinned for them"))
    for address, key in keys.bound:
        print(visible(f"key {key} speaks for {address} (bound with --key)"))
    for pin in keys.pins:
        if not pin["counts"]:
            continue
        status = "trusted" if pin["trusted"] else f"knowledge only (`git neo trust add {pin['address']}`)"
        print(visible(f"key {pin['key']} pinned for {pin['address']} from {pin['remote']} on first use: {status}"))
    for row in keys.conflicts:
        print(visible(f"warning: {row['commits']} commit(s) from {row['remote'] or 'an unknown remote'} "
                      f"{row['why']}: unverified claims"))
    for remote in remotes:
        print(visible(f"every commit from remote {remote}, signed or not (neo.trustUnsigned)"))
    if not remotes:
        print("unsigned commits from others count as nobody's: their facts are team knowledge shown with "
              "the author they claim; their constraints wait for `git neo review` "
              "(`git config neo.trustUnsigned <remote>` trusts a remote's write access instead)")
    return 0
