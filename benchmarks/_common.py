"""Small helpers shared by the benchmark scripts: timing, medians, tables, machine info."""
from __future__ import annotations

import contextlib
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path


def median(values: Iterable[float]) -> float:
    """The median of *values* (nan when there are none)."""
    values = list(values)
    return statistics.median(values) if values else float("nan")


def timed(func: Callable[[], object]) -> tuple[float, object]:
    """(seconds, result) of one call of *func*, wall clock."""
    started = time.perf_counter()
    result = func()
    return time.perf_counter() - started, result


def cpu_seconds() -> float:
    """User + system time of this process and of its reaped children (subprocesses, pool workers).

    On a shared machine wall time mostly measures the neighbours; CPU time is what the
    code itself costs, so benchmarks print it next to wall time."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def ms(seconds: float, digits: int = 1) -> str:
    """Seconds as milliseconds text, e.g. '12.3 ms'."""
    return f"{seconds * 1000:,.{digits}f} ms"


def ratio(numerator: float, denominator: float) -> str:
    """'4.2×' (or '-' when the denominator is zero or missing)."""
    if not denominator or denominator != denominator:
        return "-"
    return f"{numerator / denominator:,.1f}×"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


def machine_info() -> str:
    """One line: python version, implementation, OS, cpu count."""
    return (f"python {platform.python_version()} ({platform.python_implementation()}), "
            f"{platform.system()} {platform.release()} {platform.machine()}, "
            f"{os.cpu_count()} cpus, executable {sys.executable}")


@contextlib.contextmanager
def scratch_dir(prefix: str, keep: bool = False) -> Iterator[Path]:
    """A temporary folder for one benchmark run: removed afterwards, or kept (and its path
    printed) with *keep*."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        if keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def isolated_home(home: Path, **env: str) -> Path:
    """Point HOME, NEO_HOME and git's global config at *home* (created), with a fixed identity
    (Bench <bench@example.com>), `main` as the default branch, no system config and no
    credential prompts; *env* adds or overrides variables. Returns the global config's path."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / ".gitconfig"
    config.write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n",
                      encoding="utf-8")
    os.environ.update({"HOME": str(home), "NEO_HOME": str(home / ".neo"), "GIT_CONFIG_GLOBAL": str(config),
                       "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", **env})
    return config
