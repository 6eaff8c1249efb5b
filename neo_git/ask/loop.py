"""The reasoning loop: one call for easy or familiar questions, otherwise plan → code →
critic with one repair round when the critic asks for it.

- Early exit: after the code step, when the model's confidence is > 0.8 and every
  suggestion passed verification, the critic is skipped.
- Time budget (30/60/120 s by difficulty): each call's timeout is what is left of it;
  when less than MIN_CALL_SECONDS is left, or a later call times out, the loop stops
  and returns what is ready (`stopped` says why). A first call that fails is an error.
- A reply that cannot be read is asked for once more with the parse error; a second
  failure is reported (an error on the first step, a note later on).
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from neo_git.ask.call_limit import complete_within
from neo_git.ask.model import CallRecord, EffortDecision, ModelRequest, ProposedChange
from neo_git.ask.prompt import build_messages
from neo_git.ask.providers import Provider, ProviderError
from neo_git.ask.replies import Answer, Critique, ReplyError, parse_answer, parse_critique
from neo_git.ask.verify import Rule, verify
from neo_git.errors import NeoError

EARLY_EXIT_CONFIDENCE = 0.8
MIN_CALL_SECONDS = 1.0
MAX_OUTPUT_TOKENS = 8192


class _OutOfTime(Exception):
    pass


def first_stage(decision: EffortDecision) -> str:
    """"answer" (one call) for easy or familiar questions, else "plan"."""
    return "answer" if decision.familiar or decision.difficulty == "easy" else "plan"


@dataclass
class LoopOutcome:
    """What the loop produced (possibly partial)."""

    plan: tuple[str, ...] = ()
    suggestions: tuple[ProposedChange, ...] = ()
    facts: tuple[str, ...] = ()
    confidence: float = 0.0
    verified: bool = False
    calls: list[CallRecord] = field(default_factory=list)
    stopped: str | None = None
    notes: list[str] = field(default_factory=list)


class ReasoningLoop:
    """Runs the calls for one question against one provider."""

    def __init__(self, provider: Provider, context_text: str, known_ids: set[str], rules: list[Rule],
                 decision: EffortDecision, *, clock: Callable[[], float] = time.monotonic,
                 max_output_tokens: int = MAX_OUTPUT_TOKENS) -> None:
        self.provider = provider
        self.context_text = context_text
        self.known_ids = known_ids
        self.rules = rules
        self.decision = decision
        self.clock = clock
        self.max_output_tokens = max_output_tokens
        self.deadline = clock() + decision.time_budget
        self.out = LoopOutcome()

    def run(self) -> LoopOutcome:
        """All the steps the question needs; returns what is ready when time runs out."""
        try:
            if first_stage(self.decision) == "answer":
                self._take(self._answer("answer"))
            else:
                self._plan_code_critic()
        except _OutOfTime as exc:
            self.out.stopped = str(exc)
        return self.out

    # --- the steps ---------------------------------------------------------------

    def _plan_code_critic(self) -> None:
        plan = self._answer("plan")
        assert plan is not None   # the first step raises rather than answer nothing
        self.out.plan, self.out.confidence = plan.plan, plan.confidence
        self._cite(plan.facts)
        plan_text = "# Plan (from the previous step)\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(plan.plan, 1))
        if plan.files:
            plan_text += "\nFiles: " + ", ".join(plan.files)
        code = self._answer("code", plan_text)
        self._take(code, keep_plan=True)
        if self.out.confidence > EARLY_EXIT_CONFIDENCE and self.out.verified:
            self.out.notes.append("early exit: confident and verified, no critic needed")
            return
        review = self._suggestions_text(plan_text)
        critique = self._critique(review)
        if critique is None:
            return
        if critique.verdict == "accept":
            self.out.confidence = critique.confidence
            return
        problems = "# Problems to fix\n" + "\n".join(f"- {p}" for p in critique.problems or ("(unspecified)",))
        repaired = self._answer("repair", review + "\n" + problems, later=True)
        if repaired is not None:
            self._take(repaired, keep_plan=True)
            self.out.notes.append("repaired once after the critic's review")

    def _suggestions_text(self, plan_text: str) -> str:
        shown = [{"file": s.file, "code": s.code, "diff": s.diff, "description": s.description,
                  "facts": list(s.fact_ids), "verification_problems": list(s.problems)}
                 for s in self.out.suggestions]
        return plan_text + "\n# Suggestions to review\n" + json.dumps(shown, indent=1, ensure_ascii=False)

    def _take(self, answer: Answer | None, keep_plan: bool = False) -> None:
        if answer is None:
            return
        if not keep_plan or not self.out.plan:   # the plan step's plan stands; later steps only code
            self.out.plan = answer.plan
        checked, passed = verify(answer.suggestions, self.rules)
        self.out.suggestions = tuple(checked)
        self.out.verified = passed
        self.out.confidence = answer.confidence
        self._cite(answer.facts)

    def _cite(self, facts) -> None:
        self.out.facts = tuple(dict.fromkeys((*self.out.facts, *facts)))

    def _critique(self, review: str) -> Critique | None:
        try:
            return self._call("critic", review, parse_critique)
        except (ReplyError, ProviderError) as exc:
            self.out.notes.append(f"critic step failed, keeping the code as it is: {exc}")
            return None

    def _answer(self, stage: str, extra: str = "", later: bool | None = None) -> Answer | None:
        later = bool(self.out.calls) if later is None else later
        try:
            answer = self._call(stage, extra, lambda text: parse_answer(text, self.known_ids))
        except ReplyError as exc:
            if not later:
                raise NeoError(f"the model's reply could not be read twice ({exc})",
                               "try again, or another --model; --json shows what was understood") from None
            self.out.notes.append(f"{stage} step: the reply could not be read twice ({exc}); kept what was ready")
            return None
        except ProviderError as exc:
            if not later or exc.kind not in ("timeout", "rate_limit", "server", "connection"):
                raise
            raise _OutOfTime(f"{stage} step failed ({exc.message}); kept what was ready") from None
        self.out.notes.extend(answer.dropped)
        return answer

    # --- one call, with one retry for an unreadable reply --------------------------

    def _call(self, stage: str, extra: str, parse):
        text = self._send(stage, extra)
        try:
            return parse(text)
        except ReplyError as first:
            retry = (f"{extra}\n# Your previous reply could not be used ({first}). "
                     "Reply again with only the JSON object of the required form.")
            return parse(self._send(stage, retry))

    def _send(self, stage: str, extra: str) -> str:
        left = self.deadline - self.clock()
        if left < MIN_CALL_SECONDS:
            raise _OutOfTime(f"time budget of {self.decision.time_budget} s reached before the {stage} step")
        system, user = build_messages(stage, self.context_text, extra)
        timeout = min(self.provider.settings.timeout, left)
        started = self.clock()
        reply = complete_within(self.provider, ModelRequest(system, user, self.decision.effort, stage,
                                                            self.max_output_tokens, timeout))
        self.out.calls.append(CallRecord(stage, self.decision.effort, reply.tokens_in, reply.tokens_out,
                                         reply.reasoning_tokens, round(self.clock() - started, 3)))
        return reply.text
