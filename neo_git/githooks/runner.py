"""`git neo hook <name> [args…]`: the work the installed shims (and the pre-commit
framework) hand off. Every entry here returns 0 whatever goes wrong — a hook must
never fail a git command — except the pre-commit guard's deliberate block.

    post-commit [COMMIT]                 process COMMIT (default HEAD)
    post-merge  [SQUASH [HEAD [ORIG]]]   process ORIG_HEAD..HEAD (at most MAX_MERGED commits)
    post-rewrite KIND [MAPFILE]          amend/rebase: "old new" lines from MAPFILE (or stdin)
    pre-commit [--block-exit N]          the guard; exits N (default 1) to block the commit
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from neo_git.githooks.limit import SETTING, limit_ms, usable

# logging, subprocess, traceback and the hook log are imported where they are used: the pre-commit
# guard runs on every commit that stages source code and needs none of them.
MAX_MERGED = 50


def run_git_hook(name: str, args: Sequence[str]) -> int:
    """Run the named hook's work; 0 unless the pre-commit guard blocks."""
    if os.environ.get("NEO_DISABLE") == "1":
        return 0
    handler = HANDLERS.get(name)
    if handler is None:
        print(f"git-neo: unknown hook '{name}' (known: {', '.join(HANDLERS)}); nothing done", file=sys.stderr)
        return 0
    if name != "pre-commit":
        import logging

        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    try:
        return handler(list(args))
    except KeyboardInterrupt:
        return 0
    except Exception:  # noqa: BLE001 - logged to hook.log by the shim's redirection; git never sees it
        import traceback

        print(f"git-neo hook {name}: internal error (git was not affected)", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return 0


def _stamp(name: str, detail: str) -> None:
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {name} {detail}", file=sys.stderr)


def _repo():
    from neo_git.identity import open_repository

    return open_repository()


def sequence_in_progress(repo) -> str | None:
    """The name of a running rebase/cherry-pick/revert sequence, else None."""
    git_dir = Path(repo.path)
    for name in ("rebase-merge", "rebase-apply", "sequencer"):
        if (git_dir / name).is_dir():
            return name
    return None


def _report(name: str, results) -> None:
    for r in results:
        if r.skipped:
            _stamp(name, f"{r.commit[:12]}: skipped ({r.skipped})")
        elif r.errors:
            _stamp(name, f"{r.commit[:12]}: not processed, will retry with the next commit: {'; '.join(r.errors)}")
        else:
            verdicts = [x.get("verdict") for x in r.records if x.get("type") == "outcome"]
            _stamp(name, f"{r.commit[:12]}: {len(verdicts)} outcome(s) {verdicts}")


def _neo_dir() -> Path:
    """`.git/neo` of this repository: from the shim ($NEO_DIR, no pygit2 import needed for a
    hook run that only queues its work), else discovered."""
    named = os.environ.get("NEO_DIR")
    if named:
        return Path(os.path.abspath(named))
    from neo_git.identity import repository_paths

    return repository_paths(_repo()).neo_dir


def queue_and_drain(item: dict) -> None:
    """Queue *item*, then process the queue unless another worker is already doing so."""
    from neo_git.hooklog import rotate_hook_log
    from neo_git.outcomes.queue import drain, enqueue

    neo_dir = _neo_dir()
    rotate_hook_log(neo_dir / "hook.log")
    adopt_missed(neo_dir)
    enqueue(neo_dir, item)
    wait = 300.0 if os.environ.get("NEO_HOOK_SYNC") == "1" else 0.0   # tests: run now, in order
    drain(neo_dir, _process_items, wait=wait)


def adopt_missed(neo_dir: Path) -> int:
    """Queue the hook runs the shims recorded while git-neo was not on their PATH (before this
    run's own work: they happened first); returns how many were recorded."""
    from neo_git.githooks.missed import catch_up_items, take_missed
    from neo_git.outcomes.queue import enqueue

    runs = take_missed(neo_dir)
    if not runs:
        return 0
    for item in catch_up_items(neo_dir, runs):
        enqueue(neo_dir, item)
    _stamp("catch-up", f"{len(runs)} hook run(s) made while git-neo was not on the hooks' PATH "
                       f"(the last saw PATH={runs[-1].path}); processing them now")
    return len(runs)


def catch_up(neo_dir: Path) -> int:
    """Process the recorded missed hook runs now, in this process (`git neo doctor --fix`)."""
    from neo_git.outcomes.queue import drain

    count = adopt_missed(neo_dir)
    if count:
        drain(neo_dir, _process_items, wait=300.0)
    return count


def _process_items(items: list[dict]) -> None:
    """Run queued work in order (the caller holds the processing lock)."""
    from neo_git.outcomes.processing import process_commits
    from neo_git.outcomes.rewrites import apply_rewrites

    repo = _repo()
    for item in items:
        op = item.get("op")
        try:
            if op == "commits":
                commits = [c for c in item.get("commits") or [] if isinstance(c, str)]
                trigger = str(item.get("trigger") or "post-commit")
                _report(trigger, process_commits(repo, commits, trigger=trigger,
                                                 catch_up=bool(item.get("catch_up", True)), hold_lock=False))
            elif op == "range":   # a post-merge recorded while git-neo was unreachable
                commits = merged_commits(repo, str(item.get("head") or ""), item.get("orig"))
                _report("post-merge", process_commits(repo, commits, trigger="post-merge", catch_up=False,
                                                      hold_lock=False))
            elif op == "rewrite":
                kind = str(item.get("kind") or "rebase")
                pairs = [tuple(p) for p in item.get("pairs") or [] if isinstance(p, list) and len(p) == 2]
                _stamp(f"post-rewrite {kind}", f"{len(pairs)} rewritten commit(s)")
                _report(f"post-rewrite {kind}", apply_rewrites(repo, pairs, kind=kind, hold_lock=False))
        except Exception:  # noqa: BLE001 - one bad item must not stop the rest of the queue
            import traceback

            print(f"git-neo: internal error processing {op}:", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)


def post_commit(args: list[str]) -> int:
    """Queue the new commit (the shim passes its id, read from git's files; else HEAD) and
    process the queue."""
    if args and _is_hex(args[0]):
        commit = args[0]
    else:   # the shim could not read HEAD's id from git's files (a packed ref): look it up
        repo = _repo()
        if sequence_in_progress(repo) or repo.head_is_unborn:
            return 0   # post-rewrite handles a rebase once
        commit = str(repo.head.target)
    queue_and_drain({"op": "commits", "trigger": "post-commit", "commits": [commit], "catch_up": True})
    return 0


def post_merge(args: list[str]) -> int:
    """Queue the commits a merge or pull brought in: ORIG_HEAD..HEAD, oldest first."""
    if args and args[0] == "1":
        return 0   # a squash merge made no commit yet; post-commit sees it later
    repo = _repo()
    head = args[1] if len(args) > 1 and _is_hex(args[1]) else str(repo.head.target)
    # the shim passes what `git rev-parse ORIG_HEAD` printed: the name itself when it is missing
    orig = args[2] if len(args) > 2 and _is_hex(args[2]) else None
    if orig is None:
        try:
            orig = str(repo.revparse_single("ORIG_HEAD").id)
        except (KeyError, ValueError):
            orig = None
    commits = merged_commits(repo, head, orig)
    queue_and_drain({"op": "commits", "trigger": "post-merge", "commits": commits, "catch_up": False})
    return 0


def merged_commits(repo, head: str, orig: str | None) -> list[str]:
    """The commits a merge brought in: orig..head, oldest first (at most MAX_MERGED)."""
    import pygit2

    if not _is_hex(head):
        return []
    try:
        walker = repo.walk(pygit2.Oid(hex=head), pygit2.enums.SortMode.TOPOLOGICAL)
        if orig and _is_hex(orig):
            walker.hide(pygit2.Oid(hex=orig))
        commits = []
        for commit in walker:
            commits.append(str(commit.id))
            if len(commits) >= MAX_MERGED:
                break
    except (KeyError, ValueError, pygit2.GitError):
        return []
    commits.reverse()
    return commits


def _is_hex(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def post_rewrite(args: list[str]) -> int:
    """Queue the "old new" pairs (from the map file the shim saved, or stdin)."""
    from neo_git.outcomes.rewrites import parse_rewrite_map

    kind = args[0] if args else "rebase"
    if len(args) > 1:
        path = Path(args[1])
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        finally:
            path.unlink(missing_ok=True)
    else:
        text = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    pairs = parse_rewrite_map(text)
    if pairs:
        queue_and_drain({"op": "rewrite", "kind": kind, "pairs": [list(p) for p in pairs]})
    return 0


class GuardTimeout(BaseException):
    """The guard ran out of time (a BaseException: no `except Exception` on the way may swallow it)."""


def pre_commit(args: list[str]) -> int:
    """The guard: exit the block code when the staged change introduces a problem.

    `--block-exit N`: the code that blocks (the shim uses 86, so that a crash never
    blocks). `--timeout-ms N`: the limit the caller decided and enforces (`githooks/limit.py`);
    without it the setting is read here, by the same rule. The check gives up a little before the limit,
    warns and lets the commit through (blocks with neo.strict); should the interpreter
    itself hang, faulthandler ends the process a second after the limit."""
    from neo_git.config import config_bool

    started = time.monotonic()
    options = _options(args)
    block = options.get("--block-exit", 1)
    limit_ms = options.get("--timeout-ms")
    _arm(started, limit_ms)
    trace = _tracer("pre-commit: guard")
    repo = None
    try:
        from neo_git.githooks.guard import check_commit, format_result

        if limit_ms is None:   # not given by a shim: the setting, read as git reads it
            limit_ms = _configured_timeout(None)
            _arm(started, limit_ms)
        trace("modules imported")
        result, repo, kept = check_commit(trace)
        _disarm()
        trace(f"done: {'ok' if result.ok else 'blocks'}")
    except GuardTimeout:
        _disarm()
        strict = _strict(repo, config_bool)
        print(f"git-neo guard: no answer within {usable(limit_ms)} ms ({SETTING}), "
              f"{'blocking (neo.strict=true)' if strict else 'commit allowed'}", file=sys.stderr)
        return block if strict else 0
    except Exception as exc:  # noqa: BLE001 - internal errors warn and pass unless neo.strict
        _disarm()
        strict = _strict(repo, config_bool)
        print(f"git-neo guard: internal error, {'blocking (neo.strict=true)' if strict else 'commit allowed'}: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return block if strict else 0
    if not result.ok:
        print(format_result(result), file=sys.stderr)
    # What the scans measured is kept for the next guard when nothing else will store it: HEAD's
    # state when it had to be derived, or this change's results when the commit is blocked (no
    # post-commit worker follows) — written once git no longer waits for this process.
    if kept is not None and (kept.states or (kept.rows and not result.ok)):
        trace(f"answered; {len(kept.rows)} result(s) and {len(kept.states)} state(s) written in the background")
        _after_answer(kept.write)
    return 0 if result.ok else block


def _after_answer(work: Callable[[], None]) -> None:
    """Run *work* in a detached grandchild (its own session, stdin/stdout/stderr on /dev/null, no
    other descriptor kept, niced), so that neither git nor a caller reading its output waits for
    it; a failure there is nobody's problem. NEO_HOOK_SYNC=1 (tests): now, in this process."""
    if os.environ.get("NEO_HOOK_SYNC") == "1":
        work()
        return
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        child = os.fork()
    except OSError:
        return
    if child:
        os.waitpid(child, 0)   # it only forks again: no zombie is left behind
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 1 << 16)
        os.nice(10)
        work()
    except BaseException:  # noqa: BLE001 - detached: there is no one to tell
        pass
    finally:
        os._exit(0)


_GRACE = 0.9    # the check gives up at 90 % of the limit, before the shim's own timer fires


def _tracer(prefix: str) -> Callable[[str], None]:
    """With NEO_HOOK_TRACE=FILE, a function appending "<prefix>: <step> at N ms (CPU M ms)" to FILE:
    milliseconds since this process started (wall and CPU, interpreter start included, as
    far as the platform tells), to see where a hook's time goes. Else one that does nothing."""
    path = os.environ.get("NEO_HOOK_TRACE")
    if not path:
        return lambda step: None
    born = _process_start()

    def trace(step: str) -> None:
        try:
            with open(path, "a", encoding="utf-8") as out:
                out.write(f"{prefix}: {step} at {(time.time() - born) * 1000:.0f} ms "
                          f"(CPU {time.process_time() * 1000:.0f} ms)\n")
        except OSError:
            pass
    return trace


def _process_start() -> float:
    """When this process started (epoch seconds): /proc on Linux, else now."""
    try:
        with open("/proc/self/stat", "rb") as stat, open("/proc/uptime", "rb") as uptime:
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])
            up = float(uptime.read().split()[0])
        return time.time() - up + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.time()


