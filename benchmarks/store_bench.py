"""Fact store speed: recall latency, cold `git neo recall`, Neo's JSON layout, and the add curve.

    .venv/bin/python benchmarks/store_bench.py [--quick] [--adds N] [--only adds] [--keep]

Everything happens under a temporary folder (its own HOME, NEO_HOME and global
git config; the hash embedder) that is removed at the end unless --keep.

* Stores of 500, 5,000 and 50,000 facts (--quick: 500 and 5,000) are written in
  one bulk commit each (seeded word-list texts with identifiers, 10-40 words, a
  mix of kinds, ~5% constraints); the project cap is raised for the benchmark.
* The first recall embeds every fact (first-time cost, reported once) and warms
  the vector cache; then in-process recall is timed (median over several
  queries) and cold `git-neo recall Q --json` processes (median wall time).
* Neo's layout, measured in the same run: `facts_project.json` holding the same
  facts with 768 inline floats each, loaded in a fresh `python -c` with `json`,
  turned into a numpy matrix, cosine with a query vector, top 5.
* The add curve: 1,000 `store.add` calls one by one (distinct texts) on top of
  0, 5,000 and 50,000 stored facts; ms per add and its ratio to the empty store.
  `--only adds` skips the recall measurements (the stores are still built and
  one first recall warms their vector cache, as in the full run).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import cpu_seconds, isolated_home, machine_info, median, ms, ratio, scratch_dir, table, timed

NEO_DIM = 768          # Neo stored 768 floats per fact (a 768-d neural embedder)
TOP_K = 5
KIND_MIX = [("constraint", 5), ("known_unknown", 5), ("pattern", 25), ("decision", 20),
            ("architecture", 15), ("review", 10), ("failure", 20)]

WORDS = """
request response handler client server retry timeout backoff cache layer docker build image
deploy release branch merge review test fixture mock database migration schema index query
transaction lock queue worker job scheduler cron logging metrics tracing alert error exception
config setting environment secret token auth session cookie header payload json yaml parser
serializer validator model view controller router middleware endpoint api version upgrade
dependency package module import cycle refactor rename split extract interface protocol
adapter plugin registry factory singleton thread async await event loop callback stream
buffer file path folder permission user admin role tenant account billing invoice payment
order cart product search ranking embedding vector batch chunk page limit offset cursor
always never must should avoid prefer use keep before after during instead because unless
slow fast flaky stable broken fixed deprecated legacy new old large small hot cold local
remote shared private public internal external upstream downstream primary replica backup
restore health check probe readiness startup shutdown signal graceful restart crash memory
leak profile benchmark latency throughput budget quota rate limiter circuit breaker fallback
""".split()

PARTS = """
user config cache token client session request retry http db pool conn query order cart
item price tax invoice parse load save fetch send build render handle validate check make
get set update delete create list sync async batch job task queue event log metric trace
""".split()


def identifier(rng: random.Random) -> str:
    """A code identifier in one of the usual spellings."""
    parts = rng.sample(PARTS, rng.randint(2, 3))
    style = rng.randrange(6)
    if style == 0:
        return "_".join(parts)
    if style == 1:
        return parts[0] + "".join(p.title() for p in parts[1:])
    if style == 2:
        return "".join(p.title() for p in parts)
    if style == 3:
        return "src/" + "/".join(parts) + rng.choice([".py", ".ts", ".go", ".rs"])
    if style == 4:
        return "_".join(parts).upper()
    return ".".join(parts) + "()"


def sentence(rng: random.Random, n_words: int) -> str:
    """*n_words* words, about one in five an identifier."""
    return " ".join(identifier(rng) if rng.random() < 0.2 else rng.choice(WORDS) for _ in range(n_words))


def fact_text(rng: random.Random) -> tuple[str, str, str]:
    """(subject, body, kind): 10-40 words in all, kinds in KIND_MIX proportions."""
    total = rng.randint(10, 40)
    subject_words = rng.randint(4, min(9, total - 6))
    kind = rng.choices([k for k, _ in KIND_MIX], weights=[w for _, w in KIND_MIX])[0]
    return sentence(rng, subject_words).capitalize(), sentence(rng, total - subject_words) + ".", kind


def generate_facts(n: int, seed: int, project_id: str, org_id: str):
    """*n* valid project facts (validated through Fact.from_dict), created over the past year."""
    from neo_git.facts import Fact

    rng = random.Random(seed)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    facts = []
    for _ in range(n):
        subject, body, kind = fact_text(rng)
        created = now - timedelta(seconds=rng.randint(0, 365 * 86400))
        facts.append(Fact.from_dict({
            "id": f"{rng.getrandbits(64):016x}", "subject": subject, "body": body, "kind": kind,
            "scope": "project", "org_id": org_id, "project_id": project_id,
            "tags": ["seed"] if rng.random() < 0.02 else [],
            "metadata": {"created_at": created.isoformat(), "confidence": round(rng.uniform(0.3, 0.9), 2),
                         "success_count": rng.choice([0, 0, 0, 1, 2, 5]), "author": "Bench <bench@example.com>",
                         "provenance": "observed"},
        }))
    return facts


# --- environment ---------------------------------------------------------------------


def isolate(root: Path) -> None:
    """Point HOME, NEO_HOME and git's global config at *root*; hash embedder; fixed identity."""
    home = root / "home"
    isolated_home(home)
    os.environ.update({
        "HF_HUB_OFFLINE": "1", "NEO_EMBEDDER": "hash", "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
        # Child processes keep their bytecode under the temp folder, as an installed
        # package would have it, instead of recompiling git-neo on every cold run.
        "PYTHONPYCACHEPREFIX": str(root / "pycache"),
    })
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def timed_cpu(func) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds of this process and the subprocesses it reaped, result)."""
    cpu = cpu_seconds()
    wall, result = timed(func)
    return wall, cpu_seconds() - cpu, result


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a command (list form, timeout, no stdin); raise with its stderr if it fails."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-2000:]}")
    return proc


class Site:
    """One repository with its own NEO_HOME (so vector caches of different sizes do not mix)."""

    def __init__(self, root: Path, name: str) -> None:
        self.dir = root / name
        self.repo = self.dir / "repo"
        self.home = self.dir / "neo_home"
        self.repo.mkdir(parents=True)
        run(["git", "init", "-q", "-b", "main"], cwd=self.repo)
        run(["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=self.repo)
        self.env = {**os.environ, "NEO_HOME": str(self.home)}

    def open(self):
        """A fresh FactStore on this site with the project cap raised for the benchmark."""
        from neo_git import identity
        from neo_git.facts import FactScope
        from neo_git.store import FactStore

        store = FactStore(identity.open_repository(self.repo), home=self.home)
        store.caps[FactScope.PROJECT] = 10**7
        return store


def populate(site: Site, n: int, seed: int) -> float:
    """Write *n* generated facts in one commit; returns seconds."""
    from neo_git.facts import FactScope
    from neo_git.store.base import Change

    store = site.open()
    store.init()
    facts = generate_facts(n, seed, store.project_id, store.org_id)
    seconds, _ = timed(lambda: store.backends[FactScope.PROJECT].transact(
        lambda current: Change(tuple(facts), f"bench: add {n} facts")))
    return seconds


def queries(seed: int, count: int) -> list[str]:
    """Questions in the same vocabulary as the facts."""
    rng = random.Random(seed)
    return [sentence(rng, rng.randint(6, 12)) + "?" for _ in range(count)]


# --- measurements --------------------------------------------------------------------


def first_recall(site: Site, query: str) -> float:
    """Seconds of the very first recall: loads the facts and embeds every one of them."""
    store = site.open()
    seconds, _ = timed(lambda: store.recall(query, k=TOP_K))
    return seconds


def inprocess_recall(site: Site, qs: list[str]) -> tuple[float, float]:
    """(open + first recall on a warm cache, median of the following recalls), seconds."""
    store = site.open()
    first, _ = timed(lambda: store.recall(qs[0], k=TOP_K))
    times = [timed(lambda q=q: store.recall(q, k=TOP_K))[0] for q in qs[1:]]
    return first, median(times)


def git_neo_executable() -> str:
    candidate = Path(sys.executable).with_name("git-neo")
    return str(candidate) if candidate.exists() else (shutil.which("git-neo") or "git-neo")


def run_with_rss(cmd: list[str], cwd: Path, env: dict) -> tuple[bytes, int]:
    """Run *cmd*; (stdout, its maximum resident set size in bytes), raising if it fails.

    Through GNU time: a child forked straight from this process inherits its high-water mark
    on Linux (this process holds whole stores), so its own ru_maxrss would report ours."""
    gnu_time = "/usr/bin/time"
    if not os.path.exists(gnu_time):
        return run(cmd, cwd=cwd, env=env).stdout, 0
    with tempfile.NamedTemporaryFile(suffix=".rss") as report:
        proc = run([gnu_time, "-f", "%M", "-o", report.name, *cmd], cwd=cwd, env=env)
        return proc.stdout, int(Path(report.name).read_text().split()[-1]) * 1024  # KiB


def cold_cli_recall(site: Site, qs: list[str]) -> tuple[float, float, int, int]:
    """(median wall seconds, median CPU seconds of `git-neo recall Q --json`, facts returned by the
    first run, median max RSS in bytes)."""
    exe = git_neo_executable()
    run([exe, "recall", "warm-up: compile bytecode, fill the OS cache", "--json"], cwd=site.repo, env=site.env)
    times, cpus, rss, returned = [], [], [], 0
    for i, query in enumerate(qs):
        seconds, cpu, (stdout, peak) = timed_cpu(
            lambda q=query: run_with_rss([exe, "recall", q, "--json"], cwd=site.repo, env=site.env))
        if i == 0:
            result = json.loads(stdout)
            returned = len(result["valid_facts"]) + len(result["constraints"])
        times.append(seconds)
        cpus.append(cpu)
        rss.append(peak)
    return median(times), median(cpus), returned, int(median(rss))


NEO_LOADER = """
import json, sys
import numpy as np
with open(sys.argv[1], encoding="utf-8") as f:
    data = json.load(f)
