"""The warm process: a neural embedder loaded once for the agent hooks, not once per prompt.

A hook process lives for one prompt. With a neural embedder configured, the forked child that
answers when no `git neo mcp` server runs (`hook_process._ask_child`) would import onnxruntime
and load the model on every prompt: about a second of CPU, most of the 1.5 s limit. So that
child, when it finds nothing warm, starts this process (detached, in its own session, never
waited for) and answers its own prompt with the built-in embedder meanwhile (same recall, same
relevance decision, over the built-in embedder's vectors). This process opens the store, loads
the model and every fact's vector by two recalls (no access recorded), then listens on
`.git/neo/agent.sock` exactly as the MCP server does (`hook_socket.serve_hooks`): later hooks
are answered there, by the same `HookContext.handle` an in-process hook runs. It stops when no
hook has asked for `neo.agentWarmIdleSeconds` (default 600), when its socket is taken or
removed, when the repository is gone, or when the embedder or `neo.agentWarm` setting changes.

`neo.agentWarm`: `auto` (default: only with a neural embedder, where it pays for itself), `true`
(any embedder: a hook answered by a warm process costs ~25 ms of CPU instead of ~250 ms), `false`
(never: each hook's child loads what it needs).

One warm process per clone: `.git/neo/warm.lock` (an flock held for its life; the file holds its
pid) is taken before anything heavy is imported, so twenty hooks starting at once start one.
Run as `python -m neo_git.agents.warm <folder of the repository>`.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from pathlib import Path

LOCK_NAME = "warm.lock"
WARM_SETTING = "agentWarm"
IDLE_SETTING = "agentWarmIdleSeconds"
DEFAULT_IDLE_SECONDS = 600
POLL_SECONDS = 1.0
RETRY_SECONDS = 300   # after a warm process failed to start, hooks wait this long before starting another
FAILED = b"failed"
WARM_QUERY = "warm up: which facts matter here?"
_ON, _OFF = {"1", "true", "yes", "on", "always"}, {"0", "false", "no", "off", "never"}


def embedder_choice(repo) -> str:
    """The embedder name hooks would use in *repo* ("auto" resolved to what it picks)."""
    from neo_git import embed

    name = embed.configured_name(repo).strip()
    return embed.auto_choice()[0] if name in ("", "auto") else name


def is_neural(name: str) -> bool:
    """Is the embedder *name* (as `embedder_choice` gives it) a model to load, not the built-in one?"""
    return name.partition(":")[0].strip().lower() != "hash"


def wanted(repo, choice: str | None = None) -> bool:
    """Should hooks in *repo* be answered by a warm process (`neo.agentWarm`, see the module doc)?"""
    from neo_git.config import neo_config

    setting = str(neo_config(WARM_SETTING, "auto", repo=repo, cast=str)).strip().lower()
    if setting in _ON:
        return True
    if setting in _OFF:
        return False
    return is_neural(choice if choice is not None else embedder_choice(repo))


def running(neo_dir) -> bool:
    """Does a warm process hold this clone's lock (starting up, or serving)?"""
    try:
        fd = os.open(os.path.join(os.fspath(neo_dir), LOCK_NAME), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def failed_recently(neo_dir) -> bool:
    """Did the last warm process of this clone fail to start less than RETRY_SECONDS ago? (Then
    hooks do not start another one for every prompt: each would spend a second failing again.)"""
    try:
        path = os.path.join(os.fspath(neo_dir), LOCK_NAME)
        with open(path, "rb") as handle:
            failed = handle.read(16).startswith(FAILED)
        return failed and time.time() - os.stat(path).st_mtime < RETRY_SECONDS
    except OSError:
        return False


def warm_up_elsewhere(repo, paths, event: str) -> str | None:
    """In a hook's own process (nothing warm answered it): start the warm process when *repo*
    wants one and none runs (nor failed to start in the last RETRY_SECONDS). Returns the embedder
    this process should answer with: "hash" when the configured one is a model to load (the warm
    process loads it instead), else None (the configured one). Never raises, never waits."""
    try:
        choice = embedder_choice(repo)
        if not wanted(repo, choice):
            return None
        if not running(paths.neo_dir) and not failed_recently(paths.neo_dir):
            start(paths)
        return "hash" if is_neural(choice) else None
    except Exception as exc:  # noqa: BLE001 - the hook answers as before
        from neo_git.hooklog import append_hook_log

        append_hook_log(paths.neo_dir, f"agent hook: could not start the warm process: {type(exc).__name__}: {exc}")
        return None


def start(paths) -> None:
    """Start the warm process for the repository of *paths*: detached (its own session, no
    terminal, stdio on /dev/null, no inherited descriptors), never waited for."""
    import subprocess

    import neo_git

    # Run from the folder holding this very `neo_git` (first on `-m`'s path): the warm process
    # runs the hook's own code, whether installed, editable, or a checkout on PYTHONPATH.
    here = os.path.dirname(os.path.dirname(os.path.abspath(neo_git.__file__)))
    subprocess.Popen([sys.executable, "-m", "neo_git.agents.warm", str(paths.workdir or paths.git_dir)],
                     cwd=here, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True)


def pid_of(neo_dir) -> int | None:
    """The pid of the warm process serving this clone, or None when none runs."""
    if not running(neo_dir):
        return None
    try:
        with open(os.path.join(os.fspath(neo_dir), LOCK_NAME), "rb") as handle:
            return int(handle.read(32).strip() or b"0") or None
    except (OSError, ValueError):
        return None


def stop(neo_dir, wait: float = 5.0) -> bool:
    """Stop the warm process of this clone (SIGTERM; its socket is removed as it ends). True
    when one was running and has ended within *wait* seconds."""
    import signal

    pid = pid_of(neo_dir)
    if pid is None:
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    ends = time.monotonic() + wait
    while time.monotonic() < ends:
        if not running(neo_dir):
            return True
        time.sleep(0.05)
    return False


# --- the process ------------------------------------------------------------------


def main(argv: list[str]) -> int:
    """Serve the agent hooks of the repository at argv[0] until idle; exit 0 whatever happens."""
    from neo_git.agents.gitdir import GitPlace, find_git_place

    if len(argv) != 1:
        print("usage: python -m neo_git.agents.warm <folder of the repository>", file=sys.stderr)
        return 2
    place = find_git_place(argv[0])
    if not isinstance(place, GitPlace):
        return 0
    neo_dir = place.neo_dir
    try:
        os.makedirs(neo_dir, exist_ok=True)
        lock = os.open(os.path.join(neo_dir, LOCK_NAME), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return 0   # not a folder this process can write
    if not _take(lock):
        return 0   # another warm process is starting or serving
    from neo_git.agents.hook_socket import listening, socket_path

    if listening(socket_path(neo_dir)):
        return 0   # the agent's MCP server answers the hooks here
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())
    import signal

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))   # runs the `finally`s: the socket goes
    try:
        _serve(argv[0], neo_dir)
    except SystemExit:
        pass
    except BaseException as exc:  # noqa: BLE001 - a warm process never shows a traceback to anyone
        from neo_git.hooklog import append_hook_log

        with contextlib.suppress(OSError):   # hooks answer without it for RETRY_SECONDS (`failed_recently`)
            os.ftruncate(lock, 0)
            os.pwrite(lock, FAILED + f" {os.getpid()}\n".encode(), 0)
        message = getattr(exc, "message", None) or str(exc)
        append_hook_log(Path(neo_dir), f"warm process {os.getpid()} failed: {type(exc).__name__}: {message}; "
                                       f"hooks answer with the built-in embedder for {RETRY_SECONDS} s")
    return 0


