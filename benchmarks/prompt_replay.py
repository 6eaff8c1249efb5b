"""Replay the real prompt-submit hook: does an agent get the right decision, and only that?

    python benchmarks/prompt_replay.py [--repos A,B,C] [--embedder NAME] [--process] [--limit N] [--keep]

A store holds the decision records of three projects of `../shared/eval/adr/dev.jsonl`
(subject = title without its number, body = text, kind decision; each project's records
in one batch, so every record stays valid and is its own right answer). Then every prompt
goes through the hook Claude Code runs, `git-neo hook agent prompt-submit --agent claude`
(`neo_git.agents.hooks.run_agent_hook`, the function that command calls; `--process` starts
the real executable instead), each as the first prompt of a fresh session:

* on-topic prompts: each record's own problem statement (its Context / Problem section);
  counted when the hook's context names that record's fact id;
* off-topic prompts: the questions of StateBench train and dev in the sales, procurement,
  hr and support domains (business questions about deals, vendors, staff, tickets);
  counted when the hook's context names any fact at all.

Two arms in one run: the relevance floor off (`git config neo.relevanceFloor -1`: every
fact counts as relevant, as before the floor existed) and on (the embedder's calibrated
floor). Targets (issue #17): right decision on ≥ 85% of on-topic prompts, any fact on
≤ 10% of off-topic prompts. `--embedder` (default hash) sets `$NEO_EMBEDDER` for the replay; a
fastembed model is taken from this machine's models folder (`git neo model pull [--from-pypi]`).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import machine_info, scratch_dir, table
from benchmarks.memory_replay import shared_eval
from benchmarks.store_bench import Site, isolate

DEFAULT_REPOS = ("alphagov/forms", "cardano-scaling/hydra", "Enterprise-CMCS/managed-care-review")
OFF_TOPIC_DOMAINS = ("sales", "procurement", "hr", "support")
_NUMBER = re.compile(r"^\s*(?:ADR[\s-]*)?\d+\s*(?:[.:)]|[—–-])?\s*", re.IGNORECASE)
# The section that states the problem: "## Context", "## Context and Problem Statement",
# "## Problem", "## Statement of the problem", up to the next heading.
_PROBLEM = re.compile(r"^#+\s*(?:context|problem|statement of the problem|context and problem statement)"
                      r"[^\n]*\n(.*?)(?=^#+\s|\Z)", re.IGNORECASE | re.MULTILINE | re.DOTALL)
_FACT = re.compile(r"\[fact:([0-9a-f]{16})\]")


def subject_of(title: str) -> str:
    """The record's title without its number."""
    return _NUMBER.sub("", title).strip() or title.strip()


def problem_statement(text: str) -> str | None:
    """The record's problem statement, or None when it has no such section."""
    match = _PROBLEM.search(text)
    if match and len(match.group(1).strip()) > 40:
        return match.group(1).strip()
    return None