facts = [f for f in data["facts"] if f.get("is_valid", True)]
matrix = np.array([f["embedding"] for f in facts], dtype=np.float32)
matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
query = np.random.default_rng(int(sys.argv[2])).standard_normal(matrix.shape[1]).astype(np.float32)
scores = matrix @ (query / np.linalg.norm(query))
top = np.argsort(-scores)[:5]
print(json.dumps([facts[i]["id"] for i in top]))
"""


def write_neo_layout(site: Site, seed: int) -> tuple[Path, int]:
    """The site's facts in Neo's envelope, 768 inline floats each; (path, bytes)."""
    import numpy as np

    facts = site.open().list(scope="project", include_invalid=True)
    path = site.dir / "neo" / "facts_project.json"
    path.parent.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"version": "2.0", "facts": [')
        for start in range(0, len(facts), 2000):
            chunk = facts[start:start + 2000]
            vectors = rng.standard_normal((len(chunk), NEO_DIM)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            parts = []
            for fact, vector in zip(chunk, vectors.tolist()):
                parts.append(json.dumps({**fact.to_dict(), "embedding": vector}))
            out.write(("," if start else "") + ",".join(parts))
        out.write("]}\n")
    return path, path.stat().st_size


def cold_neo_recall(path: Path, reps: int) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds) of a fresh python loading Neo's file and ranking it."""
    times, cpus = [], []
    run([sys.executable, "-c", NEO_LOADER, str(path), "99"])  # warm-up, as for git-neo
    for i in range(reps):
        seconds, cpu, proc = timed_cpu(lambda i=i: run([sys.executable, "-c", NEO_LOADER, str(path), str(i)]))
        assert len(json.loads(proc.stdout)) == TOP_K
        times.append(seconds)
        cpus.append(cpu)
    return median(times), median(cpus)


