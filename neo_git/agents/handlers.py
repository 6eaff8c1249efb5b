"""What each agent hook event does, once the payload is read and a repository is found."""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from neo_git.agents import turns
from neo_git.agents.context import AGENT_TOKENS, loaded_by_agent, render, session_start_sections
from neo_git.agents.payload import EDIT_TOOLS, PayloadError, file_edits, text_field
from neo_git.agents.session_state import load_state, state_path, update_state
from neo_git.errors import NeoError
from neo_git.identity import RepositoryPaths
from neo_git.readfile import read_regular

_HOOK_EVENT_NAME = {"session-start": "SessionStart", "prompt-submit": "UserPromptSubmit",
                    "pre-tool-use": "PreToolUse", "post-tool-use": "PostToolUse"}
MAX_PROMPT_CHARS = 20_000
# Recall's own budget for the prompt hook: the hook renders one line per fact within
# AGENT_TOKENS, so recall must not drop a relevant fact for the size of its
# whole body (a 4,000-character decision record is ~1,000 tokens, one line ~60).
RECALL_TOKENS = 12_000
MAX_EDITED_BYTES = 2 << 20   # a larger edited file is not read to find an edit's whole lines


@dataclass(frozen=True)
class Answer:
    """What a hook prints (None: nothing) and what to record once the agent has it: the facts
    it was given (de-duplication, the turn's injected facts). A hook that runs out of time
    between the two leaves no fact marked as shown that the agent never saw."""

    output: dict | None = None
    record: Callable[[], None] | None = None

    def delivered(self) -> None:
        """The agent has the output: record what it was given."""
        if self.output is not None and self.record is not None:
            self.record()


