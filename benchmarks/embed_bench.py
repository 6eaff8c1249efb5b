"""Speed of the hash embedder and of the vector cache, as a cold CLI process sees them.

    python benchmarks/embed_bench.py [--n 5000] [--repeat 3]

Prints a table: embedding throughput (cold embedder object, and warm with its
word cache filled), writing N vectors into an empty cache, and a cold process
loading N cached vectors (what `git neo recall` pays over N facts).
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neo_git.embed.cache import VectorCache  # noqa: E402
from neo_git.embed.hashing import HashEmbedder  # noqa: E402

SUBJECTS = ["HTTP client", "Database migrations", "Logging", "Retry policy", "Testing", "Config loading",
            "Error handling", "Caching", "Auth tokens", "Build", "Deploy", "Feature flags"]
WORDS = ("service handler request response timeout retry cache vector store commit branch merge hook "
         "parse_config loadSettings HttpClient user_id session token secret vault deploy build test fixture "
         "database migration schema index query transaction rollback queue worker event stream log metric "
         "trace span error exception warning module package import cycle function class method nesting").split()


def facts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJECTS)} {i}\n" + " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30)))
            + f" ({rng.randint(1, 60)} s)" for i in range(n)]


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


COLD_LOAD = """
import sys, time
t0 = time.perf_counter()
import numpy
from neo_git.embed.cache import VectorCache
from neo_git.embed.hashing import HashEmbedder
sys.path.insert(0, {bench!r})
from embed_bench import facts
texts = facts({n})
t1 = time.perf_counter()
class NoEmbed(HashEmbedder):
    def embed(self, texts):
        raise SystemExit("cache miss")
v = VectorCache({root!r}).vectors(NoEmbed(), texts)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, v.shape[0])
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    n = args.n
    texts = facts(n)
    rows = []

    cold = best_of(args.repeat, lambda: HashEmbedder().embed(texts))
    rows.append(("hash embed, new embedder object", cold, n / cold))
    warm_embedder = HashEmbedder()
    warm_embedder.embed(texts)
    warm = best_of(args.repeat, lambda: warm_embedder.embed(texts))
    rows.append(("hash embed, warm word cache", warm, n / warm))
    one = best_of(args.repeat * 100, lambda: HashEmbedder().embed([texts[0]]))
    rows.append(("hash embed, one query text", one, 1 / one))

    with tempfile.TemporaryDirectory() as tmp:
        write = best_of(1, lambda: VectorCache(Path(tmp)).vectors(HashEmbedder(), texts))
        rows.append((f"cache: embed + append {n} rows", write, n / write))
        warm_hit = best_of(args.repeat, lambda: VectorCache(Path(tmp)).vectors(HashEmbedder(), texts))
        rows.append((f"cache: new VectorCache, {n} hits", warm_hit, n / warm_hit))
        code = COLD_LOAD.format(bench=str(Path(__file__).resolve().parent), n=n, root=tmp)
        loads = []
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                                 cwd=ROOT, stdin=subprocess.DEVNULL, check=True)
            imports, load, count = out.stdout.split()
            assert int(count) == n
            loads.append((float(imports), float(load)))
        imports, load = min(loads, key=lambda p: p[1])
        rows.append(("cold process: imports (+numpy)", imports, float("nan")))
        rows.append((f"cold process: load {n} cached rows", load, n / load))

    print(f"{'what':<40} {'seconds':>9} {'texts/s':>12}")
    for what, seconds, rate in rows:
        rate_text = "" if rate != rate else f"{rate:12,.0f}"
        print(f"{what:<40} {seconds:9.4f} {rate_text:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