def python_startup(reps: int) -> tuple[float, float]:
    """(bare `python -c pass`, `python -c "import numpy"`) median seconds: the floor of every cold number."""
    run([sys.executable, "-c", "import numpy"])
    bare = median(timed(lambda: run([sys.executable, "-c", "pass"]))[0] for _ in range(reps))
    numpy = median(timed(lambda: run([sys.executable, "-c", "import numpy"]))[0] for _ in range(reps))
    return bare, numpy


def add_curve(site: Site, adds: int, seed: int) -> dict:
    """Time `store.add` one by one: a warm-up add (loads the store), then *adds* timed adds."""
    rng = random.Random(seed)
    texts = [fact_text(rng) for _ in range(adds + 1)]
    store = site.open()
    subject, body, kind = texts[0]
    first, first_cpu, _ = timed_cpu(lambda: store.add_detailed(subject, body, kind=kind))
    times, superseded, duplicates = [], 0, 0
    for subject, body, kind in texts[1:]:
        seconds, result = timed(lambda s=subject, b=body, k=kind: store.add_detailed(s, b, kind=k))
        times.append(seconds)
        superseded += result.superseded is not None
        duplicates += result.duplicate
    return {"first": first, "first_cpu": first_cpu, "times": times, "superseded": superseded,
            "duplicates": duplicates}


