"""`git neo sync | pull | push | trust`: share the facts and notes with a remote."""
from __future__ import annotations

import argparse

from neo_git.cli.output import print_json, visible, warn
from neo_git.cli.parser import json_flag


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
    json_flag(p)
    return {"sync": "cmd_sync", "pull": "cmd_pull", "push": "cmd_push", "trust": "cmd_trust"}


def _syncer(args: argparse.Namespace):
    from neo_git.store import FactStore
    from neo_git.sync import Syncer

    store = FactStore.open()
    store.project_store.tip()   # a damaged ref: a fatal pointing at `doctor --fix` before any network
    return Syncer(store, args.remote)


def _sharing_syncer(args: argparse.Namespace):
    """The Syncer for a command that pushes: only to the remote chosen for facts (neo.remote).
    `--remote R` chooses R first; any other remote is refused, saying what would go where."""
    from neo_git.errors import NeoError
    from neo_git.store import FactStore
    from neo_git.sync import Syncer
    from neo_git.sync.remotes import choose_remote, require_chosen

    store = FactStore.open()
    store.project_store.tip()   # a damaged ref is never shared (nor read as "nothing yet")
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
        setting = ("signatures: a commit counts as its author's only when git verifies a signature by someone you "
                   "trust (`git neo trust add EMAIL`); unsigned ones are shown with the author they claim")
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
    """Add, remove or list trusted authors."""
    from neo_git.errors import NeoError
    from neo_git.store import FactStore
    from neo_git.sync import trust

    store = FactStore.open()
    if args.action == "list":
        me = trust.local_email(store)
        listed = trust.configured_trust(store.repo)
        remotes = trust.trusted_remotes(store.repo)
        if args.json:
            print_json({"local_user": me, "trusted": listed, "trusted_remotes": remotes})
        else:
            print(visible(f"{me} (you): commits this clone wrote"))
            for email in listed:
                if email != me:
                    print(visible(f"{email}: commits git verifies as signed by this address"))
            for remote in remotes:
                print(visible(f"every commit from remote {remote}, signed or not (neo.trustUnsigned)"))
            if not remotes:
                print("unsigned commits from others count as nobody's: their facts are team knowledge shown with "
                      "the author they claim; their constraints wait for `git neo review` "
                      "(`git config neo.trustUnsigned <remote>` trusts a remote's write access instead)")
        return 0
    if not args.who:
        raise NeoError(f"`git neo trust {args.action}` needs an e-mail address",
                       f"e.g. `git neo trust {args.action} alice@example.com`")
    if args.action == "add":
        email = trust.add_trusted(store, args.who)
        message = (f"trusted {email}: commits git verifies as signed by {email} now count as theirs "
                   f"(gpg, or ssh with gpg.ssh.allowedSignersFile naming the key)")
        if not trust.trusted_remotes(store.repo):
            message += (f"\nunsigned commits claiming {email} stay unverified (anyone can type an address); "
                        "`git config neo.trustUnsigned <remote>` counts every commit from a remote whose "
                        "write access you trust")
    else:
        email = trust.remove_trusted(store, args.who)
        message = f"no longer trusted: {email}"
    if args.json:
        print_json({"action": args.action, "email": email})
    else:
        print(message)
    return 0