def _take(lock: int) -> bool:
    """The warm lock, exclusively. A hook checking `running` holds it shared for a moment, so a
    refusal is retried for 0.2 s; another warm process holds it for good."""
    ends = time.monotonic() + 0.2
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() >= ends:
                return False
            time.sleep(0.01)


def _serve(where: str, neo_dir) -> None:
    import threading

    from neo_git.agents.hook_answer import ServedStore, other_worktrees
    from neo_git.agents.hook_socket import serve_hooks, socket_path
    from neo_git.config import config_int
    from neo_git.hooklog import append_hook_log
    from neo_git.identity import open_repository
    from neo_git.store import FactStore

    neo_dir = Path(neo_dir)
    store = FactStore(open_repository(where))
    choice = embedder_choice(store.repo)
    if hasattr(store.embedder, "threads"):   # one query at a time (hooks take the served lock): one thread
        store.embedder.threads = 1
    idle = config_int(IDLE_SETTING, DEFAULT_IDLE_SECONDS, repo=store.repo)
    started = time.monotonic()
    warm_store(store)
    ended: list[str] = []

    def refuse() -> str | None:
        if not ended:
            if embedder_choice(store.repo) != choice:
                ended.append("the embedder setting changed")
            elif not wanted(store.repo):
                ended.append(f"neo.{WARM_SETTING} is off")
        return f"{ended[0]}: this warm process is stopping" if ended else None

    lock = threading.Lock()
    served = ServedStore(store, lock, last_used=time.monotonic(), refuse=refuse,
                         worktrees=other_worktrees(store))
    stop = serve_hooks(neo_dir, served, report=lambda why: append_hook_log(neo_dir, f"warm process: {why}"))
    if stop is None:
        return
    path = socket_path(neo_dir)
    mine = path.stat().st_ino
    append_hook_log(neo_dir, f"warm process {os.getpid()}: serving the agent hooks with {store.embedder.id} "
                             f"(ready {time.monotonic() - started:.1f} s after start; stops after {idle} s idle)")
    try:
        if is_neural(choice):
            # The built-in embedder's vectors, for the hooks answered while a later warm process
            # starts (its own repository object: the served one belongs to the hook threads).
            warm_store(FactStore(open_repository(where), embedder="hash"))
        reason = ""
        while not reason:
            time.sleep(POLL_SECONDS)
            reason = _why_stop(path, mine, served, idle) or (ended[0] if ended else "")
        append_hook_log(neo_dir, f"warm process {os.getpid()}: stopping ({reason})")
    finally:
        stop()


def _why_stop(path, inode: int, served, idle: int) -> str:
    """Why the warm process should stop now ("" to go on)."""
    try:
        if path.stat().st_ino != inode:
            return "its socket was replaced"
    except OSError:
        return "its socket or repository is gone"
    if time.monotonic() - served.last_used >= idle:
        return f"no hook for {idle} s"
    return ""


def warm_store(store) -> None:
    """Load *store*'s embedder, facts and vectors by two recalls (the first streams the vector
    file, the second keeps the rows), recording no access: nobody asked anything."""
    from neo_git.store.access import AccessLog

    real = store.access
    store.access = AccessLog(None)
    try:
        store.recall(WARM_QUERY)
        store.recall(WARM_QUERY)
    finally:
        store.access = real


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
