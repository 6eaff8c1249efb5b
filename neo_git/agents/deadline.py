"""The agent hooks' hard time limit, counted from the moment the agent spawned the process.

Twenty hooks started at once on a two-core machine spend a good part of a 1.5 s budget
starting Python; a limit counted from after the imports is already too late. So the hook
process (`agents/hook_process.py`) takes the process's age from `/proc/self/stat` first
thing and arms SIGALRM for what is left of the budget. The process that holds the agent's
pipes never does heavy work itself (that happens in the agent's MCP server, or in a forked
child it can kill), so it runs only Python bytecode and short system calls, where a signal
handler runs at once: on expiry it writes one fixed line to the hook log and exits 0 with no
output. Kept free of imports beyond the standard library: it runs before everything else.
"""
from __future__ import annotations

import os
import signal
import time

DEFAULT_TIMEOUT_MS = 1500
LIMIT_ENV = "NEO_AGENT_HOOK_TIMEOUT_MS"
# The hook gives up this long before its limit: waking up on a loaded machine, writing the log
# line, ending the process (and its child) and the agent seeing it end take tens of ms.
EXIT_MARGIN = 0.1


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


CONFIG_KEY = "neo.agentHookTimeoutMs"
MAX_LIMIT_MS = 600_000   # ten minutes: the longest limit a setting may ask for (agents kill hooks sooner)
CONFIG_WAIT = 0.3        # seconds `git config` may take before the hook keeps the limit it has


