"""Secrets never leave: the same table of kinds (tests/secrets/kinds.py) through every path that
writes or sends text — add, MCP, import (metadata too), ingest, suggestions and agent edits
under .git/neo, outcome notes, the hook and crash logs, ask prompts with --include, export."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import commit_files, git
from tests.secrets.kinds import KINDS, leaks

REF = "refs/neo/facts"


def _ref_text(repo: Path) -> str:
    """Everything on the facts ref: every commit message and every blob ever written."""
    return git(repo, "log", "-p", "--format=%B", REF, check=False)


def _run(capsys, *args: str):
    from neo_git.cli import main

    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def here(repo_with_commit, monkeypatch):
    monkeypatch.chdir(repo_with_commit)
    monkeypatch.setenv("NEO_EMBEDDER", "hash")
    return repo_with_commit


def test_add(here, capsys):
    for n, (kind, line, _secret) in enumerate(KINDS):
        first = line.splitlines()[0]
        subject = f"rule {n}: {first}" if len(first) < 180 else f"rule {n}"
        code, out, err = _run(capsys, "add", "--kind", "decision", subject, f"context for rule {n}\n{line}")
        assert code == 0, (kind, err)
        assert not leaks(out + err), kind
    assert leaks(_ref_text(here)) == []


def test_import_redacts_metadata_too(here, capsys, tmp_path):
    from neo_git.identity import neo_home

    facts = []
    for n, (_kind, line, _secret) in enumerate(KINDS):
        short = line if len(line) <= 200 else f"prompt {n}"   # the fields' limits; a cut secret is not the test
        for scope in ("project", "global"):
            facts.append({"subject": f"imported {scope} {n}", "body": line, "kind": "pattern", "scope": scope,
                          "metadata": {"source_prompt": short, "author": short, "invalidation": None}})
    facts.append({"subject": "retracted one", "body": "old", "kind": "pattern", "scope": "project",
                  "is_valid": False, "metadata": {"invalidation": {
                      "reason": "retracted", "detail": " ".join(line for _k, line, _s in KINDS)[:4000]}}})
    path = tmp_path / "neo.json"
    path.write_text(json.dumps({"version": "2.0", "facts": facts}), encoding="utf-8")
    code, out, err = _run(capsys, "import", str(path))
    assert code == 0, err
    assert leaks(_ref_text(here)) == []
    stored = "".join(p.read_text(encoding="utf-8") for p in (neo_home() / "facts").glob("*.json"))
    assert "imported global" in stored
    assert leaks(stored) == []


def test_export_redacts_what_a_hand_written_file_holds(here, capsys, tmp_path):
    from neo_git.identity import neo_home

    folder = neo_home() / "facts"
    folder.mkdir(parents=True, exist_ok=True)
    facts = [{"id": f"{n:016x}", "subject": f"old global {n}", "body": line, "kind": "pattern", "scope": "global",
              "metadata": {"created_at": "2026-01-01T00:00:00+00:00",
                           "source_prompt": line if len(line) <= 200 else None}}
             for n, (_k, line, _s) in enumerate(KINDS)]
    (folder / "facts_global.json").write_text(json.dumps({"version": "2.0", "facts": facts}), encoding="utf-8")
    target = tmp_path / "export.json"
    code, _out, err = _run(capsys, "export", str(target))
    assert code == 0, err
    text = target.read_text(encoding="utf-8")
    assert "old global 0" in text
    assert leaks(text) == []


def test_ingest(here, capsys):
    sections = "".join(f"## Rule {n}\n\nAlways do thing {n}. {line}\n\n" for n, (_k, line, _s) in enumerate(KINDS))
    commit_files(here, {"CLAUDE.md": "# Project rules\n\n" + sections}, "instructions")
    code, out, err = _run(capsys, "ingest")
    assert code == 0, err
    assert "Rule 1" in _ref_text(here)
    assert leaks(_ref_text(here)) == []
    assert leaks(out + err) == []


def test_suggestions_and_outcome_notes(here, capsys, tmp_path):
    from tests.outcome_helpers import process_head

    body = "\n".join(f"SETTING_{n} = 1  # {line.splitlines()[-1]}" for n, (_k, line, _s) in enumerate(KINDS))
    commit_files(here, {"src/app.py": "import os\n"}, "app")
    code_file = tmp_path / "code.py"
    code_file.write_text("import os\n" + body + "\n", encoding="utf-8")
    description = " | ".join(line for _k, line, _s in KINDS)[:1900]
    code, _out, err = _run(capsys, "suggest", "--file", "src/app.py", "--code-file", str(code_file),
                           "--description", description)
    assert code == 0, err
    stored = (here / ".git" / "neo" / "suggestions.json").read_text(encoding="utf-8")
    assert "SETTING_1" in stored
    assert leaks(stored) == []
    commit_files(here, {"src/app.py": "import os\n" + body + "\n"}, "ship it")
    process_head(here)
    notes = git(here, "log", "-p", "--format=%B", "refs/notes/neo", check=False)
    assert "outcome" in notes
    assert leaks(notes) == []
    code, out, err = _run(capsys, "outcomes")
    assert code == 0 and leaks(out + err) == []


def test_agent_edits_kept_as_suggestions(here):
    from tests.agents.helpers import payload, run_hook

    content = "\n".join(line for _k, line, _s in KINDS)
    commit_files(here, {"src/app.py": "import os\n"}, "app")
    data = payload("claude_post_tool_use_write", here) if (
        Path(__file__).parents[1] / "agents" / "fixtures" / "claude_post_tool_use_write.json").exists() else None
    if data is None:
        data = {"session_id": "s1", "cwd": str(here), "hook_event_name": "PostToolUse", "tool_name": "Write",
                "tool_input": {"file_path": str(here / "src" / "app.py"), "content": content}}
    else:
        data["tool_input"] = {"file_path": str(here / "src" / "app.py"), "content": content}
    code, _out, _raw = run_hook("PostToolUse", "claude", data)
    assert code == 0
    stored = (here / ".git" / "neo" / "suggestions.json").read_text(encoding="utf-8")
    assert "src/app.py" in stored
    assert leaks(stored) == []


def test_hook_log_and_crash_log(here, capsys, monkeypatch):
    from neo_git.hooklog import append_hook_log

    neo_dir = here / ".git" / "neo"
    for _kind, line, _secret in KINDS:
        append_hook_log(neo_dir, f"post-commit failed: {line}")
    assert leaks((neo_dir / "hook.log").read_text(encoding="utf-8")) == []

    import neo_git.cli.facts as facts_cli

    secrets_text = " ".join(line for _k, line, _s in KINDS)

    def broken(args):
        raise RuntimeError(f"bug while adding {args.subject}: {secrets_text}")

    monkeypatch.setattr(facts_cli, "cmd_add", broken)
    code, _out, err = _run(capsys, "add", "subject with " + KINDS[0][1], secrets_text)
    assert code == 3
    assert leaks(err) == []
    [log] = list(neo_dir.glob("crash-*.log"))
    text = log.read_text(encoding="utf-8")
    assert "RuntimeError" in text and "git neo add" in text
    assert leaks(text) == []
    assert text.startswith("command: git neo add\n") and "argv" not in text   # no argv in the crash log


def test_ask_prompt_with_included_files(here, capsys):
    commit_files(here, {"src/settings.py": "\n".join(f"# {line.splitlines()[-1]}" for _k, line, _s in KINDS)
                        + "\nDEBUG = False\n"}, "settings")
    for _kind, line, _secret in KINDS[:5]:
        _run(capsys, "add", "--kind", "decision", "deploy settings", line)
    code, out, err = _run(capsys, "ask", "how do the deploy settings work?", "--include", "src/settings.py",
                          "--provider", "none", "--show-prompt")
    assert code == 0, err
    assert "src/settings.py" in out and "DEBUG = False" in out
    assert leaks(out + err) == []


def test_mcp_add_fact(here):
    pytest.importorskip("mcp")
    from tests.agents.test_mcp_server import run_session

    async def script(session):
        results = []
        for n, (_kind, line, _secret) in enumerate(KINDS):
            results.append(await session.call_tool("add_fact", {"subject": f"mcp rule {n}", "body": line,
                                                                "kind": "decision"}))
        return results

    results = run_session(here, script)
    assert all(not r.is_error for r in results)
    assert leaks(json.dumps([r.structured_content for r in results])) == []
    assert leaks(_ref_text(here)) == []
