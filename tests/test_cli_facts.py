"""`git neo` fact commands: --json output, help without heavy imports, exit codes
0/1/2/3, and bad input that changes nothing."""
from __future__ import annotations

import json
import subprocess

import pytest

from neo_git.cli import main
from tests.helpers.store import HTTP_NEW, HTTP_OLD, PYTHON, neo_home, run_cli, snapshot_tree


@pytest.fixture
def repo(repo_with_commit, monkeypatch):
    monkeypatch.chdir(repo_with_commit)
    return repo_with_commit


def run_json(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def _state(repo):
    return snapshot_tree(repo / ".git" / "refs"), snapshot_tree(repo / ".git" / "logs"), snapshot_tree(neo_home())


def test_read_commands_print_parseable_json(repo, capsys):
    assert run_json(capsys, "init", "--json")["ref"] == "refs/neo/facts"
    old = run_json(capsys, "add", "--kind", "decision", "--json", "HTTP client", HTTP_OLD)
    assert set(old) >= {"id", "superseded"} and old["superseded"] is None
    new = run_json(capsys, "add", "--kind", "decision", "--json", "HTTP client", HTTP_NEW)
    assert new["superseded"] == old["id"]
    run_json(capsys, "add", "-k", "constraint", "-s", "global", "--json", "Secrets", "Never commit secrets.")

    listed = run_json(capsys, "list", "--json")
    assert {f["id"] for f in listed} == {new["id"]} | {f["id"] for f in listed if f["scope"] == "global"}
    everything = run_json(capsys, "list", "--all", "--json")
    assert {f["id"] for f in everything} >= {old["id"], new["id"]} and len(everything) == 3
    assert run_json(capsys, "list", "--scope", "global", "--kind", "constraint", "--json")[0]["subject"] == "Secrets"

    shown = run_json(capsys, "show", new["id"][:6], "--json")
    from neo_git.store import FactStore

    assert shown == FactStore.open(".", embedder="hash").get(new["id"]).to_dict()

    recalled = run_json(capsys, "recall", "outbound HTTP timeout", "-k", "3", "--max-tokens", "2000", "--json")
    assert set(recalled) >= {"constraints", "valid_facts", "invalidated", "known_unknowns", "environment"}
    assert [f["id"] for f in recalled["valid_facts"]] == [new["id"]]
    assert [f["id"] for f in recalled["invalidated"]] == [old["id"]]
    assert [f["subject"] for f in recalled["constraints"]] == ["Secrets"]
    assert recalled["environment"]["branch"] == "main"

    why = run_json(capsys, "why", old["id"], "--json")
    assert why["state"] == "superseded" and why["superseded_by"] == new["id"] and "similarity" in why
    history = run_json(capsys, "history", new["id"], "--json")
    assert [f["id"] for f in history] == [old["id"], new["id"]]
    restored = run_json(capsys, "restore", old["id"], "--json")
    assert restored["is_valid"] is True and restored["superseded_by"] is None


def test_human_output_mentions_supersession(repo, capsys):
    assert main(["add", "-k", "decision", "HTTP client", HTTP_OLD]) == 0
    assert main(["add", "-k", "decision", "HTTP client", HTTP_NEW]) == 0
    out = capsys.readouterr().out
    assert "supersedes" in out and "git neo why" in out
    assert main(["add", "-k", "decision", "HTTP client", HTTP_NEW]) == 0
    assert "nothing added" in capsys.readouterr().out


def test_export_import_commands(repo, capsys, tmp_path):
    assert main(["add", "Formatter", "ruff format", "-s", "global"]) == 0
    capsys.readouterr()
    target = tmp_path / "out.json"
    assert main(["export", str(target)]) == 0
    assert json.loads(target.read_text())["facts"][0]["subject"] == "Formatter"
    assert run_json(capsys, "import", str(target), "--json")["skipped_existing"] == 1


@pytest.mark.parametrize("argv", [["-h"], ["help"], ["help", "add"], ["add", "-h"]])
def test_help_exits_zero_without_heavy_imports(argv, tmp_path):
    code = (
        "import sys\n"
        "from neo_git.cli import main\n"
        "try:\n"
        f"    code = main({argv!r})\n"
        "except SystemExit as exc:\n"
        "    code = exc.code or 0\n"
        "heavy = [m for m in ('numpy', 'pygit2', 'tree_sitter', 'fastembed') if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
        "sys.exit(code if not heavy else 99)\n"
    )
    proc = subprocess.run([PYTHON, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stderr
    assert "usage:" in proc.stdout


def test_help_from_the_real_entry_point(tmp_path):
    for argv in (["-h"], ["help"], ["help", "recall"]):
        proc = run_cli(argv, cwd=tmp_path)
        assert proc.returncode == 0 and b"usage: git neo" in proc.stdout
    proc = run_cli(["help", "nonsense"], cwd=tmp_path)
    assert proc.returncode == 1 and b"fatal:" in proc.stderr and b"hint:" in proc.stderr


@pytest.mark.parametrize("argv", [
    ["add"],                                            # missing subject
    ["add", "--kind", "opinion", "S"],                  # invalid kind
    ["add", "--scope", "team", "S"],                    # invalid scope
    ["add", "--confidence", "high", "S"],
    ["list", "--scope", "team"],
    ["recall"],
    ["recall", "q", "-k", "many"],
    ["frobnicate"],
    [],
])
def test_usage_errors_exit_2(repo, capsys, argv):
    before = _state(repo)
    assert main(argv) == 2
    capsys.readouterr()
    assert _state(repo) == before


def _expect_fatal(capsys, argv, fragment):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 1, err
    lines = err.strip().splitlines()
    assert lines[0].startswith("fatal: ") and fragment in lines[0]
    assert any(line.startswith("hint: ") for line in lines), err
    return err


@pytest.mark.parametrize("argv, fragment", [
    (["add", "   "], "subject is empty"),
    (["add", "Big", "x" * 1_000_000], "body is too long"),
    (["add", "caf\udce9"], "not valid UTF-8"),
    (["add", "Cafe", "caf\udce9 au lait", "-s", "global"], "not valid UTF-8"),
    (["add", "S", "--confidence", "7"], "confidence"),
    (["add", "S", "--supersedes", "ffffffffffffffff"], "no fact"),
    (["show", "0000000000000000"], "no fact"),
    (["why", "0000000000000000"], "no fact"),
    (["history", "beef"], "no fact"),
    (["restore", "0000000000000000"], "no fact"),
    (["recall", "q", "--max-tokens", "0"], "max-tokens"),
    (["import", "/nonexistent/facts.json"], "no such file"),
])
def test_user_errors_exit_1_with_fatal_and_hint_and_change_nothing(repo, capsys, argv, fragment):
    main(["add", "Formatter", "ruff format", "-s", "global"])
    main(["add", "Layout", "Code lives under src/."])
    capsys.readouterr()
    before = _state(repo)
    if fragment in ("confidence", "max-tokens", "no such file"):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 1 and err.startswith("fatal: ") and fragment in err.splitlines()[0]
    else:
        _expect_fatal(capsys, argv, fragment)
    assert _state(repo) == before


def test_ambiguous_prefix_is_fatal(repo, capsys):
    from neo_git.facts import FactScope
    from neo_git.store import FactStore
    from neo_git.store.base import Change

    store = FactStore.open(".", embedder="hash")
    base = store.add("Layout", "Code lives under src/.")
    twins = tuple(base.evolve(id=f"abcd00000000000{i}", subject=f"Twin {i} kumquat") for i in (1, 2))
    store.backends[FactScope.PROJECT].transact(lambda facts: Change(twins, "twins"))
    before = _state(repo)
    _expect_fatal(capsys, ["show", "abcd"], "ambiguous")
    _expect_fatal(capsys, ["restore", "abcd"], "ambiguous")
    assert _state(repo) == before


def test_corrupt_global_file_is_fatal_moved_aside_and_kept(repo, capsys):
    path = neo_home() / "facts" / "facts_global.json"
    path.parent.mkdir(parents=True)
    content = b'{"version": "2.0", "facts": [{"id": \xff'
    path.write_bytes(content)
    _expect_fatal(capsys, ["list"], "not a valid facts file")
    asides = list(path.parent.glob("facts_global.json.corrupt-*"))
    assert len(asides) == 1 and asides[0].read_bytes() == content
    assert main(["add", "-s", "global", "Formatter", "ruff"]) == 0  # a fresh file; the old one stays aside
    assert asides[0].read_bytes() == content


def test_outside_a_repository_exit_1(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _expect_fatal(capsys, ["list"], "not a git repository")
    _expect_fatal(capsys, ["add", "S", "B"], "not a git repository")
    assert not neo_home().exists() or snapshot_tree(neo_home()) == {}


def test_non_utf8_argv_from_the_real_command_line(repo):
    before = _state(repo)
    proc = run_cli([b"add", b"caf\xe9 cr\xe8me", b"body"], cwd=repo)
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.decode("utf-8", "replace")
    assert err.startswith("fatal: subject is not valid UTF-8") and "\nhint: " in err
    proc = run_cli([b"add", b"Subject", b"caf\xe9", b"--scope", b"global"], cwd=repo)
    assert proc.returncode == 1 and proc.stderr.startswith(b"fatal: body is not valid UTF-8")
    assert _state(repo) == before


def test_a_bug_exits_3_and_saves_the_traceback(repo, capsys, monkeypatch):
    import neo_git.cli.facts as facts_cli

    def broken(args):
        raise RuntimeError("kaboom in list")

    monkeypatch.setattr(facts_cli, "cmd_list", broken)
    assert main(["list"]) == 3
    err = capsys.readouterr().err
    assert "kaboom in list" in err and "fatal:" not in err
    logs = list((repo / ".git" / "neo").glob("crash-*.log"))
    assert len(logs) == 1
    text = logs[0].read_text()
    assert "RuntimeError: kaboom in list" in text and "Traceback" in text and "command: git neo list" in text


def test_ctrl_c_exits_130(repo, capsys, monkeypatch):
    import neo_git.cli.facts as facts_cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(facts_cli, "cmd_list", interrupted)
    assert main(["list"]) == 130


def test_human_output_of_every_read_command(repo, capsys):
    main(["add", "-k", "decision", "--json", "HTTP client", HTTP_OLD])
    old = json.loads(capsys.readouterr().out)["id"]
    main(["add", "-k", "decision", "--json", "HTTP client", HTTP_NEW])
    new = json.loads(capsys.readouterr().out)["id"]
    main(["add", "-k", "known_unknown", "Webhook retries", "Does the payment provider retry webhooks?"])
    capsys.readouterr()
    expectations = [
        (["list"], [new, "HTTP client"]),
        (["list", "--all"], [old, f"[superseded by {new[:8]}]"]),
        (["show", new], [f"fact {new}", "Supersedes:", old, HTTP_NEW]),
        (["recall", "outbound HTTP timeout webhooks"], ["Relevant facts:", "Changed (no longer true):",
                                                        f"→ now: {new[:8]}", "tokens; main)"]),
        (["why", old], ["was superseded by", new, "git neo restore"]),
        (["history", new], [old, new, "superseded", "valid"]),
        (["restore", old], [f"restored {old}"]),
    ]
    for argv, fragments in expectations:
        assert main(argv) == 0, argv
        out = capsys.readouterr().out
        for fragment in fragments:
            assert fragment in out, (argv, fragment, out)
        if argv[0] == "history":
            assert out.index(old) < out.index(new)  # oldest first


def test_dash_c_runs_in_another_directory(repo_with_commit, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["-C", str(repo_with_commit), "add", "--json", "Layout", "Code lives under src/."]) == 0
    fact_id = json.loads(capsys.readouterr().out)["id"]
    assert main(["-C", str(repo_with_commit), "list", "--json"]) == 0
    assert [f["id"] for f in json.loads(capsys.readouterr().out)] == [fact_id]
    monkeypatch.chdir(tmp_path)
    assert main(["-C", str(tmp_path / "missing"), "list"]) == 1
    assert capsys.readouterr().err.startswith("fatal: cannot change to")
