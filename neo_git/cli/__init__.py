"""`git neo` command line: parse, call one library function, print.

Exit codes: 0 ok, 1 the user can fix it (``fatal:`` + ``hint:``), 2 usage,
3 a bug (traceback saved under ``.git/neo/``), 130 interrupted.
"""
from __future__ import annotations

import gc
import importlib
import os
import sys

TYPE_CHECKING = False   # not `typing`'s: an agent hook process starts here, and typing costs it ~3 ms
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run `git neo` with *argv* (without the program name); return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) >= 2 and argv[0] == "hook" and not argv[1].startswith("-"):
        # Hooks run on every commit and every agent prompt: skip building the whole parser
        # (importing every command module) for the one command that never needs it.
        from neo_git.cli.hook import run_hook

        return run_hook(argv[1], argv[2:])
    # The parser imports every command group's small module and neo_git.facts (~15 ms):
    # only commands that are not hooks pay for it.
    import neo_git.citations  # noqa: F401 - registers the feature's cite resolver with the store (neo_git/citing.py)
    from neo_git.cli.parser import build_parser, command_in

    parser, commands = build_parser(command_in(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: -h exits 0, bad usage exits 2
        return int(exc.code or 0)
    if args.version:
        try:
            return _version()
        except BrokenPipeError:   # `git neo --version | head -1`: the reader left after one line
            return _reader_left()
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "help":
        return _help(parser, commands, args.topic)
    if args.chdir:
        try:
            os.chdir(args.chdir)
        except OSError as exc:
            return _fatal(f"cannot change to '{args.chdir}': {exc.strerror}",
                          "-C takes an existing directory, like `git -C`")

    from neo_git.config import retired_notices
    from neo_git.errors import NeoError

    for notice in retired_notices():   # once per command: a setting this release no longer reads
        print(notice, file=sys.stderr)
    module_name, func_name = commands[args.command].split(":")
    try:
        module = importlib.import_module(f"neo_git.cli.{module_name}")
        return int(getattr(module, func_name)(args) or 0)
    except NeoError as exc:
        return _fatal(exc.message, exc.hint)
    except OSError as exc:  # the machine, not us: a read-only folder, a full disk, a folder in the way
        if isinstance(exc, BrokenPipeError):
            return _reader_left()
        from neo_git.errors import os_error

        error = os_error(exc)
        return _fatal(error.message, error.hint)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception:  # noqa: BLE001 - every other exception is a bug: save it, exit 3
        from neo_git.cli.crash import report_bug

        return report_bug(argv)


def _reader_left() -> int:
    """`git neo list | head`: the reader left; not an error worth a traceback. stdout is pointed
    at /dev/null so that the flush at exit does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):   # not a real file descriptor (a test's captured stdout)
        pass
    return 0


def _fatal(message: str, hint: str | None) -> int:
    from neo_git.cli.output import visible  # messages can quote a teammate's text

    print(f"fatal: {visible(message)}", file=sys.stderr)
    if hint:
        print(f"hint: {visible(hint)}", file=sys.stderr)
    return 1


def _help(parser, commands: dict[str, str], topic: str | None) -> int:
    if topic is None:
        parser.print_help()
        return 0
    if topic not in commands:
        return _fatal(f"no such command '{topic}'", "`git neo help` lists the commands")
    try:
        parser.parse_args([topic, "-h"])  # argparse prints the command's help and exits
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _version() -> int:
    """`git neo --version`: the version, the embedder recall would use here, and the install."""
    from neo_git import __version__
    from neo_git.errors import NeoError

    print(f"git-neo version {__version__}")
    try:
        from neo_git import embed
        from neo_git.embed.status import config_source

        configured = embed.configured_name()
        name, why = (configured, f"set by {config_source()}") if configured not in ("", "auto") \
            else embed.auto_choice()
        print(f"embedder: {embed.get_embedder(name).id} ({why})")
    except NeoError as exc:
        print(f"embedder: unusable: {exc.message}")
    from neo_git.extras import install_source

    where, editable = install_source()
    print(f"python: {sys.executable}" + (f"; installed from {where}{' (editable)' if editable else ''}" if where else ""))
    return 0


def run() -> None:  # console-script entry point
    """Entry point of the `git-neo` executable."""
    # BLAS threading is decided in one place, `neo_git/__init__.py`, already imported here.
    # A command allocates a few hundred thousand containers (imports, then thousands of facts)
    # and frees few: with the default threshold (700) the cyclic GC runs ~70 times in a cold
    # recall and walks the same live objects again and again (~10 ms at 5,000 facts). Collect
    # 100 times less often; a long-running command (the MCP server) still collects.
    gc.set_threshold(100_000, *gc.get_threshold()[1:])
    if sys.argv[1:3] == ["hook", "agent"] and "finish-detached" not in sys.argv[3:]:
        # What an agent spawns, twenty at a time: the small process that asks the agent's MCP
        # server (or a child it forks) and always exits 0 within the limit, counted from its spawn.
        from neo_git.agents.hook_process import run_hook_process

        run_hook_process(sys.argv[3:])
    exit_now(main())


def exit_now(code: int) -> None:
    """End the process without tearing the interpreter down.

    Python's shutdown frees every module and object one by one after a last full collection:
    ~55 ms after a cold recall at 5,000 facts (numpy, pygit2 and the facts), more than the
    recall's own work. By the time a command returns, everything git-neo writes is closed
    (files are replaced atomically inside `with` blocks; the workers it starts are processes
    of their own), so only stdout and stderr are flushed here. While another non-daemon
    thread runs, the normal exit waits for it instead."""
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.current_thread()):
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the reader left (a broken pipe) or the stream was closed
            pass
    os._exit(code)
