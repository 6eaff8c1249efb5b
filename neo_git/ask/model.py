"""Value types of an ask: what goes to a model, what comes back, and the typed result."""
from __future__ import annotations

from dataclasses import asdict, dataclass

EFFORTS = ("low", "medium", "high", "xhigh")


def effort_rank(effort: str) -> int:
    """Position of *effort* in EFFORTS (low = 0)."""
    return EFFORTS.index(effort)


@dataclass(frozen=True)
class ModelRequest:
    """One call: system instructions, the user message, the effort, and its limits."""

    system: str
    prompt: str
    effort: str
    stage: str = "answer"          # answer | plan | code | critic | repair | judge
    max_output_tokens: int = 8192
    timeout: float = 60.0
    # A JSON schema the reply must follow, sent as the API's structured-output setting (OpenAI
    # `text.format` / `response_format` with strict true, Anthropic `output_config.format`, Ollama
    # `format`); None: free text. The reply is still validated: a compatible server may ignore it.
    schema: dict | None = None
    schema_name: str = "reply"


@dataclass(frozen=True)
class ModelReply:
    """What a provider returns: the text and the usage it reported."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0             # includes reasoning/thinking tokens, as the APIs bill them
    reasoning_tokens: int | None = None
    model: str = ""


@dataclass(frozen=True)
class CallRecord:
    """Accounting of one call."""

    stage: str
    effort: str
    tokens_in: int
    tokens_out: int
    reasoning_tokens: int | None
    seconds: float


@dataclass(frozen=True)
class ProposedChange:
    """One suggestion from the model, after validation and verification."""

    file: str
    code: str | None = None
    diff: str | None = None
    description: str = ""
    fact_ids: tuple[str, ...] = ()
    confidence: float = 0.5
    problems: tuple[str, ...] = ()     # what verification found (empty = passed)

    def to_dict(self) -> dict:
        """JSON form."""
        data = asdict(self)
        data["fact_ids"] = list(self.fact_ids)
        data["problems"] = list(self.problems)
        return data


@dataclass(frozen=True)
class EffortDecision:
    """Why an effort was chosen: difficulty, relevant facts, the cap."""

    difficulty: str
    time_budget: int
    effort: str
    memory_effort: str             # before the cap
    relevant: int
    mean_confidence: float
    familiar: bool
    cap: str | None = None
    reason: str = ""

    def to_dict(self) -> dict:
        """JSON form."""
        return asdict(self)


@dataclass(frozen=True)
class AskResult:
    """The answer to one question (`NeoEngine.ask`, `git neo ask --json`)."""

    question: str
    provider: str
    model: str
    decision: EffortDecision
    plan: tuple[str, ...] = ()
    suggestions: tuple[ProposedChange, ...] = ()
    cited_facts: tuple[str, ...] = ()
    confidence: float = 0.0
    verified: bool = False
    calls: tuple[CallRecord, ...] = ()
    stopped: str | None = None        # why the loop ended early ("time budget", ...)
    notes: tuple[str, ...] = ()
    recorded: tuple[str, ...] = ()    # ids of the pending suggestions written
    messages: dict | None = None      # the first call's messages (dry run, provider none)
    answered: bool = True             # False for --dry-run and the none provider

    @property
    def effort(self) -> str:
        """The effort the calls used."""
        return self.decision.effort

    @property
    def difficulty(self) -> str:
        """easy | medium | hard."""
        return self.decision.difficulty

    @property
    def tokens_in(self) -> int:
        """Input tokens over all calls."""
        return sum(c.tokens_in for c in self.calls)

    @property
    def tokens_out(self) -> int:
        """Output tokens (reasoning included) over all calls."""
        return sum(c.tokens_out for c in self.calls)

    def to_dict(self) -> dict:
        """The `git neo ask --json` object."""
        return {
            "question": self.question, "provider": self.provider, "model": self.model,
            "answered": self.answered, "effort": self.effort, "difficulty": self.difficulty,
            "decision": self.decision.to_dict(), "plan": list(self.plan),
            "suggestions": [s.to_dict() for s in self.suggestions],
            "cited_facts": list(self.cited_facts), "confidence": round(self.confidence, 3),
            "verified": self.verified, "stopped": self.stopped, "notes": list(self.notes),
            "recorded": list(self.recorded),
            "tokens": {"in": self.tokens_in, "out": self.tokens_out,
                       "reasoning": sum(c.reasoning_tokens or 0 for c in self.calls)},
            "calls": [asdict(c) for c in self.calls],
            "messages": self.messages,
        }
