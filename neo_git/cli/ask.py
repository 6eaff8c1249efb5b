"""`git neo ask QUESTION` and `git neo stats`."""
from __future__ import annotations

import argparse
import sys

from neo_git.cli.output import print_json, warn
from neo_git.cli.parser import json_flag

EFFORTS = ("low", "medium", "high", "xhigh")          # neo_git.ask.model.EFFORTS (kept import-free here)
PROVIDERS = ("openai", "anthropic", "ollama", "none")  # neo_git.ask.providers.PROVIDER_NAMES


def register(sub) -> dict[str, str]:
    """Add ask and stats."""
    p = sub.add_parser("ask", help="ask a model, with the memory's facts (effort chosen from memory)")
    p.add_argument("question")
    p.add_argument("--provider", "-p", choices=PROVIDERS, metavar="P",
                   help="one of: " + ", ".join(PROVIDERS) + " (default: neo.provider, else by the keys set)")
    p.add_argument("--model", "-m", metavar="M", help="model name (default: neo.<provider>Model or neo.model)")
    p.add_argument("--effort", "-e", choices=EFFORTS, metavar="E",
                   help="highest reasoning effort to use: " + ", ".join(EFFORTS) + " (also neo.maxEffort)")
    p.add_argument("--include", "-i", action="append", default=[], metavar="PATH",
                   help="send this file (size-capped) and its health with the question")
    p.add_argument("--dry-run", action="store_true", help="print the exact messages that would be sent; no call")
    p.add_argument("--show-prompt", action="store_true",
                   help="also print the messages sent (without a model: the ones that would be)")
    p.add_argument("--no-record", action="store_true",
                   help="do not record suggestions, usage or confidence changes")
    json_flag(p)

    p = sub.add_parser("stats", help="calls, tokens and effort levels of `git neo ask` (and of the review judge)")
    json_flag(p)
    return {"ask": "cmd_ask", "stats": "cmd_stats"}


def cmd_ask(args: argparse.Namespace) -> int:
    """Ask; print the plan, suggestions and tokens (or the prompt, for --dry-run / none)."""
    from neo_git.ask.engine import NeoEngine

    engine = NeoEngine.open(provider=args.provider, model=args.model)
    if args.show_prompt and not args.dry_run and not args.json and engine.provider.calls_model:
        # The messages of the first call, assembled exactly as the call will be (nothing is sent).
        shown = engine.ask(args.question, files=args.include, effort=args.effort, dry_run=True, record=False)
        print(_prompt(shown.messages or {}), flush=True)
    result = engine.ask(args.question, files=args.include, effort=args.effort, dry_run=args.dry_run,
                        record=not args.no_record)
    warn(engine.store.warnings)
    if args.json:
        print_json(result.to_dict())
        return 0
    print(_text(result, dry_run=args.dry_run, show_prompt=args.show_prompt))
    return 0


def _prompt(messages: dict) -> str:
    return "\n".join([f"--- system ({messages.get('stage')} step) ---", messages.get("system", ""),
                      "--- user ---", messages.get("user", ""), "---"])


def _text(result, dry_run: bool, show_prompt: bool = False) -> str:
    d = result.decision
    lines = [f"effort {d.effort} · {d.difficulty} · budget {d.time_budget} s · {result.provider}"
             + (f" {result.model}" if result.provider != "none" else ""), f"  ({d.reason})"]
    if not result.answered:
        if not dry_run:   # no model: how to configure one comes first; the prompt (KBs) only when asked for
            from neo_git.ask.none_provider import HOW_TO_CONFIGURE

            hint = HOW_TO_CONFIGURE.splitlines()
            lines += [""] + (hint[:-1] if show_prompt else hint)
        if dry_run or show_prompt:
            lines += ["", _prompt(result.messages or {})]
        if dry_run:
            lines.append("dry run: nothing was sent")
        lines += [f"note: {n}" for n in result.notes]
        return "\n".join(lines)
    if result.plan:
        lines += ["", "Plan:"] + [f"  {i}. {step}" for i, step in enumerate(result.plan, 1)]
    if result.suggestions:
        lines += ["", "Suggestions:"]
        for s in result.suggestions:
            facts = ", ".join(f[:8] for f in s.fact_ids) or "none"
            lines.append(f"  {s.file} — {s.description or '(no description)'} "
                         f"(confidence {s.confidence:.2f}; facts: {facts})")
            lines += ["    " + line for line in (s.code or s.diff or "").rstrip("\n").splitlines()]
            lines += [f"    ! {p}" for p in s.problems]
    else:
        lines += ["", "No code suggested."]
    verdict = "verified (syntax, constraints)" if result.verified else "NOT verified: see the problems above"
    lines += ["", f"{verdict}; confidence {result.confidence:.2f}; "
                  f"tokens {result.tokens_in:,} in, {result.tokens_out:,} out in {len(result.calls)} call(s)"]
    if result.stopped:
        lines.append(f"stopped early: {result.stopped}")
    if result.recorded:
        lines.append(f"recorded {len(result.recorded)} pending suggestion(s) for the outcome loop")
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines)


def cmd_stats(args: argparse.Namespace) -> int:
    """Sum the usage log: calls, tokens, effort levels, estimated saving; the review judge's apart."""
    from neo_git.ask.usage import read_usage, summarize
    from neo_git.identity import find_repository_paths

    summary = summarize(read_usage(find_repository_paths().neo_dir))
    if args.json:
        print_json(summary)
        return 0
    judge = summary["judge"]
    judged = (f"review judge (`git neo review --judge`): {judge['calls']} calls: {judge['tokens_in']:,} tokens in, "
              f"{judge['tokens_out']:,} out\n") if judge["calls"] else ""
    if not summary["calls"]:
        print("no `git neo ask` calls recorded in this repository yet")
        sys.stdout.write(judged)
        return 0
    out = sys.stdout
    out.write(f"{summary['questions']} questions, {summary['calls']} calls: {summary['tokens_in']:,} tokens in, "
              f"{summary['tokens_out']:,} out ({summary['reasoning_tokens']:,} reasoning)\n")
    out.write(f"{'effort':<8}{'questions':>10}{'calls':>8}{'tokens in':>12}{'tokens out':>12}\n")
    for effort, row in summary["by_effort"].items():
        if row["calls"]:
            out.write(f"{effort:<8}{row['questions']:>10}{row['calls']:>8}{row['tokens_in']:>12,}"
                      f"{row['tokens_out']:>12,}\n")
    out.write(f"estimated saving from lower-effort answers: {summary['estimated_saving_tokens']:,} tokens "
              "(vs the same calls at high effort)\n")
    out.write(judged)
    return 0