def off_topic_prompts() -> list[str]:
    """StateBench train + dev questions of the business domains, de-duplicated, in file order."""
    prompts: dict[str, None] = {}
    for split in ("train", "dev"):
        for line in (shared_eval("statebench") / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
            timeline = json.loads(line)
            if timeline["domain"] not in OFF_TOPIC_DOMAINS:
                continue
            for event in timeline["events"]:
                if event["type"] == "query" and event.get("prompt", "").strip():
                    prompts.setdefault(event["prompt"].strip(), None)
    return list(prompts)


def build_store(site: Site, repos: list[dict]) -> list[tuple[str, str]]:
    """Write the projects' records; returns (problem statement, fact id) for the on-topic prompts."""
    store = site.open()
    on_topic = []
    for repo in repos:
        adrs = sorted(repo["adrs"], key=lambda a: a["seq"])
        facts = store.add_many([{"subject": subject_of(a["title"]), "body": a["text"], "kind": "decision"}
                                for a in adrs])
        for adr, fact in zip(adrs, facts):
            statement = problem_statement(adr["text"])
            if statement:
                on_topic.append((statement, fact.id))
    return on_topic


def hook(site: Site, prompt: str, process: bool) -> str:
    """The context the prompt-submit hook injects for *prompt* as a new session's first prompt."""
    payload = json.dumps({"session_id": f"replay-{uuid.uuid4().hex}", "cwd": str(site.repo),
                          "hook_event_name": "UserPromptSubmit", "prompt": prompt,
                          "transcript_path": "/dev/null", "permission_mode": "default"}).encode()
    if process:
        git_neo = shutil.which("git-neo") or str(Path(sys.executable).parent / "git-neo")
        proc = subprocess.run([git_neo, "hook", "agent", "prompt-submit", "--agent", "claude"], input=payload,
                              capture_output=True, cwd=site.repo, timeout=60,
                              env={**site.env, "NEO_AGENT_HOOK_TIMEOUT_MS": "60000"})
        out = proc.stdout.decode()
    else:
        from neo_git.agents.hooks import run_agent_hook

        buffer = io.StringIO()
        run_agent_hook(["prompt-submit", "--agent", "claude"], stdin=io.BytesIO(payload), stdout=buffer)
        out = buffer.getvalue()
    if not out.strip():
        return ""
    return json.loads(out)["hookSpecificOutput"]["additionalContext"]


def replay(site: Site, on_topic: list[tuple[str, str]], off_topic: list[str], process: bool) -> dict:
    """Rates for one arm."""
    right = sum(f"[fact:{fact_id}]" in hook(site, prompt, process) for prompt, fact_id in on_topic)
    injected = [len(_FACT.findall(hook(site, prompt, process))) for prompt in off_topic]
    return {"right": right / len(on_topic), "any": sum(1 for n in injected if n) / len(off_topic),
            "per_prompt": sum(injected) / len(off_topic)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", default=",".join(DEFAULT_REPOS), help="three repositories of adr/dev.jsonl")
    parser.add_argument("--process", action="store_true", help="run the git-neo executable for every prompt")
    parser.add_argument("--limit", type=int, default=0, help="at most N prompts of each kind (0: all)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--embedder", default="hash", help="hash (default) or fastembed[:MODEL]")
    parser.add_argument("--json", action="store_true",
                        help="only the default configuration; print {on_topic, off_topic, per_prompt} as JSON")
    args = parser.parse_args()
    wanted = [name.strip() for name in args.repos.split(",") if name.strip()]
    records = {r["repo"]: r for r in map(json.loads, (shared_eval("adr") / "dev.jsonl").read_text().splitlines())}
    missing = [name for name in wanted if name not in records]
    if missing:
        parser.error(f"not in adr/dev.jsonl: {', '.join(missing)} (there: {', '.join(records)})")
    from neo_git.embed.fastembed_model import models_dir

    models = models_dir()  # this machine's, before the isolation moves NEO_HOME
    with scratch_dir("neo-prompt-replay-", keep=args.keep) as root:
        isolate(root)
        os.environ["NEO_EMBEDDER"] = args.embedder
        if models.is_dir():
            (root / "home" / ".neo").mkdir(parents=True, exist_ok=True)
            os.symlink(models, root / "home" / ".neo" / "models")
        os.environ["NEO_AGENT_HOOK_TIMEOUT_MS"] = "60000"   # measure the answer, not the time limit
        site = Site(root, "replay")
        started = time.perf_counter()
        on_topic = build_store(site, [records[name] for name in wanted])
        off_topic = off_topic_prompts()
        if args.limit:
            on_topic, off_topic = on_topic[:args.limit], off_topic[:args.limit]
        from neo_git.store import FactStore

        floor = FactStore.open(site.repo).relevance_floor
        rows = []
        if args.json:  # the product as shipped: no relevance setting at all
            result = replay(site, on_topic, off_topic, args.process)
            print(json.dumps({"on_topic": result["right"], "off_topic": result["any"],
                              "per_prompt": result["per_prompt"], "on": len(on_topic), "off": len(off_topic)}))
            return 0
        for arm, setting in (("floor off (every fact relevant)", "-1"), (f"floor on ({floor:.2f}, calibrated)", None)):
            if setting is None:
                subprocess.run(["git", "config", "--unset", "neo.relevanceFloor"], cwd=site.repo, check=False)
            else:
                subprocess.run(["git", "config", "neo.relevanceFloor", setting], cwd=site.repo, check=True)
            result = replay(site, on_topic, off_topic, args.process)
            rows.append([arm, f"{result['right']:.3f}", f"{result['any']:.3f}", f"{result['per_prompt']:.2f}"])
    print(machine_info())
    print(f"embedder {args.embedder}; store: {', '.join(wanted)}; {len(on_topic)} on-topic prompts (problem statements), "
          f"{len(off_topic)} off-topic prompts (StateBench train+dev: {', '.join(OFF_TOPIC_DOMAINS)}); "
          f"hook {'as a process' if args.process else 'in process (run_agent_hook)'}")
    print(table(["arm", "on-topic: right decision injected", "off-topic: any fact injected",
                 "off-topic: facts per prompt"], rows))
    print(f"(targets: on-topic >= 0.85, off-topic <= 0.10; {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
