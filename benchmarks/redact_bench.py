"""What redaction costs with the full rule set (issue 37) against an earlier rule set.

    .venv/bin/python benchmarks/redact_bench.py [--base REV] [--runs N]

The old engine and rules are `neo_git/redact.py` and `neo_git/redact_rules.json` at --base
(default 1594009, before the gitleaks/detect-secrets rule set), loaded from git into a temporary
module; the new ones are this work tree's. For each text, old and new are timed alternately in
the same process (the machine is shared: alternating keeps the ratio honest), each run the
median of --runs calls, in CPU time (the steady figure) and wall time:

* an ordinary fact (subject and a 300-character body: what every `add` redacts),
* an agent prompt of 2 KB of prose (what a hook redacts),
* a 16 KB source file with no secret (an `ask --include`),
* secret-dense text: 40 lines of the test corpus (tests/secrets/kinds.py).

And the first call in a fresh interpreter (`python -c`: import, rules file read, the first
redaction with its lazy compiles), median of 5, old vs new. CPU time is printed next to wall
time for the in-process figures.
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import median, ms, ratio, table

ROOT = Path(__file__).resolve().parents[1]

FACT = ("Use the token bucket for rate limits", "The importer honours Retry-After on 429 and backs off "
        "exponentially, at most 5 attempts; the API allows 100 requests per minute per key. Keep the "
        "HTTP client in src/importer/http.py; tests in tests/test_importer.py mock the clock, not the "
        "network. See docs/importer.md for the retry table and the reasons behind it.")
PROMPT = ("Which HTTP client should the importer use for outbound calls, and how do we keep the secret "
          "key for the upstream API out of the logs? The password rotation job runs monthly. ") * 12
SOURCE_LINE = ("    def fetch(self, url: str, *, timeout: float = 30.0) -> bytes:  # retry with backoff, "
               "token bucket\n")


def _load_old(rev: str, folder: Path):
    """The redact module and rules file at *rev*, importable from *folder*."""
    for name in ("redact.py", "redact_rules.json"):
        data = subprocess.run(["git", "show", f"{rev}:neo_git/{name}"], cwd=ROOT, capture_output=True,
                              check=True).stdout
        (folder / name).write_bytes(data)
    spec = importlib.util.spec_from_file_location("redact_old", folder / "redact.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _per_call(func, text: str, runs: int, clock=time.process_time) -> float:
    """Median seconds of one call: CPU time by default (on a machine shared by other sessions wall
    time mostly measures the neighbours), wall time with clock=time.perf_counter."""
    samples = []
    for _ in range(runs):
        started = clock()
        func(text)
        samples.append(clock() - started)
    return median(samples)


def _cold(code: str, cwd: Path, runs: int = 5) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=cwd, check=True, capture_output=True)
        samples.append(time.perf_counter() - started)
    return median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="1594009", help="the revision whose rules are the baseline")
    parser.add_argument("--runs", type=int, default=30, help="calls per measurement (median)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating old/new rounds (median of rounds)")
    args = parser.parse_args()

    from neo_git import redact as new
    from tests.secrets.kinds import KINDS

    with tempfile.TemporaryDirectory() as tmp:
        old = _load_old(args.base, Path(tmp))
        texts = {
            "ordinary fact (subject + 300-char body)": FACT[0] + "\n" + FACT[1],
            "agent prompt, 2 KB prose": PROMPT,
            "16 KB source file, no secret": SOURCE_LINE * (16_000 // len(SOURCE_LINE)),
            "40 secret lines (corpus)": "\n".join(line for _k, line, _s in KINDS[::9][:40]),
        }
        rows = []
        cpu_started = time.process_time()
        for label, text in texts.items():
            old.redact(text), new.redact(text)   # warm: compiles and caches
            olds, news, wall_olds, wall_news = [], [], [], []
            for _ in range(args.rounds):
                olds.append(_per_call(old.redact, text, args.runs))
                news.append(_per_call(new.redact, text, args.runs))
                wall_olds.append(_per_call(old.redact, text, args.runs, time.perf_counter))
                wall_news.append(_per_call(new.redact, text, args.runs, time.perf_counter))
            o, n = median(olds), median(news)
            rows.append([label, f"{len(text):,}", ms(o, 3), ms(n, 3), ratio(n, o),
                         ms(median(wall_olds), 3), ms(median(wall_news), 3)])
        cpu = time.process_time() - cpu_started
        cold_old = _cold(f"import importlib.util as u; s=u.spec_from_file_location('r', {str(Path(tmp) / 'redact.py')!r}); "
                         "m=u.module_from_spec(s); s.loader.exec_module(m); m.redact('Always run the migrations.')", ROOT)
        cold_new = _cold("from neo_git.redact import redact; redact('Always run the migrations.')", ROOT)
        rows.append(["fresh interpreter: import + first call (wall)", "-", "-", "-", ratio(cold_new, cold_old),
                     ms(cold_old), ms(cold_new)])
    print(f"rules: {len(old.rules())} at {args.base} -> {len(new.rules())} now; median of {args.rounds} rounds "
          f"x {args.runs} calls, old and new alternating; in-process CPU {cpu:.1f} s")
    print(table(["text", "chars", "old CPU", "new CPU", "new/old", "old wall", "new wall"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