# --- report --------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def print_recall(rows: list[list[str]], inproc_queries: int, cli_reps: int, neo_reps: int,
                 bare: float, with_numpy: float, empty_cli: tuple[float, float]) -> None:
    """The recall table and its footnotes."""
    print("Recall (hash embedder, k=5). Medians; cold numbers are whole processes (wall clock, and CPU time).")
    print(table(["facts", "bulk write", "first recall*", "open+recall", "in-process",
                 "cold git-neo", "cold max RSS", "cold Neo JSON", "Neo file", "Neo/git-neo", "git-neo cpu", "Neo cpu",
                 "Neo/git-neo cpu", "returned"], rows))
    print("  * first recall in a process with an empty vector cache: loads and embeds every fact once.")
    print("  open+recall: new FactStore in a warm process, first recall (reads ref + vector cache).")
    print(f"  in-process: median of {inproc_queries} recalls after that one; cold git-neo: median of "
          f"{cli_reps} `git-neo recall Q --json`; cold Neo JSON: median of {neo_reps} `python -c` json.load"
          f" + numpy cosine + top 5.")
    print(f"  process floors: `python -c pass` {ms(bare, 0)}, `python -c 'import numpy'` {ms(with_numpy, 0)},"
          f" `git-neo recall` on an empty store {ms(empty_cli[0], 0)} (cpu {ms(empty_cli[1], 0)}).")
    print("  cpu: user + system time of the cold process; on a shared machine wall time also measures"
          " the neighbours, CPU time mostly what the code costs.")
    print()