@dataclass
class HookContext:
    """One hook invocation: the agent, its payload, and the repository it runs in. In the
    agent's MCP server, `shared_store` is the server's store (the caller holds its lock) and
    `deadline` the hook process's: past it, the work nobody will see is skipped."""

    agent: str
    payload: dict
    repo: Any
    paths: RepositoryPaths
    shared_store: Any = None
    deadline: float | None = None
    embedder: Any = None   # None: the configured one; "hash" while a warm process loads the model (agents/warm.py)

    @classmethod
    def open(cls, agent: str, payload: dict) -> HookContext | None:
        """The context for the payload's `cwd` (None when it is not inside a repository)."""
        from neo_git.errors import NotARepository
        from neo_git.identity import open_repository, repository_paths

        cwd = text_field(payload, "cwd") or os.getcwd()
        try:
            repo = open_repository(cwd)
        except NotARepository:
            return None
        return cls(agent, payload, repo, repository_paths(repo))

    @property
    def session_id(self) -> str:
        """The agent's session id ("unknown" when the payload has none)."""
        return text_field(self.payload, "session_id", 200).strip() or "unknown"

    def timeout_ms(self, default: int) -> int:
        """`neo.agentHookTimeoutMs` (the hook's `NEO_AGENT_HOOK_TIMEOUT_MS` wins: its caller decides)."""
        from neo_git.config import config_int

        return config_int("agentHookTimeoutMs", default, repo=self.repo)

    def in_time(self) -> bool:
        """Is there still someone waiting for the answer?"""
        return self.deadline is None or time.monotonic() < self.deadline

    def store(self):
        """The fact store of this repository (the server's own, when the server answers)."""
        if self.shared_store is not None:
            return self.shared_store
        from neo_git.store import FactStore

        return FactStore(self.repo, embedder=self.embedder)

    # --- events ------------------------------------------------------------------

    def handle(self, event: str) -> Answer:
        """Run *event*: what to print, and what to record once the agent has it."""
        if event == "session-start":
            return self.session_start()
        if event == "prompt-submit":
            return self.prompt_submit()
        if event == "pre-tool-use":
            return self.file_facts("pre-tool-use")
        if event == "post-tool-use":
            self.post_tool_use()
            # Context after an edit too: a file the PreToolUse hook missed (both agents' PostToolUse
            # output takes hookSpecificOutput.additionalContext).
            return self.file_facts("post-tool-use")
        if event in ("stop", "stop-failure"):
            turns.finish_turn(self.paths, self.agent, self.session_id,
                              "error" if event == "stop-failure" else "completed")
            return Answer({} if self.agent == "codex" else None)  # Codex wants JSON on a Stop hook's stdout
        if event == "session-end":
            if self.shared_store is not None:   # the server outlives the hook: close the turn here
                turns.finish_turn(self.paths, self.agent, self.session_id, "interrupted")
                return Answer()
            turns.detach_finish(self.agent, self.session_id, str(self.paths.workdir or self.paths.git_dir),
                          "interrupted")
        return Answer()

    def _output(self, event: str, text: str) -> dict | None:
        if not text:
            return None
        return {"hookSpecificOutput": {"hookEventName": _HOOK_EVENT_NAME[event], "additionalContext": text}}

    def session_start(self) -> Answer:
        """Constraints plus the few highest-valued project facts, once per session."""
        from neo_git.knowledge import conflict_partners

        if not self.in_time():
            return Answer()
        store = self.store()
        facts = store.list()
        if not facts:
            return Answer()
        path = state_path(self.paths, self.agent, self.session_id)
        given = set(load_state(path).given)
        claims = dict(store.untrusted())   # {id: the author each claims}: named in the text
        sections = [(title, [f for f in group if f.id not in given])
                    for title, group in session_start_sections(facts, untrusted=claims, agent=self.agent)]
        text, ids = render(sections, AGENT_TOKENS, untrusted=claims, conflicts=conflict_partners(facts))
        if not ids:
            return Answer()

        def remember(state) -> None:
            state.given.extend(i for i in ids if i not in state.given)
            state.unrecorded.extend(i for i in ids if i not in state.unrecorded)

        def record() -> None:
            update_state(path, remember)
            store.access.record(ids)   # consulted: upkeep never prunes what agents are given
            # Put on record now if a turn is open (a resumed session); else on the first turn.
            if turns.record_injection(self.paths, self.agent, self.session_id, "session-start", ids):
                update_state(path, lambda state: state.unrecorded.clear())

        return Answer(self._output("session-start", text), record)

    def prompt_submit(self) -> Answer:
        """Start the turn first, then the facts relevant to the prompt not given yet. A payload
        without a session id or a prompt string is malformed: it starts no turn."""
        from neo_git.knowledge import asks_about_change

        prompt = self.payload.get("prompt")
        if not isinstance(prompt, str):
            raise PayloadError(f"prompt-submit payload without a prompt string (got {type(prompt).__name__})")
        if not text_field(self.payload, "session_id", 200).strip():
            raise PayloadError("prompt-submit payload without a session_id")
        turn = turns.start_turn(self.paths, self.agent, self.session_id,
                                turn_id=text_field(self.payload, "turn_id", 200) or None)
        path = state_path(self.paths, self.agent, self.session_id)
        earlier: list[str] = []

        def new_turn(state) -> None:
            state.turn_id, state.turn_facts = turn.turn_id, []
            earlier[:] = state.unrecorded
            state.unrecorded = []

        state = update_state(path, new_turn)
        if earlier:
            turns.record_injection(self.paths, self.agent, self.session_id, "session-start", earlier)
        prompt = prompt[:MAX_PROMPT_CHARS].strip()
        if not prompt or not self.in_time():
            return Answer()
        layers = self._recall_layers(prompt, RECALL_TOKENS)
        given = set(state.given)
        changes = []
        if asks_about_change(prompt):  # superseded facts only for "what changed", with their successor
            changes = [(old, layers["successors"][old.id]) for old in layers["invalidated"]
                       if old.id in layers["successors"] and old.id not in given][:2]
        sections = [("Constraints (always apply)", [f for f in layers["constraints"]
                                                    if f.id not in given and not loaded_by_agent(f, self.agent)]),
                    ("Relevant facts", [f for f in layers["valid_facts"] if f.id not in given]),
                    ("What changed (the old text is no longer true)", changes)]
        text, ids = render(sections, AGENT_TOKENS, untrusted=layers["untrusted"], proposals=layers["proposals"],
                           conflicts=layers["conflicts"])
        if not ids:
            return Answer()
        retired = {old.id for old, _ in changes}
        knowledge = [i for i in ids if i not in retired]

        def remember(state) -> None:
            state.given.extend(i for i in ids if i not in state.given)
            state.turn_facts.extend(i for i in knowledge if i not in state.turn_facts)

        def record() -> None:
            update_state(path, remember)
            turns.record_injection(self.paths, self.agent, self.session_id, "prompt-submit", ids)

        return Answer(self._output("prompt-submit", text), record)

    def _recall_layers(self, prompt: str, max_tokens: int) -> dict:
        """Recall's layers for the prompt (in the agent's MCP server when it answers the hook,
        where the facts and vectors are already in memory)."""
        result = self.store().recall(prompt, k=5, max_tokens=max_tokens)
        return {"constraints": result.constraints, "valid_facts": result.valid_facts,
                "invalidated": result.invalidated, "untrusted": result.untrusted,
                "successors": result.successors, "conflicts": result.conflicts, "proposals": result.proposals}

    def file_facts(self, event: str) -> Answer:
        """The facts citing, or scoped to, the files an Edit/Write/MultiEdit/apply_patch call is
        about to change (or just changed) that this session has not been given yet."""
        from neo_git.agents.file_context import facts_for_files
        from neo_git.agents.payload import edited_paths

        tool = text_field(self.payload, "tool_name", 200)
        if tool not in EDIT_TOOLS or not self.in_time():
            return Answer()
        files = []
        for raw in edited_paths(tool, self.payload.get("tool_input")):
            try:
                from neo_git.outcomes.suggestions import normalise_path

                files.append(normalise_path(raw, self.paths.workdir))
            except Exception:  # noqa: BLE001 - a file outside the repository has no facts here
                continue
        if not files:
            return Answer()
        path = state_path(self.paths, self.agent, self.session_id)
        given = set(load_state(path).given)
        store = self.store()
        sections, claims = facts_for_files(store, files, given)
        text, ids = render(sections, AGENT_TOKENS, untrusted=claims)
        if not ids:
            return Answer()

        from neo_git.recall import about_file

        by_id = {f.id: f for _, group in sections for f in group}
        for_file = {name: [i for i in ids if i in by_id and about_file(by_id[i], name)] for name in files}

        def remember(state) -> None:
            state.given.extend(i for i in ids if i not in state.given)
            state.turn_facts.extend(i for i in ids if i not in state.turn_facts)
            for name, given_for in for_file.items():
                if given_for:
                    kept = state.file_facts.pop(name, [])   # re-inserted: the newest paths are kept
                    state.file_facts[name] = kept + [i for i in given_for if i not in kept]

        def record() -> None:
            update_state(path, remember)
            store.access.record(ids)   # consulted: upkeep never prunes what agents are given

        return Answer(self._output(event, text), record)

    def _file_now(self, path: str) -> str | None:
        """A file of the work tree as the agent left it (None: outside it, missing, over
        `MAX_EDITED_BYTES`, or not UTF-8): where an edit's fragment is found in its whole lines."""
        from pathlib import Path

        base = self.paths.workdir
        if base is None:
            return None
        target = Path(path) if os.path.isabs(path) else Path(text_field(self.payload, "cwd") or base) / path
        try:
            target.resolve().relative_to(Path(base).resolve())
            # A FIFO would block the hook until its time limit; a device never ends.
            return read_regular(target, MAX_EDITED_BYTES).decode("utf-8")
        except (OSError, ValueError, UnicodeDecodeError, NeoError):
            return None

    def post_tool_use(self) -> None:
        """A file edit becomes a pending suggestion (what the agent wrote); the turn progresses."""
        tool = text_field(self.payload, "tool_name", 200)
        if tool in EDIT_TOOLS:
            from neo_git.outcomes.suggestions import normalise_path, record_suggestion

            state = load_state(state_path(self.paths, self.agent, self.session_id))
            for edit in file_edits(tool, self.payload.get("tool_input"), self.payload.get("tool_response"),
                                   self._file_now):
                try:
                    file = normalise_path(edit.path, self.paths.workdir)
                except Exception:  # noqa: BLE001 - an edit outside the repository is not ours to track
                    continue
                relied = relied_by_edit(edit, state.file_facts.get(file, ()), state.turn_facts)
                record_suggestion(self.repo, self.paths, file=edit.path, code=edit.written, diff=edit.diff,
                                  description=f"{self.agent} {tool} edit", fact_ids=relied,
                                  context_ids=[i for i in state.turn_facts if i not in relied],
                                  origin="agent", agent=self.agent, session_id=self.session_id,
                                  turn_id=text_field(self.payload, "turn_id", 200) or state.turn_id)
        turns.progress_turn(self.paths, self.agent, self.session_id)


def relied_by_edit(edit, given_for_file, turn_facts) -> list[str]:
    """The facts an agent's edit relies on: those given to it for the edited file, and those of
    its turn that the edit names (a fact id, or a prefix of 8 or more hex digits, in what it
    wrote). The turn's other facts were only present: an outcome moves them only when they
    turn out to cite, or be scoped to, the file (`outcomes.confidence.relied_on`)."""
    text = f"{edit.written or ''}\n{edit.diff or ''}".lower()
    named = [i for i in turn_facts if i[:8] in text]
    return list(dict.fromkeys([*given_for_file, *named]))
