"""Secrets never leave: the table of kinds (tests/secrets/kinds.py: ~360 — hand cases, issue 37's
forms, a fresh sample of every rule adopted from gitleaks and detect-secrets) through every path
that writes or sends text, measured by grepping every artifact: the facts ref (every blob and
commit message ever written), outcome notes, every file under .git/neo and ~/.neo, exports,
reports, MCP replies, hook output and logs, and the requests a loopback model server received.

Fast enough for CI: the whole corpus goes through the library API (one fact per secret, batched
commits) and the one-shot paths (import, export, ingest, suggest, agent edit, ask); the real CLI
and MCP paths take it in chunks of many lines per call."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.git import commit_files, git
from tests.secrets.kinds import KINDS, leaks

REF = "refs/neo/facts"
CHUNK = 45


def _chunks(rows, size: int = CHUNK):
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def _ref_text(repo: Path) -> str:
    """Everything on the facts ref: every commit message and every blob ever written."""
    return git(repo, "log", "-p", "--format=%B", REF, check=False)


def _artifacts(repo: Path) -> str:
    """The facts ref and notes with their history, and every file under .git/neo and ~/.neo."""
    from neo_git.identity import neo_home

    parts = [_ref_text(repo), git(repo, "log", "-p", "--format=%B", "refs/notes/neo", check=False)]
    for root in (repo / ".git" / "neo", neo_home()):
        if root.exists():
            parts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.rglob("*"))
                      if p.is_file() and not p.name.endswith((".npy", ".bin", ".lock", ".sock"))]
    return "\n".join(parts)


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


def _standalone():
    """The kinds whose secret is caught on its own (a token, not a value known by its name)."""
    from neo_git.redact import contains_secret

    return [(k, line, s) for k, line, s in KINDS if " " not in s and "\n" not in s and contains_secret(s)]


def test_library_every_scope_and_invalidate(here):
    """One fact per secret (subject, body, source prompt) in the project, global and session
    scopes, then retracted with the secrets as the reason."""
    from neo_git.store import FactStore

    store = FactStore.open(here, embedder="hash")
    scopes = ("project", "global", "session")
    items = []
    for n, (_kind, line, _secret) in enumerate(KINDS):
        first = line.splitlines()[0]
        items.append({"subject": f"rule {n}: {first}" if len(first) < 180 else f"rule {n}",
                      "body": f"context for rule {n}\n{line}", "kind": "decision", "scope": scopes[n % 3],
                      "source_prompt": f"remember this: {line}"})
    facts = store.add_many(items)
    assert len(facts) == len(KINDS)
    for fact, chunk in zip(facts[::3], _chunks(KINDS, 4)):
        store.invalidate(fact.id, " | ".join(line for _k, line, _s in chunk)[:1000])
    stored = _artifacts(here)
    assert "rule 1:" in stored and "rule 2:" in stored
    assert leaks(stored) == []


def test_cli_add_every_scope_invalidate_list_and_report(here, capsys, tmp_path):
    ids = []
    for n, chunk in enumerate(_chunks(KINDS)):
        first = chunk[0][1].splitlines()[0]
        subject = f"chunk {n}: {first}" if len(first) < 150 else f"chunk {n}"
        body = "\n".join(line for _k, line, _s in chunk)
        code, out, err = _run(capsys, "add", "--kind", "decision", "--scope", ("project", "global", "session")[n % 3],
                              "--json", subject, body)
        assert code == 0, err
        assert leaks(out + err, chunk) == []
        ids.append(json.loads(out)["id"])
    reason = " ".join(line for _k, line, _s in KINDS[:12])[:1000]
    code, out, err = _run(capsys, "invalidate", ids[0], "--reason", reason)
    assert code == 0, err
    code, out, err = _run(capsys, "list", "--all")
    assert code == 0 and "chunk 1" in out
    assert leaks(out + err) == []
    commit_files(here, {"deploy.sh": "#!/bin/sh\n"}, "deploy with " + KINDS[9][1].splitlines()[0])   # shown on the page
    page = tmp_path / "report.html"
    code, out, err = _run(capsys, "report", "--out", str(page))
    assert code == 0, err
    assert leaks(page.read_text(encoding="utf-8") + out + err) == []
    assert leaks(_artifacts(here)) == []


def test_tags_path_globs_and_citations_holding_a_secret_are_refused(here, capsys):
    """A short field cannot be redacted in place: it is refused (fatal + hint, exit 1), never written."""
    from neo_git.errors import InvalidFact
    from neo_git.store import FactStore

    store = FactStore.open(here, embedder="hash")
    before = git(here, "rev-parse", "-q", "--verify", REF, check=False).strip()
    tokens = _standalone()
    assert len(tokens) >= 150
    for _kind, _line, secret in tokens:
        for field in ({"paths": [f"src/{secret}/**"]}, {"paths": [secret]}, {"tags": [secret]}):
            with pytest.raises(InvalidFact, match="looks like a secret"):
                store.add("Deploy settings", "Where the deploy settings live.", **field)
    for _kind, _line, secret in tokens[::40]:
        for flag in ("--path", "--tag"):
            code, out, err = _run(capsys, "add", "Deploy settings", "Where they live.", flag, f"src/{secret}/*.py"
                                  if flag == "--path" else secret)
            assert code == 1 and "fatal:" in err and "hint:" in err, err
            assert leaks(out + err) == []
    name = f"notes/{tokens[0][2]}.md"
    commit_files(here, {name: "# notes\n"}, "notes")
    code, out, err = _run(capsys, "add", "Notes", "See the notes.", "--cite", name)
    assert code == 1 and "fatal:" in err, err
    assert git(here, "rev-parse", "-q", "--verify", REF, check=False).strip() == before
    assert leaks(_artifacts(here)) == []


def test_import_redacts_metadata_too_and_before_the_cut(here, capsys, tmp_path):
    from neo_git.identity import neo_home

    facts = []
    for n, (_kind, line, _secret) in enumerate(KINDS):
        scope = ("project", "global")[n % 2]
        facts.append({"subject": f"imported {scope} {n}", "body": line, "kind": "pattern", "scope": scope,
                      "metadata": {"source_prompt": f"asked in session {n}: {line}", "author": line[:500],
                                   "invalidation": None}})
    facts.append({"body": KINDS[3][1] + "\nthe rest of the body", "kind": "pattern", "scope": "project"})
    facts.append({"subject": "retracted one", "body": "old", "kind": "pattern", "scope": "project",
                  "is_valid": False, "metadata": {"invalidation": {
                      "reason": "retracted", "detail": " ".join(line for _k, line, _s in KINDS)[:4000]}}})
    token = "ghp_" + "Xq7Lm2Rt9Vb4Nc8Kd1Fs6Hj3Wp5Yz0Ae7Gu"
    for offset in range(160, 200, 2):   # the token straddles character 200, where the prompt is cut
        facts.append({"subject": f"straddle {offset}", "body": "b", "kind": "pattern", "scope": "project",
                      "metadata": {"source_prompt": "p" * offset + " " + token + " tail"}})
    path = tmp_path / "neo.json"
    path.write_text(json.dumps({"version": "2.0", "facts": facts}), encoding="utf-8")
    code, out, err = _run(capsys, "import", str(path))
    assert code == 0, err
    stored = _artifacts(here)
    assert "imported global" in "".join(p.read_text() for p in (neo_home() / "facts").glob("*.json"))
    assert "straddle 198" in stored
    assert leaks(stored) == []
    assert token[4:12] not in stored and token[-8:] not in stored


def test_export_redacts_what_a_hand_written_file_holds(here, capsys, tmp_path):
    from neo_git.identity import neo_home

    folder = neo_home() / "facts"
    folder.mkdir(parents=True, exist_ok=True)
    facts = [{"id": f"{n:016x}", "subject": f"old global {n}", "body": line, "kind": "pattern", "scope": "global",
              "metadata": {"created_at": "2026-01-01T00:00:00+00:00", "source_prompt": line}}
             for n, (_k, line, _s) in enumerate(KINDS)]
    (folder / "facts_global.json").write_text(json.dumps({"version": "2.0", "facts": facts}), encoding="utf-8")
    target = tmp_path / "export.json"
    code, out, err = _run(capsys, "export", str(target))
    assert code == 0, err
    text = target.read_text(encoding="utf-8")
    assert "old global 0" in text
    assert leaks(text + out + err) == []


def test_ingest(here, capsys):
    sections = "".join(f"## Rule {n}\n\nAlways do thing {n}. {line}\n\n" for n, (_k, line, _s) in enumerate(KINDS))
    commit_files(here, {"CLAUDE.md": "# Project rules\n\n" + sections}, "instructions")
    code, out, err = _run(capsys, "ingest")
    assert code == 0, err
    assert "Rule 1" in _ref_text(here)
    assert leaks(_artifacts(here) + out + err) == []


def test_suggestions_and_outcome_notes(here, capsys, tmp_path):
    from tests.helpers.outcomes import process_head

    body = "\n".join(f"SETTING_{n} = 1  # {line.splitlines()[-1]}" for n, (_k, line, _s) in enumerate(KINDS))
    commit_files(here, {"src/app.py": "import os\n"}, "app")
    code_file = tmp_path / "code.py"
    code_file.write_text("import os\n" + body + "\n", encoding="utf-8")
    description = " | ".join(line for _k, line, _s in KINDS)   # cut to 2,000 characters, after redaction
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
    code, out, err = _run(capsys, "outcomes")
    assert code == 0
    assert leaks(_artifacts(here) + out + err) == []


def test_agent_hooks_write_edit_and_prompt(here):
    """Agent Write and MultiEdit content kept as suggestions, and the context a prompt gets back."""
    from neo_git.store import FactStore
    from tests.helpers.agents import payload, run_hook

    commit_files(here, {"src/importer.py": "import httpx\ntimeout=30\n"}, "app")
    content = "\n".join(line for _k, line, _s in KINDS)
    data = payload("claude_post_tool_use_write", here)
    data["tool_input"] = {"file_path": str(here / "src" / "importer.py"), "content": content}
    code, _out, raw = run_hook("PostToolUse", "claude", data)
    assert code == 0 and leaks(raw) == []
    edit = payload("claude_post_tool_use_multiedit", here)
    edit["tool_input"]["edits"] = [{"old_string": "timeout=30", "new_string": "\n".join(
        line for _k, line, _s in KINDS[::2])}]
    code, _out, raw = run_hook("PostToolUse", "claude", edit)
    assert code == 0 and leaks(raw) == []
    stored = (here / ".git" / "neo" / "suggestions.json").read_text(encoding="utf-8")
    assert "src/importer.py" in stored
    FactStore.open(here, embedder="hash").add("Importer HTTP client", "The importer uses httpx. " + KINDS[5][1])
    prompt = payload("claude_user_prompt_submit", here)
    prompt["prompt"] = "Which HTTP client should the importer use? " + " ".join(line for _k, line, _s in KINDS[:40])
    code, _out, raw = run_hook("UserPromptSubmit", "claude", prompt)
    assert code == 0
    assert leaks(raw + _artifacts(here)) == []


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
    commit_files(here, {"src/settings.py": "DEBUG = False\n" + "\n".join(
        f"# {line.splitlines()[-1]}" for _k, line, _s in KINDS)}, "settings")
    for _kind, line, _secret in KINDS[:5]:
        _run(capsys, "add", "--kind", "decision", "deploy settings", line)
    question = "how do the deploy settings work? " + " ".join(line for _k, line, _s in KINDS[5:40])
    code, out, err = _run(capsys, "ask", question, "--include", "src/settings.py", "--provider", "none",
                          "--show-prompt")
    assert code == 0, err
    assert "src/settings.py" in out and "DEBUG = False" in out
    assert leaks(out + err) == []


def test_ask_sends_nothing_secret_to_the_model(here):
    """Through the real SDK client to a loopback server: every request body it received, and the
    question kept under .git/neo for the next comparison."""
    from tests.helpers.ask import answer, engine_for
    from tests.helpers.loopback import LoopbackLLM

    commit_files(here, {"src/settings.py": "DEBUG = False\n" + "\n".join(
        f"# {line.splitlines()[-1]}" for _k, line, _s in KINDS)}, "settings")
    from neo_git.store import FactStore

    FactStore.open(here).init()
    FactStore.open(here, embedder="hash").add("Deploy settings", "Settings live in src/settings.py. " + KINDS[7][1])
    with LoopbackLLM() as llm:
        llm.queue(answer(plan=("read the settings",)))
        # 30 s for the whole call: what is checked is what was sent, and a loaded machine took
        # more than the default 5 s to import the SDK and redact the request.
        question = "why does deploy fail? " + " ".join(line for _k, line, _s in KINDS[:60])
        engine_for(here, llm, timeout=30).ask(question, ["src/settings.py"])
        sent = "\n".join(request.text for request in llm.requests)
    assert "DEBUG = False" in sent
    assert leaks(sent) == []
    assert leaks(_artifacts(here)) == []


def test_mcp_add_suggest_and_paths(here):
    pytest.importorskip("mcp")
    from tests.helpers.mcp import run_session

    commit_files(here, {"src/app.py": "import os\n"}, "app")
    token = _standalone()[0][2]

    async def script(session):
        results = []
        for n, chunk in enumerate(_chunks(KINDS)):
            results.append(await session.call_tool("add_fact", {
                "subject": f"mcp chunk {n}", "body": "\n".join(line for _k, line, _s in chunk), "kind": "decision"}))
        results.append(await session.call_tool("suggest", {
            "file": "src/app.py", "code": "\n".join(line for _k, line, _s in KINDS),
            "description": " ".join(line for _k, line, _s in KINDS[:30])}))
        refused = await session.call_tool("add_fact", {"subject": "paths", "body": "b", "paths": [f"src/{token}/*"]})
        return results, refused

    results, refused = run_session(here, script)
    assert all(not r.is_error for r in results), [r for r in results if r.is_error][:1]
    assert refused.is_error
    replies = json.dumps([r.structured_content for r in results] + [str(refused.content)])
    assert leaks(replies) == []
    assert leaks(_artifacts(here)) == []


def test_ask_include_redacts_before_the_file_is_cut(here, capsys):
    """An included file is cut to its share of the prompt: a token across the cut is redacted
    whole, not left with the part before it."""
    token = "ghp_" + "Rk2Vn8Lq4Zt7Wm1Xc5Hb9Jd3Fs6Pg0Ay2Ue8"
    for before in (15_990, 15_975, 15_966):
        commit_files(here, {"src/big.py": "#" * before + " " + token + "\nDEBUG = True\n"}, f"big {before}")
        code, out, err = _run(capsys, "ask", "what is in big.py?", "--include", "src/big.py", "--provider", "none",
                              "--show-prompt")
        assert code == 0, err
        assert "src/big.py truncated" in out
        assert token[:10] not in out and token[-8:] not in out, out[-200:]
