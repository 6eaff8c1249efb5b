"""Memory-driven effort vs always-high effort for `git neo ask`, in one run.

    python benchmarks/ask_bench.py [--json]

A scripted session of 32 questions on facts about a real repository (git-neo's own
design, recorded on a throwaway local clone of this repository): 18 familiar questions
that the recorded facts answer and 14 novel ones. Every question is asked twice through
the real OpenAI SDK against the loopback server of the test suite (tests/helpers/loopback.py):
once with the effort memory chooses, once forced to high. Nothing is recorded (no
suggestions, no confidence changes), so both passes see the same memory.

Billing (as the real APIs report usage; see tests/helpers/loopback.py):
    input tokens = request characters / 4
    reasoning    = 400 × {low 1, medium 4, high 10, xhigh 20}[effort]
    output       = reply characters / 4 + reasoning
The proportions follow the spread reasoning models show between effort levels
(Anthropic's thinking budgets in git-neo: 0 / 4k / 16k / 32k tokens).

Targets: familiar questions cost at most 40% of their always-high tokens; no novel
question is answered at low effort.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from _common import machine_info, table  # noqa: E402

# Real statements about git-neo (docs/architecture.md, docs/design-notes.md), grouped by topic so a
# familiar question meets several of them. (subject, body, kind, confidence)
FACTS = [
    ("Facts ref storage", "Project facts live on refs/neo/facts: one canonical JSON blob per fact under "
     "facts/<id[0:2]>/<id>.json, one commit per change.", "architecture", 0.95),
    ("Facts ref compare-and-swap", "Writes to refs/neo/facts move the ref by compare-and-swap with a bounded "
     "retry, never force.", "decision", 0.9),
    ("Facts ref audit trail", "git log refs/neo/facts is the audit trail of facts; every commit message "
     "says what happened to which fact.", "pattern", 0.85),
    ("Supersession rule", "A new fact supersedes an old one with the same normalised subject, scope and kind "
     "unless the bodies are unrelated.", "decision", 0.9),
    ("Supersession threshold", "Cosine alone supersedes a fact only above the embedder's certain threshold, "
     "calibrated for a false supersession rate of at most 0.005.", "architecture", 0.85),
    ("Supersession restore", "A wrong supersession is undone with git neo restore; the superseded fact keeps "
     "its text.", "pattern", 0.9),
    ("Health metrics", "Code health counts import cycles, god files and the deepest control-flow nesting, "
     "computed with tree-sitter.", "architecture", 0.9),
    ("Health god files", "A god file has more than 800 lines or more than 30 functions; neo.godFileLines "
     "overrides the line limit.", "decision", 0.9),
    ("Health cache", "Health metrics are cached per blob id in .git/neo/health.sqlite, so a new commit costs "
     "only its changed files.", "pattern", 0.85),
    ("Health report", "git neo health reports the import cycles, god files and deepest nesting of HEAD's "
     "code; health --diff compares the code health of two revisions.", "review", 0.85),
    ("Hooks never block git", "Git hooks hand their work to a detached process and exit 0; NEO_DISABLE=1 "
     "turns every hook off.", "constraint", 0.95),
    ("Outcome classification", "Post-commit hooks classify pending suggestions as accepted, modified or still "
     "pending by the shipped lines.", "architecture", 0.85),
    ("Outcome confidence", "Accepted advice raises the success count and confidence of the facts it cited; "
     "modified advice lowers it.", "decision", 0.9),
    ("Outcome notes", "Each processed commit gets one git note under refs/notes/neo in JSON Lines, merged "
     "with cat_sort_uniq.", "pattern", 0.85),
    ("Outcome hooks", "The post-commit outcome hooks compare each processed commit with the pending "
     "suggestions, record the outcome in a note and update the confidence of cited facts.", "review", 0.85),
    ("Redaction of keys", "API keys, tokens and private keys are redacted before a fact is written or a "
     "prompt is sent.", "constraint", 0.95),
]

FAMILIAR = [
    "where are project facts stored on refs/neo/facts?",
    "how does a write move refs/neo/facts, by compare-and-swap?",
    "how do I see the audit trail of facts in refs/neo/facts?",
    "which commit on refs/neo/facts changed a fact?",
    "when does a new fact supersede an old fact?",
    "what threshold does cosine supersession of a fact use?",
    "how do I restore a wrongly superseded fact?",
    "is a superseded fact's text kept after supersession?",
    "which code health metrics does the health report compute?",
    "when is a file a god file in the health report?",
    "how are code health metrics cached per blob id?",
    "what does the health report count for nesting and import cycles?",
    "how are pending suggestions classified by the post-commit outcome hooks?",
    "how does accepted advice change the confidence of cited facts in the outcome loop?",
    "where are outcome notes of a processed commit stored?",
    "what happens to the confidence of facts when advice is modified in the outcome loop?",
    "how do outcome hooks record a note per processed commit?",
    "does accepted outcome advice raise the success count of facts?",
]

NOVEL = [
    "design a lock-free concurrent ring buffer for the scheduler",
    "how should we shard a distributed job queue across regions?",
    "add a GraphQL endpoint for invoices with pagination",
    "write a dp algorithm for the knapsack variant in billing",
    "migrate the payments database to a new schema without downtime",
    "why does the websocket client leak memory under load?",
    "implement OAuth device flow for the desktop app",
    "add Prometheus metrics to the image resizer service",
    "what is the best way to render charts in the admin dashboard?",
    "optimize the video transcoding pipeline for throughput",
    "design the retry policy of the email sender",
    "add dark mode to the mobile settings screen",
    "how should the search indexer handle unicode normalisation?",
    "secure the file upload endpoint against path traversal",
]


def responder(seen) -> str:
    """Replies of a well-behaved model for each loop step, citing the facts it was shown."""
    ids = re.findall(r"\[fact:([0-9a-f]{16})\] \((?!constraint)", seen.messages_text)[:3]
    cites = " ".join(f"[fact:{i}]" for i in ids)
    if seen.stage == "plan":
        return json.dumps({"plan": [f"read the code involved {cites}".strip(), "change it", "test it"],
                           "files": ["neo_git/example.py"], "facts": ids, "confidence": 0.6})
    if seen.stage == "critic":
        return json.dumps({"verdict": "accept", "problems": [], "confidence": 0.8})
    code = "def answer():\n    \"\"\"What the facts say.\"\"\"\n    return 42\n"
    return "```json\n" + json.dumps({
        "plan": [f"follow the recorded decision {cites}".strip()],
        "suggestions": [{"file": "neo_git/example.py", "code": code, "description": "apply the recorded decision",
                         "facts": ids, "confidence": 0.9 if ids else 0.7}],
        "facts": ids, "confidence": 0.9 if ids else 0.7}) + "\n```"


def setup_repository(workdir: Path) -> Path:
    """A local clone of this repository with the facts recorded on its refs/neo/facts."""
    from neo_git.store import FactStore

    clone = workdir / "git-neo"
    subprocess.run(["git", "clone", "-q", "--no-local", str(ROOT), str(clone)], check=True, timeout=300,
                   stdin=subprocess.DEVNULL)
    store = FactStore.open(clone)
    store.init()
    for subject, body, kind, confidence in FACTS:
        store.add(subject, body, kind=kind, confidence=confidence)
    return clone


def run(as_json: bool) -> int:
    """Ask every question in both modes; print the table; exit 1 when a target is missed."""
    from neo_git.ask.engine import NeoEngine
    from neo_git.ask.providers import make_provider
    from neo_git.ask.settings import ProviderSettings
    from tests.helpers.loopback import LoopbackLLM

    with tempfile.TemporaryDirectory(prefix="ask-bench-") as tmp, LoopbackLLM(responder=responder) as server:
        os.environ.update(NEO_HOME=str(Path(tmp) / "neo-home"), GIT_CONFIG_NOSYSTEM="1",
                          GIT_CONFIG_GLOBAL=str(Path(tmp) / "gitconfig"), GIT_AUTHOR_NAME="Bench",
                          GIT_AUTHOR_EMAIL="bench@example.com", GIT_COMMITTER_NAME="Bench",
                          GIT_COMMITTER_EMAIL="bench@example.com")
        repo = setup_repository(Path(tmp))
        settings = ProviderSettings("openai", "gpt-5-mini", api_key="bench", base_url=server.url + "/v1",
                                    timeout=30, max_retries=0)
        from neo_git.store import FactStore

        engine = NeoEngine(FactStore.open(repo), make_provider(settings))
        rows = []
        for group, questions in (("familiar", FAMILIAR), ("novel", NOVEL)):
            for question in questions:
                memory = engine.ask(question, record=False, cwd=repo)
                always = engine.ask(question, record=False, force_effort="high", cwd=repo)
                rows.append({"group": group, "question": question, "effort": memory.effort,
                             "difficulty": memory.difficulty, "relevant": memory.decision.relevant,
                             "calls": len(memory.calls),
                             "memory_tokens": memory.tokens_in + memory.tokens_out,
                             "high_tokens": always.tokens_in + always.tokens_out})
        embedder = engine.store.embedder.id
    return report(rows, embedder, as_json)


def report(rows: list[dict], embedder: str, as_json: bool) -> int:
    """Print per effort level, per group and total; check the targets."""
    def sums(selected):
        memory = sum(r["memory_tokens"] for r in selected)
        high = sum(r["high_tokens"] for r in selected)
        return memory, high, f"{memory / high:.0%}" if high else "-"

    familiar = [r for r in rows if r["group"] == "familiar"]
    novel = [r for r in rows if r["group"] == "novel"]
    familiar_share = sums(familiar)[0] / sums(familiar)[1]
    novel_low = [r["question"] for r in novel if r["effort"] == "low"]
    familiar_not_low = [r["question"] for r in familiar if r["effort"] != "low"]
    targets = {"familiar_share": round(familiar_share, 4), "familiar_share_ok": familiar_share <= 0.40,
               "novel_at_low": novel_low, "novel_at_low_ok": not novel_low}
    if as_json:
        print(json.dumps({"rows": rows, "targets": targets, "embedder": embedder}, indent=2))
        return 0 if targets["familiar_share_ok"] and targets["novel_at_low_ok"] else 1
    print(f"ask bench: {len(rows)} questions ({len(familiar)} familiar, {len(novel)} novel), "
          f"{len(FACTS)} facts, embedder {embedder}")
    print(machine_info())
    print()
    table_rows = []
    for effort in ("low", "medium", "high", "xhigh"):
        chosen = [r for r in rows if r["effort"] == effort]
        if chosen:
            table_rows.append([effort, len(chosen), sum(r["calls"] for r in chosen), *(
                f"{v:,}" if isinstance(v, int) else v for v in sums(chosen))])
    for name, selected in (("familiar", familiar), ("novel", novel), ("total", rows)):
        table_rows.append([name, len(selected), sum(r["calls"] for r in selected), *(
            f"{v:,}" if isinstance(v, int) else v for v in sums(selected))])
    print(table(["effort chosen", "questions", "calls", "tokens (memory)", "tokens (always high)", "share"],
                table_rows))
    print()
    print(f"familiar questions: {familiar_share:.0%} of their always-high tokens (target ≤ 40%): "
          + ("PASS" if targets["familiar_share_ok"] else "FAIL"))
    print(f"novel questions at low effort: {len(novel_low)} (target 0): "
          + ("PASS" if not novel_low else "FAIL " + "; ".join(novel_low)))
    if familiar_not_low:
        print(f"familiar questions not at low effort ({len(familiar_not_low)}): " + "; ".join(familiar_not_low))
    return 0 if targets["familiar_share_ok"] and targets["novel_at_low_ok"] else 1


def main() -> int:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    return run(parser.parse_args().json)


if __name__ == "__main__":
    sys.exit(main())
