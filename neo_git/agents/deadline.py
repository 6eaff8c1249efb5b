"""The agent hooks' hard time limit, counted from the moment the agent spawned the process.

Twenty hooks started at once on a two-core machine spend most of a 1.5 s budget starting
Python and importing; a limit armed after the imports is already too late. So the console
entry point arms SIGALRM first thing (`arm_at_start`, before any heavy import) for what is
left of the budget since the process started (`/proc/self/stat`); if it fires before the
hook code has taken over, the process writes one line to the hook log and exits 0 with no
output at once. `run_agent_hook` then re-arms the same deadline with its own handler.
Kept free of imports beyond the standard library: it runs before everything else.
"""
from __future__ import annotations

import os
import signal
import time

DEFAULT_TIMEOUT_MS = 1500
_deadline: float | None = None   # time.monotonic() by which the hook must have finished


def process_age() -> float:
    """Seconds since this process started (0 where the system does not say)."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")   # field 22: start time, ticks after boot
        with open("/proc/uptime", "rb") as uptime:
            now = float(uptime.read().split()[0])
        return max(0.0, now - started)
    except (OSError, ValueError, IndexError):
        return 0.0


def limit_ms() -> int:
    """The limit from `NEO_AGENT_HOOK_TIMEOUT_MS` (git config's `neo.agentHookTimeoutMs` needs the
    repository, so it is applied later, by the hook itself)."""
    try:
        return max(50, int(os.environ.get("NEO_AGENT_HOOK_TIMEOUT_MS") or DEFAULT_TIMEOUT_MS))
    except ValueError:
        return DEFAULT_TIMEOUT_MS


BACKSTOP_SECONDS = 0.2   # after the deadline, faulthandler's watchdog ends a process stuck in C
_backstop_file = None


def arm_at_start() -> None:
    """Arm the hard limit for this process (the console entry point of `git neo hook agent`).

    Three stages. SIGALRM at the deadline runs `expire` (one log line, exit 0): but Python runs a
    signal handler only between bytecodes, and a C call under CPU contention (libgit2 opening
    the repository, an extension module's initialisation) can hold the main thread for most of
    a second past it. A daemon thread runs `expire` too, 50 ms later: it gets the GIL whenever
    that C call released it. Last, `faulthandler.dump_traceback_later` — a C thread that needs
    no GIL — ends the process BACKSTOP_SECONDS after the deadline, writing where it was stuck
    into the hook log, with exit status 1 (agents treat it as a non-blocking hook error)."""
    global _deadline, _backstop_file
    _deadline = time.monotonic() - process_age() + limit_ms() / 1000
    signal.signal(signal.SIGALRM, _expired_early)
    left = _deadline - time.monotonic()
    if left <= 0:
        _expired_early(signal.SIGALRM, None)
    signal.setitimer(signal.ITIMER_REAL, left)
    _start_watchdog(left)
    try:
        import faulthandler

        folder = os.path.join(".git", "neo")
        _backstop_file = open(os.path.join(folder, "hook.log") if os.path.isdir(folder) else os.devnull,
                              "a", encoding="utf-8")
        faulthandler.dump_traceback_later(left + BACKSTOP_SECONDS, exit=True, file=_backstop_file)
    except (OSError, ValueError, RuntimeError):
        pass   # no backstop: the signal alone


def _start_watchdog(left: float) -> None:
    import threading

    def watch() -> None:
        time.sleep(max(0.0, left) + 0.05)
        expire(None, "(watchdog)")

    threading.Thread(target=watch, name="neo-hook-deadline", daemon=True).start()


def deadline() -> float | None:
    """The monotonic time this hook must be done by (None when not armed at start)."""
    return _deadline


def _expired_early(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    expire(None, "while starting")


def expire(neo_dir=None, when: str = "") -> None:
    """Out of time: one fixed line in the hook log (*neo_dir*, else `.git/neo` of the current
    folder if there is one: no repository lookup, no redaction, there is no time), then exit 0
    with no output."""
    try:
        folder = str(neo_dir) if neo_dir is not None else os.path.join(".git", "neo")
        if os.path.isdir(folder):
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            with open(os.path.join(folder, "hook.log"), "a", encoding="utf-8") as handle:
                handle.write(f"{stamp} [{os.getpid()}] agent hook: stopped at the time limit "
                             f"({limit_ms()} ms, {process_age():.2f} s after start){' ' + when if when else ''}; "
                             "no output\n")
    finally:
        os._exit(0)