def configured_limit_ms(cwd: str, neo_dir: str | os.PathLike | None, current: int) -> int:
    """The repository's `neo.agentHookTimeoutMs`, read by the hook process itself with `git config`
    (git layers the files, includes, `-c` and `GIT_CONFIG_*`), then `agentHookTimeoutMs` in
    `$NEO_HOME/config.json`; *current* when neither says, or when git is missing or slow.
    Never taken from whoever answers the hook: a listener on the socket cannot stretch it.
    A value that is not a whole number of ms in [50, MAX_LIMIT_MS] is logged and ignored."""
    raw = _git_config(cwd, CONFIG_KEY)
    if raw is None:
        raw = _neo_home_setting(CONFIG_KEY[4:])
    if raw is None:
        return current
    try:
        text = str(raw).strip().lower()
        scale = {"k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}.get(text[-1:], 1)   # git's int suffixes
        value = int(text[:-1] if scale > 1 else text) * scale
    except (TypeError, ValueError):
        value = None
    if value is None or not 50 <= value <= MAX_LIMIT_MS:
        log_line(neo_dir, f"{CONFIG_KEY} is not a whole number of ms from 50 to {MAX_LIMIT_MS:,}; "
                          f"the hook keeps its limit of {current} ms")
        return current
    return value


def _git_config(cwd: str, key: str) -> str | None:
    """`git -C cwd config --get key`, or None (unset, git missing, or slower than CONFIG_WAIT)."""
    import select

    try:
        out, pipe_in = os.pipe()
        into: int | None = pipe_in
    except OSError:
        return None
    pid = None
    try:
        actions = [(os.POSIX_SPAWN_CLOSE, out), (os.POSIX_SPAWN_DUP2, pipe_in, 1),
                   (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
        pid = os.posix_spawnp("git", ["git", "-C", cwd, "config", "--get", key], os.environ,
                              file_actions=actions)
        os.close(pipe_in)
        into = None
        chunks, ends = [], time.monotonic() + CONFIG_WAIT
        while True:
            ready, _, _ = select.select([out], [], [], max(0.0, ends - time.monotonic()))
            if not ready:
                return None
            chunk = os.read(out, 4096)
            if not chunk:
                break
            chunks.append(chunk)
            if sum(map(len, chunks)) > 4096:
                return None
        _, status = os.waitpid(pid, 0)
        pid = None
        if status != 0:
            return None
        return b"".join(chunks).decode("utf-8", "replace").strip() or None
    except (OSError, ValueError):
        return None
    finally:
        os.close(out)
        if into is not None:
            os.close(into)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ChildProcessError, ProcessLookupError, PermissionError):
                pass


def _neo_home_setting(name: str):
    """*name* from `$NEO_HOME/config.json` (`~/.neo`), case-insensitively, as `config.neo_config` reads it."""
    import json

    home = os.environ.get("NEO_HOME") or os.path.join(os.path.expanduser("~"), ".neo")
    try:
        with open(os.path.join(home, "config.json"), "rb") as handle:
            data = json.loads(handle.read(1 << 20))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    if name in data:
        return data[name]
    return {str(k).lower(): v for k, v in data.items()}.get(name.lower())


def limit_ms() -> int:
    """The limit from `NEO_AGENT_HOOK_TIMEOUT_MS` (git config's `neo.agentHookTimeoutMs` needs the
    repository, so whoever answers the hook reads it and says so)."""
    try:
        return min(MAX_LIMIT_MS, max(50, int(os.environ.get(LIMIT_ENV) or DEFAULT_TIMEOUT_MS)))
    except ValueError:
        return DEFAULT_TIMEOUT_MS


class Clock:
    """One hook process's budget: spawned at `spawned` (time.monotonic(), which on Linux is one
    clock for every process, so it can be handed to the server), `limit_ms` to finish."""

    def __init__(self, spawned: float, limit: int) -> None:
        self.spawned = spawned
        self.limit_ms = limit
        self.log_dir: str | None = None   # where an expiry is logged, once the repository is known
        self.child: int | None = None     # a forked child doing the work: stopped with the hook

    @classmethod
    def start(cls) -> Clock:
        """The clock of this process, counted from its spawn, armed (see `arm`)."""
        clock = cls(time.monotonic() - process_age(), limit_ms())
        clock.arm()
        return clock

    @property
    def deadline(self) -> float:
        """The monotonic time at which the hook gives up (EXIT_MARGIN before its limit, so that
        it has ended by the limit)."""
        return self.spawned + self.limit_ms / 1000 - min(EXIT_MARGIN, self.limit_ms / 4000)

    def left(self) -> float:
        """Seconds left (negative once past)."""
        return self.deadline - time.monotonic()

    def arm(self) -> None:
        """SIGALRM at the deadline: one log line, exit 0, no output (at once if already past)."""
        signal.signal(signal.SIGALRM, self._expired)
        left = self.left()
        if left <= 0:
            self.expire("while starting")
        signal.setitimer(signal.ITIMER_REAL, left)

    def extend(self, limit: int) -> None:
        """Use *limit* ms instead (the repository's `neo.agentHookTimeoutMs`, `configured_limit_ms`)."""
        if limit != self.limit_ms:
            self.limit_ms = max(50, limit)
            self.arm()

    def disarm(self) -> None:
        """No more SIGALRM (the answer is being written: all or nothing)."""
        signal.setitimer(signal.ITIMER_REAL, 0)

    def stop_child(self) -> None:
        """Kill the forked child, if any (SIGKILL: whatever it holds, its flocks die with it)."""
        if self.child is not None:
            try:
                os.kill(self.child, signal.SIGKILL)
                os.waitpid(self.child, os.WNOHANG)
            except (ChildProcessError, ProcessLookupError, PermissionError):
                pass
            self.child = None

    def _expired(self, signum, frame) -> None:  # signal handler signature
        self.expire()

    def expire(self, when: str = "") -> None:
        """Out of time: stop the child, log it, exit 0 with no output."""
        try:
            self.stop_child()
        finally:
            expire(self.log_dir, when, self.limit_ms)


def expire(neo_dir: str | os.PathLike | None = None, when: str = "", limit: int | None = None) -> None:
    """Out of time: one fixed line in the hook log (*neo_dir*, else `.git/neo` of the current
    folder if there is one: no repository lookup, no redaction, there is no time), then exit 0
    with no output."""
    try:
        log_line(neo_dir, f"stopped at the time limit ({limit or limit_ms()} ms, {process_age():.2f} s after start)"
                          f"{' ' + when if when else ''}; no output")
    finally:
        os._exit(0)


def log_line(neo_dir: str | os.PathLike | None, text: str) -> None:
    """Append `<time> [pid] agent hook: <text>` to the hook log; never raises. *text* must be
    fixed wording (no payload content): it is written without redaction."""
    try:
        if neo_dir is not None:   # a repository's `.git/neo`: made if missing, as git-neo does
            folder = os.fspath(neo_dir)
            os.makedirs(folder, exist_ok=True)
        else:
            folder = os.path.join(".git", "neo")
        if os.path.isdir(folder):
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            with open(os.path.join(folder, "hook.log"), "a", encoding="utf-8") as handle:
                handle.write(f"{stamp} [{os.getpid()}] agent hook: {text}\n")
    except (OSError, ValueError):
        pass
