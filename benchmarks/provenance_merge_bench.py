"""Cold provenance walk (`store/provenance.fact_origins`, no cache) over a history with merges,
against a baseline `provenance.py` (e.g. main's), alternated in one run.

    git show main:neo_git/store/provenance.py > /tmp/provenance_main.py
    python benchmarks/provenance_merge_bench.py --baseline /tmp/provenance_main.py [--facts 500] [--runs 7]
    python benchmarks/provenance_merge_bench.py --baseline /tmp/provenance_main.py --clone PATH   # an existing clone

Without --clone it builds two clones of one bare remote, each adding --facts facts one commit
at a time, synced back and forth (four merge commits), and walks the first clone.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)


def build(root: Path, facts: int) -> Path:
    from neo_git.store import FactStore
    from neo_git.sync import Syncer

    os.environ.setdefault("NEO_HOME", str(root / "home"))
    _git(root, "init", "-q", "--bare", "-b", "main", "remote.git")
    _git(root, "init", "-q", "-b", "main", "seed")
    (root / "seed" / "README").write_text("hi\n")
    _git(root / "seed", "add", "README")
    _git(root / "seed", "-c", "user.name=s", "-c", "user.email=s@x", "commit", "-qm", "init")
    _git(root / "seed", "push", "-q", "../remote.git", "main")
    for who in ("c1", "c2"):
        _git(root, "clone", "-q", "remote.git", who)
        _git(root / who, "config", "user.email", f"{who}@example.com")
        _git(root / who, "config", "user.name", who)
        _git(root / who, "config", "neo.remote", "origin")
        _git(root / who, "config", "neo.trustUnsigned", "origin")
        store = FactStore.open(root / who, embedder="hash")
        for n in range(facts):
            store.add(f"{who} decision {n} about topic {n * 7}", f"{who} chose option {n}", kind="decision")
    for who in ("c1", "c2", "c1", "c2"):
        Syncer(FactStore.open(root / who, embedder="hash"), "origin").sync()
    return root / "c1"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="a provenance.py to compare with")
    parser.add_argument("--clone", help="walk this clone instead of building one")
    parser.add_argument("--facts", type=int, default=500)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    import pygit2

    import neo_git.store.provenance as current

    spec = importlib.util.spec_from_file_location("provenance_baseline", args.baseline)
    baseline = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(baseline)
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(args.clone) if args.clone else build(Path(tmp), args.facts)
        repo = pygit2.Repository(str(clone))
        cache = Path(tmp) / "cache.json"
        times: dict[str, list[float]] = {"baseline": [], "current": []}
        for _ in range(args.runs):
            for name, mod in (("baseline", baseline), ("current", current)):
                mod._MEMO.clear()
                cache.unlink(missing_ok=True)
                mod._cache_path = lambda common_dir, ref: cache
                start = time.perf_counter()
                origins = mod.fact_origins(repo, clone / ".git")
                times[name].append(time.perf_counter() - start)
        commits = sum(1 for _ in repo.walk(repo.references["refs/neo/facts"].target))
        print(f"commits {commits}, facts {len(origins)}, load {os.getloadavg()[0]:.1f}")
        for name, values in times.items():
            print(f"{name}: median {1000 * statistics.median(values):.1f} ms")
        print(f"current/baseline: {statistics.median(times['current']) / statistics.median(times['baseline']):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
