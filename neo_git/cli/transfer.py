"""`git neo import FILE` and `git neo export [FILE]`."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from neo_git.cli.output import print_json
from neo_git.cli.parser import SCOPES, json_flag


def register(sub) -> dict[str, str]:
    """Add import and export."""
    p = sub.add_parser("import", help="import a Neo v2.0 facts file")
    p.add_argument("file")
    p.add_argument("--scope", "-s", choices=SCOPES, metavar="SCOPE",
                   help="put every fact in this scope (default: the scope in the file)")
    p.add_argument("--skip-other-orgs", action="store_true",
                   help="leave out org facts of another org (default: refuse the file); they never enter "
                        "this repository's org scope")
    json_flag(p)

    p = sub.add_parser("export", help="write facts as a Neo v2.0 facts file")
    p.add_argument("file", nargs="?", default="-", help="output path (default: stdout)")
    p.add_argument("--scope", "-s", choices=SCOPES, metavar="SCOPE")
    p.add_argument("--all", "-a", action="store_true", help="include superseded/invalid facts")
    return {"import": "cmd_import", "export": "cmd_export"}


def cmd_import(args: argparse.Namespace) -> int:
    """Import a Neo v2.0 facts file."""
    from neo_git.store import FactStore
    from neo_git.transfer import import_file

    summary = import_file(FactStore.open(), args.file, scope=args.scope, skip_other_orgs=args.skip_other_orgs)
    if args.json:
        print_json(summary)
        return 0
    added = ", ".join(f"{n} {scope}" for scope, n in summary["added"].items() if n) or "nothing new"
    print(f"imported {summary['read']} facts from {summary['file']}: {added}"
          f" ({summary['skipped_existing']} already present; embeddings: {summary['embeddings']})")
    other = summary.get("other_org") or []
    if other:
        orgs = ", ".join(sorted({o["org"] for o in other}))
        print(f"left out {len(other)} org fact(s) of {orgs}: they belong to that org's repositories")
    cut = summary.get("cut_pointers") or []
    if cut:
        print(f"cut {len(cut)} pointer(s) at facts that are neither in the file nor in this store:")
        for item in cut[:10]:
            print(f"  {item['id']}: {item['pointer']} → {item['target']}")
        if len(cut) > 10:
            print(f"  … ({len(cut) - 10} more; --json lists them all)")
    for scope, ids in summary.get("evicted", {}).items():
        shown = ", ".join(ids[:10]) + (f", … ({len(ids) - 10} more)" if len(ids) > 10 else "")
        print(f"evicted {len(ids)} {scope} facts to keep the scope at its cap: {shown}")
        print("  (`git neo why ID` says why; `git neo restore ID` brings one back)")
    return 0


def export_target(name: str) -> Path:
    """The file export writes: NeoError for "", a directory, or a folder that does not exist
    (export never creates folders: a typo should not leave a new tree behind)."""
    from neo_git.errors import NeoError

    if not name.strip():
        raise NeoError("export needs a file name, not an empty one",
                       "`git neo export facts.json`, or no argument to write to stdout")
    path = Path(name).expanduser()
    if path.is_dir():
        raise NeoError(f"{name} is a directory", f"name a file in it, e.g. `git neo export {path / 'facts.json'}`")
    if not path.parent.is_dir():
        raise NeoError(f"cannot export to {name}: the folder {path.parent} does not exist",
                       f"create it first (`mkdir -p {path.parent}`), or pick an existing folder")
    return path


def cmd_export(args: argparse.Namespace) -> int:
    """Write facts as a Neo v2.0 file (stdout by default)."""
    from neo_git.fileio import atomic_write
    from neo_git.store import FactStore
    from neo_git.transfer import export_envelope

    target = None if args.file == "-" else export_target(args.file)
    envelope = export_envelope(FactStore.open(), scope=args.scope, include_invalid=args.all)
    carried = envelope.pop("carried", 0)
    text = json.dumps(envelope, indent=2, ensure_ascii=False) + "\n"
    if target is None:
        sys.stdout.write(text)
    elif target.exists() and not target.is_file():
        # A device or a pipe (`/dev/stdout`, a FIFO): write through it. Replacing it atomically
        # would put a regular file where the device was (as root, even in /dev).
        with open(target, "wb") as handle:
            handle.write(text.encode("utf-8"))
    else:
        atomic_write(target, text.encode("utf-8"))
        print(f"wrote {len(envelope['facts'])} facts to {args.file}"
              + (f" (with {carried} retired fact(s) they point at)" if carried else ""), file=sys.stderr)
    return 0