def main(argv: list[str] | None = None) -> int:
    """Build the stores, measure, print the tables and the targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 and 5,000 facts only, fewer repetitions")
    parser.add_argument("--adds", type=int, default=None, help="adds per base size (default 1000; 300 with --quick)")
    parser.add_argument("--only", choices=["adds"], default=None,
                        help="measure only the add curve (stores are still built and their vector cache warmed)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and print its path")
    options = parser.parse_args(argv)
    sizes = [500, 5000] if options.quick else [500, 5000, 50000]
    bases = [0, 5000] if options.quick else [0, 5000, 50000]
    adds = options.adds or (300 if options.quick else 1000)
    inproc_queries, cli_reps, neo_reps = (8, 5, 5) if options.quick else (12, 7, 5)

    started = time.perf_counter()
    with scratch_dir("neo-store-bench-", options.keep) as root:
        isolate(root)
        import numpy
        import pygit2

        print("git-neo store benchmark" + (" (--quick)" if options.quick else ""))
        print(machine_info())
        print(f"numpy {numpy.__version__}, pygit2 {pygit2.__version__}, libgit2 {pygit2.LIBGIT2_VERSION}; "
              f"embedder: hash (512-d); Neo layout: {NEO_DIM} floats per fact")
        print("load average at start: " + " ".join(f"{x:.2f}" for x in os.getloadavg())
              + " (other work on the machine inflates every number)")
        print()
        only_adds = options.only == "adds"
        if not only_adds:
            bare, with_numpy = python_startup(5)
            empty = Site(root, "empty")
            empty.open().init()
            empty_wall, empty_cpu, _, _ = cold_cli_recall(empty, queries(1, cli_reps))
            empty_cli = (empty_wall, empty_cpu)

        sites: dict[int, Site] = {}
        recall_rows, results = [], {}
        for n in sizes:
            if only_adds and n not in bases:
                continue
            site = sites[n] = Site(root, f"n{n}")
            build = populate(site, n, seed=n)
            qs = queries(1000 + n, inproc_queries + 1)
            first = first_recall(site, qs[0])
            if only_adds:  # the recall above warmed the vector cache, as the full run does
                continue
            open_first, inproc = inprocess_recall(site, qs[1:])
            cli, cli_cpu, returned, rss = cold_cli_recall(site, queries(2000 + n, cli_reps))
            path, size = write_neo_layout(site, seed=n)
            neo, neo_cpu = cold_neo_recall(path, neo_reps)
            path.unlink()  # hundreds of MB at 50,000 facts
            results[n] = {"inproc": inproc, "cli": cli, "neo": neo, "cli_cpu": cli_cpu, "neo_cpu": neo_cpu,
                          "rss": rss}
            recall_rows.append([f"{n:,}", f"{build:.2f} s", f"{first:.2f} s", ms(open_first), ms(inproc, 2),
                                ms(cli, 0), f"{rss / 2**20:,.0f} MB", ms(neo, 0), f"{size / 1e6:,.0f} MB",
                                ratio(neo, cli), ms(cli_cpu, 0), ms(neo_cpu, 0), ratio(neo_cpu, cli_cpu),
                                str(returned)])
            print(f"  [{time.perf_counter() - started:6.1f} s] {n:,} facts measured", file=sys.stderr)

        if not only_adds:
            print_recall(recall_rows, inproc_queries, cli_reps, neo_reps, bare, with_numpy, empty_cli)

        curves = {}
        for base in bases:
            site = Site(root, "add0") if base == 0 else sites[base]
            curves[base] = add_curve(site, adds, seed=7000 + base)
            print(f"  [{time.perf_counter() - started:6.1f} s] adds on {base:,} measured", file=sys.stderr)
        base_mean = sum(curves[0]["times"]) / adds
        base_median = median(curves[0]["times"])
        add_rows = []
        for base, curve in curves.items():
            times = curve["times"]
            mean = sum(times) / len(times)
            add_rows.append([f"{base:,}", ms(curve["first"]), ms(curve["first_cpu"]), ms(mean, 2),
                             ms(median(times), 2),
                             ms(percentile(times, 0.9), 2), ratio(mean, base_mean), ratio(median(times), base_median),
                             f"{sum(times):.2f} s", str(curve["superseded"])])
        print(f"Adding {adds:,} facts one by one (store.add, in-process, distinct texts, project cap raised)")
        print(table(["stored before", "first add*", "first add cpu", "mean/add", "median/add", "p90/add", "mean vs 0",
                     "median vs 0", f"total {adds:,}", "superseded"], add_rows))
        print("  * the first add of a process loads the store (not in the other columns).")
        step = max(1, adds // 5)
        curve_rows = []
        for base, curve in curves.items():
            times = curve["times"]
            curve_rows.append([f"{base:,}"] + [ms(median(times[i:i + step]), 2) for i in range(0, adds, step)])
        print(f"Median ms per add, by block of {step} adds (the curve within each run):")
        print(table(["stored before"] + [f"adds {i + 1}-{min(adds, i + step)}" for i in range(0, adds, step)],
                    curve_rows))
        print()

        print("Targets:")
        at5k = results.get(5000)
        if at5k:
            print(f"  recall at 5,000 facts in-process < 20 ms: {ms(at5k['inproc'], 2)} -> "
                  f"{'met' if at5k['inproc'] < 0.020 else 'NOT met'}")
            speedup = at5k["neo"] / at5k["cli"]
            cpu_speedup = at5k["neo_cpu"] / at5k["cli_cpu"]
            print(f"  cold CLI recall at 5,000 ≥ 5× faster than loading Neo's layout: {speedup:.1f}× wall, "
                  f"{cpu_speedup:.1f}× cpu -> {'met' if min(speedup, cpu_speedup) >= 5 else 'NOT met'}")
        if 5000 in curves:
            print(f"  first add of a process at 5,000 facts: {ms(curves[5000]['first'])} wall, "
                  f"{ms(curves[5000]['first_cpu'])} cpu")
        at50k = results.get(50000)
        if at50k:  # issue 22's targets (quiet machine)
            for label, value, limit, shown in (
                    ("in-process recall at 50,000 ≤ 20 ms", at50k["inproc"], 0.020, ms(at50k["inproc"], 2)),
                    ("cold recall at 50,000 ≤ 0.7 s", at50k["cli"], 0.7, ms(at50k["cli"], 0)),
                    ("max RSS of a cold recall at 50,000 ≤ 150 MB", at50k["rss"] / 2**20, 150,
                     f"{at50k['rss'] / 2**20:,.0f} MB")):
                print(f"  {label}: {shown} -> {'met' if value <= limit else 'NOT met'}")
        if 50000 in curves:
            first50k = curves[50000]["first"]
            print(f"  first add of a process at 50,000 ≤ 0.5 s: {ms(first50k)} wall, "
                  f"{ms(curves[50000]['first_cpu'])} cpu -> {'met' if first50k <= 0.5 else 'NOT met'}")
        worst = max(base for base in curves)
        growth = (sum(curves[worst]["times"]) / adds) / base_mean
        print(f"  add cost O(1) in stored facts: mean per add at {worst:,} stored = {growth:.2f}× the empty store -> "
              f"{'flat (met)' if growth < 1.5 else 'GROWS (not met)'}")
        print(f"total benchmark time {time.perf_counter() - started:.0f} s; load average at end: "
              + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
