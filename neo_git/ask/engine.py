"""`NeoEngine`: the library entry point of `git neo ask` (and of agents and benchmarks).

    engine = NeoEngine.open(".")                      # provider/model from settings
    result = engine.ask("why does the importer retry on 429?", files=["src/importer.py"])

One ask: read the included files, find patterns, judge the previous question,
recall, decide difficulty and effort, assemble the prompt, run the loop (or stop
there for a dry run or the `none` provider), record the suggestions, log the tokens.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from neo_git.ask.effort import check_effort, decide, lower_effort
from neo_git.ask.model import AskResult
from neo_git.ask.prompt import (
    MAX_FILE_CHARS,
    AskContext,
    build_messages,
    find_patterns,
    read_included,
    render_context,
)
from neo_git.errors import NeoError

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.ask.providers import Provider
    from neo_git.store import FactStore

RECALL_K = 8
RECALL_MAX_TOKENS = 12000


class NeoEngine:
    """Memory-backed asking: one repository's facts, one provider."""

    def __init__(self, store: FactStore, provider: Provider | None = None, *,
                 provider_name: str | None = None, model: str | None = None) -> None:
        from neo_git.ask.providers import make_provider
        from neo_git.ask.settings import resolve_settings

        self.store = store
        self.provider = provider or make_provider(resolve_settings(provider_name, model, repo=store.repo))

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, *, provider: str | None = None, model: str | None = None,
             embedder=None) -> NeoEngine:
        """An engine for the repository at *path* (default: the current directory)."""
        from neo_git.store import FactStore

        return cls(FactStore.open(path, embedder=embedder), provider_name=provider, model=model)

    def max_effort(self) -> str | None:
        """`neo.maxEffort` (None when unset)."""
        from neo_git.config import neo_config

        return check_effort(neo_config("maxEffort", None, repo=self.store.repo), "neo.maxEffort")

    def relevant_score(self) -> float:
        """The cosine from which a ranked fact recall returned counts as relevant: any, since recall
        already decided (`neo_git.relevance`, the one decision recall, MCP and the agent hooks
        share; `neo.relevanceFloor` when set)."""
        return -1.0

    def ask(self, question: str, files: Sequence[str] = (), *, effort: str | None = None, dry_run: bool = False,
            record: bool = True, force_effort: str | None = None, cwd: str | os.PathLike | None = None) -> AskResult:
        """Answer *question* with the facts the memory holds and the included *files*.

        *effort* caps the effort (like `neo.maxEffort`; the lower wins); *force_effort* sets it
        outright (benchmarks: "always high"). With *dry_run* (or the none provider) nothing is
        sent: the result carries the messages that would be. *record* = False leaves no trace
        (no suggestions, no usage, no confidence change)."""
        from neo_git.config import config_int
        from neo_git.facts import check_text

        question = check_text("question", ensure_question(question), 20_000)
        store = self.store
        assert store.paths is not None   # ask works in a repository
        settings = self.provider.settings
        answering = self.provider.calls_model and not dry_run
        cap = lower_effort(check_effort(effort, "--effort"), self.max_effort())
        per_file = config_int("askMaxFileChars", MAX_FILE_CHARS, repo=store.repo)
        included, notes = read_included(list(files), store.paths.workdir, self._base_dir(cwd), per_file=per_file)
        notes = list(notes)
        if answering and record:
            from neo_git.ask.learning import judge_previous

            relation, adjusted = judge_previous(store, question)
            if adjusted:
                verb = "lowered" if relation == "repeat" else "raised"
                notes.append(f"previous question {relation}: {verb} the confidence of {len(adjusted)} fact(s)")
        recall = store.recall(question, k=RECALL_K, max_tokens=RECALL_MAX_TOKENS)
        patterns = find_patterns(question, store.paths.workdir, embedder=store.embedder)
        context = AskContext(question, recall, tuple(included), tuple(patterns))
        scored = [(recall.relevance.get(f.id, 0.0), f.metadata.confidence) for f in recall.valid_facts]
        decision = decide(question, scored, context_chars=context.context_chars, cap=cap,
                          relevant_score=self.relevant_score())
        if force_effort:
            decision = replace(decision, effort=check_effort(force_effort, "force_effort") or decision.effort,
                               reason=decision.reason + f"; forced to {force_effort}")
        context_text = render_context(context)
        base = AskResult(question=question, provider=self.provider.name, model=settings.model, decision=decision,
                         notes=tuple(notes))
        from neo_git.ask.loop import ReasoningLoop, first_stage

        if not answering:
            stage = first_stage(decision)
            system, user = build_messages(stage, context_text)
            return replace(base, answered=False, messages={"stage": stage, "effort": decision.effort,
                                                           "system": system, "user": user})
        from neo_git.ask.verify import rules_from_constraints

        outcome = ReasoningLoop(self.provider, context_text, context.fact_ids,
                                rules_from_constraints(recall.constraints), decision).run()
        result = replace(base, plan=outcome.plan, suggestions=outcome.suggestions, cited_facts=outcome.facts,
                         confidence=outcome.confidence, verified=outcome.verified, calls=tuple(outcome.calls),
                         stopped=outcome.stopped, notes=tuple(notes + outcome.notes))
        if not record:
            return result
        return self._record(result)

    def _base_dir(self, cwd: str | os.PathLike | None) -> Path | None:
        """Where relative --include paths start: *cwd*, else the current directory when it is
        inside the work tree (the CLI), else the work tree (a library caller elsewhere)."""
        if cwd is not None:
            return Path(cwd)
        assert self.store.paths is not None   # ask works in a repository
        workdir = self.store.paths.workdir
        here = Path.cwd().resolve()
        if workdir is None or here == Path(workdir).resolve() or Path(workdir).resolve() in here.parents:
            return here
        return Path(workdir)

    def _record(self, result: AskResult) -> AskResult:
        from neo_git.ask.learning import record_answer, remember_question
        from neo_git.ask.usage import log_result
        from neo_git.facts import new_fact_id

        recorded, notes = record_answer(self.store, result.suggestions, result.cited_facts)
        remember_question(self.store, result.question, result.cited_facts)
        assert self.store.paths is not None   # ask works in a repository
        log_result(self.store.paths.neo_dir, new_fact_id(), result)
        return replace(result, recorded=tuple(recorded), notes=result.notes + tuple(notes))


def ensure_question(question: str) -> str:
    """*question* stripped; NeoError when empty."""
    if not isinstance(question, str) or not question.strip():
        raise NeoError("the question is empty", 'git neo ask "what you want to know"')
    return question.strip()
