"""Import-time vs deferred import edges, and the cycles each kind makes (docs/architecture.md §6)."""
from __future__ import annotations

import json
import textwrap

import pygit2
import pytest

from neo_git.cli import main
from neo_git.health.measure import snapshot_commit
from neo_git.health.metrics import analyze_source
from tests.helpers.git import commit_files
from tests.helpers.health import CLICK_STYLE


def deferred_of(path: str, source: str) -> dict[str, bool]:
    """target -> deferred, for each import of one file."""
    metrics = analyze_source(path, textwrap.dedent(source).encode())
    return {ref.target or ref.names[0]: ref.deferred for ref in metrics.imports}


def test_python_imports_in_functions_and_methods_are_deferred_the_rest_runs_at_import():
    found = deferred_of("m.py", """\
        import top
        try:
            import in_try
        except ImportError:
            in_try = None
        if top:
            from pkg import in_if
        class Thing:
            import in_class_body
            def method(self):
                import in_method
        def outer():
            def inner():
                from . import in_nested
            import in_function
        async def later():
            import in_coroutine
        decorated = (lambda: __import__("x"))
        import after_functions
        """)
    assert found == {"top": False, "in_try": False, "pkg": False, "in_class_body": False, "in_method": True,
                     "in_nested": True, "in_function": True, "in_coroutine": True, "after_functions": False}


def test_python_one_line_function_import_is_deferred():
    assert deferred_of("m.py", "def f(): import x\nimport y\n") == {"x": True, "y": False}


@pytest.mark.parametrize("path", ["m.js", "m.ts", "m.tsx", "m.mjs"])
def test_js_require_in_a_function_and_dynamic_import_are_deferred(path):
    found = deferred_of(path, """\
        import a from "./a";
        export { b } from "./b";
        const c = require("./c");
        if (process.env.X) { require("./d"); }
        function load() { return require("./e"); }
        const arrow = () => require("./f");
        class K { method() { return require("./g"); } }
        const lazy = import("./h");
        """)
    assert found == {"./a": False, "./b": False, "./c": False, "./d": False, "./e": True, "./f": True,
                     "./g": True, "./h": True}


@pytest.mark.parametrize("path", ["m.ts", "m.tsx", "m.mts"])
def test_typescript_type_only_imports_never_run(path):
    """`import type` and `export type … from` are erased by the compiler: every-edge (madge counts
    them) but never import-time. `import {type X}` keeps a runtime import (verbatimModuleSyntax)."""
    found = deferred_of(path, """\
        import type { A } from "./a";
        export type { B } from "./b";
        import { type C } from "./c";
        import typeD from "./d";
        """)
    assert found == {"./a": True, "./b": True, "./c": False, "./d": False}


@pytest.mark.parametrize("path, source", [
    ("a/a.go", 'package a\n\nimport "example.com/m/b"\n\nfunc f() { b.X() }\n'),
    ("A.java", "package p;\nimport q.B;\nclass A { void f() {} }\n"),
    ("src/lib.rs", "mod b;\nfn f() { use crate::b::X; }\n"),
])
def test_declaration_languages_have_no_deferred_imports(path, source):
    metrics = analyze_source(path, source.encode())
    assert metrics.imports and not any(ref.deferred for ref in metrics.imports)


def test_a_cycle_closed_by_a_deferred_import_is_every_edge_but_not_import_time(git_repo, monkeypatch, capsys):
    commit_files(git_repo, CLICK_STYLE)
    snapshot = snapshot_commit(pygit2.Repository(str(git_repo)))
    assert snapshot.components == (("pkg/_neo_x.py", "pkg/_neo_y.py"),)     # what grimp reports
    assert snapshot.import_time_components == ()
    data = snapshot.to_dict()
    assert (data["cycles"], data["import_time_cycles"], data["modules_in_import_time_cycles"]) == (1, 0, [])
    assert data["cycle_paths"][0]["deferred_imports"] == ["pkg/_neo_y.py:2"]
    assert snapshot.summary()["import_time_cycles"] == 0 and snapshot.summary()["cycles"] == 1

    monkeypatch.chdir(git_repo)
    assert main(["health"]) == 0
    text = capsys.readouterr().out
    assert "import cycles: 1 (0 at import time, 1 closing only through a deferred import)" in text
    assert "closes only through a deferred import at pkg/_neo_y.py:2" in text
    assert "pkg/_neo_y.py:2 (deferred) → pkg/_neo_x.py:1 → pkg/_neo_y.py" in text


def test_moving_the_import_into_a_function_changes_the_import_time_cycles_incrementally(git_repo):
    """Same edges, only their timing changes: the stored state of the parent must not be
    reused for the import-time cycles."""
    eager = dict(CLICK_STYLE, **{"pkg/_neo_y.py": "from . import _neo_x\n\n\ndef g():\n    return _neo_x\n"})
    commit_files(git_repo, eager, "eager")
    repo = pygit2.Repository(str(git_repo))
    assert len(snapshot_commit(repo).import_time_components) == 1           # cached for the parent
    commit_files(git_repo, {"pkg/_neo_y.py": CLICK_STYLE["pkg/_neo_y.py"]}, "import at the edge")
    after = snapshot_commit(repo)
    assert after.import_time_components == () and len(after.components) == 1
    commit_files(git_repo, eager, "eager again")
    assert len(snapshot_commit(repo).import_time_components) == 1


def test_an_import_time_cycle_inside_a_larger_deferred_one_is_reported_as_both(git_repo, monkeypatch, capsys):
    commit_files(git_repo, {
        "a.py": "import b\n",
        "b.py": "import a\n\n\ndef late():\n    import c\n",
        "c.py": "import a\n",
    })
    snapshot = snapshot_commit(pygit2.Repository(str(git_repo)))
    assert snapshot.components == (("a.py", "b.py", "c.py"),)
    assert snapshot.import_time_components == (("a.py", "b.py"),)
    monkeypatch.chdir(git_repo)
    assert main(["health", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["import_time_cycle_components"] == [["a.py", "b.py"]]
    assert data["cycle_paths"][0]["deferred_imports"] == ["b.py:5"]
    assert [step["at"] for step in data["import_time_cycle_paths"][0]] == ["a.py:1", "b.py:1"]


def test_go_edges_name_the_file_and_line_of_the_import(git_repo):
    commit_files(git_repo, {
        "go.mod": "module example.com/m\n",
        "a/a.go": 'package a\n\nimport "example.com/m/b"\n\nfunc A() { b.B() }\n',
        "b/b.go": 'package b\n\nimport (\n\t"fmt"\n\t"example.com/m/a"\n)\n\nfunc B() { fmt.Println(a.A) }\n',
    })
    snapshot = snapshot_commit(pygit2.Repository(str(git_repo)))
    [path] = snapshot.import_time_cycle_paths()
    assert [(s["from"], s["at"]) for s in path] == [("a", "a/a.go:3"), ("b", "b/b.go:5")]