def _options(args: list[str]) -> dict[str, int]:
    """`--name N` pairs with a whole number N; anything else is ignored (a hook never fails on usage)."""
    found: dict[str, int] = {}
    for name, value in zip(args, args[1:]):
        if name.startswith("--") and value.isdigit():
            found[name] = int(value)
    return found


def _configured_timeout(repo) -> int:
    """neo.guardTimeoutMs as the repository's config holds it (`-c` included), by `limit.limit_ms`'s rule."""
    from neo_git.config import neo_config

    raw: object = neo_config(SETTING, repo=repo)
    return limit_ms(raw if isinstance(raw, str) else None if raw is None else str(raw))


def _arm(started: float, limit_ms: int | None) -> None:
    """Raise GuardTimeout in the main thread at 90 % of the limit (counted from *started*), and
    end the process outright one second past it if Python cannot even run the handler."""
    import faulthandler
    import signal

    if not hasattr(signal, "setitimer"):
        return
    limit = usable(limit_ms) / 1000
    remaining = max(0.001, limit * _GRACE - (time.monotonic() - started))

    def give_up(signum, frame):
        raise GuardTimeout()

    signal.signal(signal.SIGALRM, give_up)
    signal.setitimer(signal.ITIMER_REAL, remaining)
    faulthandler.dump_traceback_later(limit + 1, exit=True)


def _disarm() -> None:
    import faulthandler
    import signal

    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()


def _strict(repo, config_bool: Callable) -> bool:
    try:
        return bool(config_bool("strict", False, repo=repo))
    except Exception:  # noqa: BLE001
        return False


HANDLERS: dict[str, Callable[[list[str]], int]] = {
    "post-commit": post_commit,
    "post-merge": post_merge,
    "post-rewrite": post_rewrite,
    "pre-commit": pre_commit,
}
