"""Every `neo.*` setting the code reads is in the README's settings table, and every row of
that table is a setting the code reads.

The settings are found in the source, not listed by hand: every call of a reader defined in
`neo_git/config.py` (a function whose first parameter is `name`: `neo_config`, `config_int`,
…), with its first argument resolved — a string, a module constant (also one imported from
another module), an f-string (`f"{provider}Key"` becomes the pattern `<provider>Key`), or any
value of a module-level dict (`BASE_URL_SETTING[name]`) — plus every string constant that is
exactly `neo.<name>` (keys passed to `git config` directly). A reader called with anything
else fails this test with its file and line: name the setting plainly so it can be found.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "neo_git"
SETTING = re.compile(r"^neo\.([A-Za-z][A-Za-z0-9]*)$")
TABLE_ROW = re.compile(r"^\|\s*(`neo\.[^|]+)\|")
IN_CELL = re.compile(r"`neo\.([A-Za-z0-9<>]+)`")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _readers() -> set[str]:
    tree = ast.parse((PACKAGE / "config.py").read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
            and node.args.args and node.args.args[0].arg == "name"}


class _Module:
    """A module's top-level string constants, string-valued dicts and `from … import` names."""

    def __init__(self, tree: ast.Module) -> None:
        self.strings: dict[str, str] = {}
        self.dicts: dict[str, list[str]] = {}
        self.imports: dict[str, tuple[str, str]] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name, value = node.targets[0].id, node.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    self.strings[name] = value.value
                elif isinstance(value, ast.Dict) and all(isinstance(v, ast.Constant) and isinstance(v.value, str)
                                                         for v in value.values):
                    self.dicts[name] = [v.value for v in value.values]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (node.module, alias.name)


def settings_read() -> dict[str, list[str]]:
    """{setting (without `neo.`; patterns like `<provider>Key`): [file:line, …]} from the source."""
    readers = _readers()
    trees = {_module_name(p): (p, ast.parse(p.read_text(encoding="utf-8"))) for p in PACKAGE.rglob("*.py")}
    modules = {name: _Module(tree) for name, (_, tree) in trees.items()}

    def constant(module: str, name: str, depth: int = 0) -> str | None:
        info = modules.get(module)
        if info is None or depth > 3:
            return None
        if name in info.strings:
            return info.strings[name]
        if name in info.imports:
            return constant(*info.imports[name], depth + 1)
        return None

    def resolve(module: str, node: ast.expr) -> list[str] | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name):
            value = constant(module, node.id)
            return [value] if value is not None else None
        if isinstance(node, ast.JoinedStr):
            return ["".join(part.value if isinstance(part, ast.Constant) else f"<{ast.unparse(part.value)}>"
                            for part in node.values)]
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            return modules[module].dicts.get(node.value.id)
        return None

    found: dict[str, list[str]] = {}
    unresolved: list[str] = []
    for module, (path, tree) in trees.items():
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SETTING.match(node.value):
                found.setdefault(SETTING.match(node.value).group(1), []).append(f"{where}:{node.lineno}")
            if not isinstance(node, ast.Call) or module == "neo_git.config":
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if called not in readers:
                continue
            arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            names = resolve(module, arg) if arg is not None else None
            if names is None:
                unresolved.append(f"{where}:{node.lineno}: {called}({ast.unparse(arg) if arg else ''})")
                continue
            for name in names:
                found.setdefault(name.removeprefix("neo."), []).append(f"{where}:{node.lineno}")
    assert not unresolved, "settings read under a name this test cannot resolve:\n" + "\n".join(unresolved)
    return found


def documented() -> list[str]:
    """The settings in the README's settings table (the section `## Settings`)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Settings", 1)[1].split("\n## ", 1)[0]
    names = []
    for line in section.splitlines():
        row = TABLE_ROW.match(line)
        if row:
            names += IN_CELL.findall(row.group(1))
    return names


def _pattern(name: str) -> re.Pattern:
    """`<provider>Key` matches `openaiKey` and `<provider>Key` itself."""
    parts = re.split(r"(<[^>]+>)", name)
    return re.compile("^" + "".join("(?:<[^>]+>|[A-Za-z0-9]+)" if p.startswith("<") else re.escape(p)
                                    for p in parts if p) + "$")


def test_the_readme_table_lists_every_setting_the_code_reads_and_nothing_else():
    read = settings_read()
    table = documented()
    assert len(table) == len(set(table)), "a setting is listed twice"
    missing = {name: where for name, where in read.items() if not any(_pattern(name).match(row) for row in table)}
    assert not missing, "read by the code, missing from the README's settings table:\n" + \
        "\n".join(f"  neo.{name}  ({', '.join(where[:3])})" for name, where in sorted(missing.items()))
    stale = [row for row in table if not any(_pattern(name).match(row) for name in read)]
    assert not stale, f"in the README's settings table, read nowhere in the code: {stale}"


def test_the_extraction_finds_each_kind_of_read():
    """Guards the finder itself: one setting of each form it must resolve."""
    read = settings_read()
    assert "maxEffort" in read                  # neo_config("maxEffort", …)
    assert "embedder" in read                   # neo_config(CONFIG_KEY, …), the constant imported elsewhere
    assert "<provider>Key" in read              # neo_config(f"{provider}Key", …)
    assert "ollamaUrl" in read                  # neo_config(BASE_URL_SETTING[name], …)
    assert "trusted" in read and "remote" in read   # "neo.trusted" handed to `git config`


def test_retired_settings_are_read_nowhere_and_listed_as_retired():
    from neo_git.config import RETIRED

    read, table = settings_read(), documented()
    assert not set(RETIRED) & set(read), "a retired setting is still read"
    assert not {f"{key}" for key in RETIRED} & set(table), "a retired setting is in the settings table"
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    retired = text.split("\nRetired (no longer read", 1)[1].split("\n\n", 1)[0]
    assert set(IN_CELL.findall(retired)) == set(RETIRED)


def test_a_retired_setting_still_set_gets_one_notice_per_command_never_an_error(repo_with_commit, monkeypatch,
                                                                                capsys):
    from neo_git.cli import main
    from tests.helpers.git import git

    monkeypatch.chdir(repo_with_commit)
    git(repo_with_commit, "config", "neo.turnTtlSeconds", "60")
    git(repo_with_commit, "config", "neo.agentContextTokens", "not even a number")
    for _ in range(2):
        assert main(["list"]) == 0
        err = capsys.readouterr().err.splitlines()
        assert [line.split()[1] for line in err if line.startswith("notice:")] == \
            ["neo.turnTtlSeconds", "neo.agentContextTokens"], err
        assert not [line for line in err if line.startswith(("warning:", "fatal:"))], err
    git(repo_with_commit, "config", "--unset", "neo.turnTtlSeconds")
    git(repo_with_commit, "config", "--unset", "neo.agentContextTokens")
    assert main(["list"]) == 0
    assert "notice:" not in capsys.readouterr().err
