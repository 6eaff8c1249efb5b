"""Import resolution: fixture repositories (path -> source) with known cycles.

Sources go through the real parser (`analyze_source`) and then `build_import_graph`,
so these tests pin the whole path from source text to import cycles.
"""
from __future__ import annotations

import textwrap

from neo_git.health.graph import strongly_connected_components
from neo_git.health.import_graph import build_import_graph
from neo_git.health.metrics import analyze_source
from neo_git.health.model import FileMetrics, ImportGraph, ImportRef


def graph_of(sources: dict[str, str]) -> ImportGraph:
    """Analyse every source file; all entries (configs too) are readable via `read`."""
    blobs = {path: textwrap.dedent(text).encode() for path, text in sources.items()}
    files = {}
    for path, data in blobs.items():
        metrics = analyze_source(path, data)
        if metrics is not None:
            files[path] = metrics
    return build_import_graph(files, blobs.get)


def cycles(sources: dict[str, str]) -> list[list[str]]:
    return strongly_connected_components(graph_of(sources).edges)


# --- Python ---------------------------------------------------------------

def test_python_three_module_cycle_and_a_bystander():
    repo = {
        "a.py": "import b\n",
        "b.py": "from c import helper\n",
        "c.py": "import a\nimport os\n",
        "d.py": "import a\n",
    }
    assert cycles(repo) == [["a.py", "b.py", "c.py"]]
    assert graph_of(repo).edges["d.py"] == {"a.py"}


def test_python_cycle_through_package_init():
    repo = {
        "pkg/__init__.py": "from pkg.a import run\nVERSION = 1\n",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "from pkg import VERSION\n",
    }
    graph = graph_of(repo)
    assert graph.edges["pkg/a.py"] == {"pkg/b.py"}            # b is a submodule
    assert graph.edges["pkg/b.py"] == {"pkg/__init__.py"}     # VERSION is a name in the package
    assert cycles(repo) == [["pkg/__init__.py", "pkg/a.py", "pkg/b.py"]]


def test_python_importing_a_submodule_does_not_edge_to_parent_packages():
    # Python runs pkg/__init__.py too, but like grimp we count only the module named.
    repo = {
        "pkg/__init__.py": "from pkg.sub import deep\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/deep.py": "",
        "main.py": "import pkg.sub.deep\n",
    }
    graph = graph_of(repo)
    assert graph.edges["main.py"] == {"pkg/sub/deep.py"}
    assert cycles(repo) == []


def test_python_relative_import_cycle_and_levels():
    repo = {
        "pkg/__init__.py": "",
        "pkg/a.py": "from . import b\n",
        "pkg/b.py": "from .a import thing\n",
        "pkg/sub/__init__.py": "from .. import a\n",
        "pkg/sub/c.py": "from ..b import other\nfrom . import missing\n",
    }
    graph = graph_of(repo)
    assert cycles(repo) == [["pkg/a.py", "pkg/b.py"]]
    assert graph.edges["pkg/sub/__init__.py"] == {"pkg/a.py"}
    # `from . import missing` falls back to the package itself, as grimp does.
    assert graph.edges["pkg/sub/c.py"] == {"pkg/b.py", "pkg/sub/__init__.py"}


def test_python_src_layout_and_tests_outside_it():
    repo = {
        "src/app/__init__.py": "",
        "src/app/x.py": "from app.y import f\n",
        "src/app/y.py": "import app.x\n",
        "tests/test_x.py": "from app.x import f\nimport pytest\n",
    }
    graph = graph_of(repo)
    assert cycles(repo) == [["src/app/x.py", "src/app/y.py"]]
    assert graph.edges["tests/test_x.py"] == {"src/app/x.py"}


def test_python_type_checking_import_does_not_close_a_cycle():
    repo = {
        "models.py": "import services\n",
        "services.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n"
            "    from models import Model\n"
        ),
    }
    graph = graph_of(repo)
    assert cycles(repo) == []
    assert graph.edges["services.py"] == frozenset()
    assert graph.type_checking_edges["services.py"] == {"models.py"}


def test_python_external_imports_are_not_edges():
    repo = {
        "app.py": "import os\nimport requests\nfrom requests import get\nimport numpy.linalg\n",
        "util.py": "",
    }
    graph = graph_of(repo)
    assert graph.edges == {"app.py": frozenset(), "util.py": frozenset()}
    assert graph.language_of == {"app.py": "python", "util.py": "python"}


def test_python_stub_only_module_and_namespace_package():
    repo = {
        "fast.pyi": "def go() -> None: ...\n",
        "both.py": "", "both.pyi": "",
        "ns/tool.py": "import main\n",          # ns/ has no __init__.py
        "main.py": "import fast\nimport both\nimport ns.tool\n",
    }
    graph = graph_of(repo)
    assert graph.edges["main.py"] == {"fast.pyi", "both.py", "ns/tool.py"}
    assert cycles(repo) == [["main.py", "ns/tool.py"]]


def test_python_monorepo_prefers_the_importers_own_source_root():
    repo = {
        "svc1/src/app/__init__.py": "", "svc1/src/app/db.py": "",
        "svc1/src/app/main.py": "from app import db\n",
        "svc2/src/app/__init__.py": "", "svc2/src/app/db.py": "",
        "svc2/src/app/main.py": "from app import db\n",
    }
    graph = graph_of(repo)
    assert graph.edges["svc1/src/app/main.py"] == {"svc1/src/app/db.py"}
    assert graph.edges["svc2/src/app/main.py"] == {"svc2/src/app/db.py"}


def test_hand_built_refs_without_the_parser():
    files = {
        "p/__init__.py": FileMetrics("p/__init__.py", "python", 1, 0, 0, (ImportRef("", ("q",), 1, "from"),)),
        "p/q.py": FileMetrics("p/q.py", "python", 1, 0, 0, (ImportRef("p", (), 0, "import"),)),
    }
    graph = build_import_graph(files, lambda path: None)
    assert strongly_connected_components(graph.edges) == [["p/__init__.py", "p/q.py"]]


# --- JavaScript / TypeScript ------------------------------------------------

def test_ts_cycle_through_directory_index():
    repo = {
        "a.ts": "import { x } from './lib';\nexport const a = 1;\n",
        "lib/index.ts": "import { a } from '../a';\nexport const x = a;\n",
        "b.ts": "import React from 'react';\nimport { a } from './a';\n",
    }
    graph = graph_of(repo)
    assert cycles(repo) == [["a.ts", "lib/index.ts"]]
    assert graph.edges["b.ts"] == {"a.ts"}


TSCONFIG = """\
{
  // comments and trailing commas, as tsc accepts them
  "compilerOptions": {
    "baseUrl": ".",
    /* aliases */
    "paths": { "@/*": ["src/*"], "~config": ["src/config/index.ts"], },
  },
}
"""


def test_tsconfig_paths_alias_closes_a_cycle():
    repo = {
        "tsconfig.json": TSCONFIG,
        "src/components/button.tsx": "import { theme } from '@/lib/theme';\nexport const B = () => <b/>;\n",
        "src/lib/theme.ts": "import { B } from '../components/button';\nimport c from '~config';\n",
        "src/config/index.ts": "export default {};\n",
    }
    graph = graph_of(repo)
    assert cycles(repo) == [["src/components/button.tsx", "src/lib/theme.ts"]]
    assert "src/config/index.ts" in graph.edges["src/lib/theme.ts"]


def test_tsconfig_base_url_and_extends_relative_to_each_config():
    repo = {
        "tsconfig.base.json": '{"compilerOptions": {"paths": {"#shared/*": ["packages/shared/*"]}}}',
        "apps/web/tsconfig.json": '{"extends": "../../tsconfig.base.json", "compilerOptions": {"baseUrl": "src"}}',
        "apps/web/src/main.ts": "import { u } from '#shared/util';\nimport { v } from 'views/home';\n",
        "apps/web/src/views/home.ts": "export const v = 1;\n",
        "packages/shared/util.ts": "export const u = 1;\n",
    }
    graph = graph_of(repo)
    # baseUrl is set, so the inherited `paths` resolve against it (as tsc does): not found.
    assert graph.edges["apps/web/src/main.ts"] == {"apps/web/src/views/home.ts"}
    repo["apps/web/tsconfig.json"] = '{"extends": "../../tsconfig.base.json"}'
    repo["apps/web/src/main.ts"] = "import { u } from '#shared/util';\n"
    assert graph_of(repo).edges["apps/web/src/main.ts"] == {"packages/shared/util.ts"}


def test_js_specifier_maps_to_ts_source():
    repo = {
        "src/a.ts": "import { b } from './b.js';\nexport const a = 1;\n",
        "src/b.ts": "export { a } from './a.js';\nexport const b = 2;\n",
    }
    assert cycles(repo) == [["src/a.ts", "src/b.ts"]]


def test_commonjs_require_cycle_and_extensionless_probe():
    repo = {
        "lib/one.js": "const two = require('./two');\nmodule.exports = {};\n",
        "lib/two.cjs": "const one = require('./one.js');\n",
        "lib/three.mjs": "import './one';\nimport fs from 'node:fs';\n",
    }
    graph = graph_of(repo)
    assert cycles(repo) == [["lib/one.js", "lib/two.cjs"]]
    assert graph.edges["lib/three.mjs"] == {"lib/one.js"}


def test_broken_tsconfig_does_not_crash_and_relative_imports_still_resolve():
    repo = {
        "tsconfig.json": '{ "compilerOptions": { "paths": {{{ nope',
        "a.ts": "import '@/b';\nimport './b';\n",
        "b.ts": "export {};\n",
    }
    assert graph_of(repo).edges["a.ts"] == {"b.ts"}


# --- Go -------------------------------------------------------------------

def test_go_package_cycle_under_module_path():
    repo = {
        "go.mod": "module example.com/m\n\ngo 1.22\n",
        "main.go": 'package main\n\nimport "example.com/m/a"\n',
        "a/a.go": 'package a\n\nimport (\n\t"fmt"\n\t"example.com/m/b"\n)\n',
        "a/a2.go": 'package a\n',
        "b/b.go": 'package b\n\nimport "example.com/m/a"\n',
    }
    graph = graph_of(repo)
    assert cycles(repo) == [["a", "b"]]
    assert graph.edges["."] == {"a"}
    assert graph.language_of == {".": "go", "a": "go", "b": "go"}


def test_go_test_files_are_outside_the_package_graph():
    repo = {
        "go.mod": "module example.com/m\n",
        "a/a.go": 'package a\n',
        "b/b.go": 'package b\n\nimport "example.com/m/a"\n',
        "a/a_test.go": 'package a_test\n\nimport "example.com/m/b"\n',
    }
    assert cycles(repo) == []
    assert graph_of(repo).edges["a"] == frozenset()


def test_go_nested_module_and_no_go_mod():
    repo = {
        "go.mod": "module example.com/m\n",
        "a/a.go": 'package a\n\nimport "example.com/m/tools/x"\n',
        "tools/go.mod": 'module "example.com/tools" // separate module\n',
        "tools/x/x.go": 'package x\n\nimport "example.com/m/a"\n',
    }
    graph = graph_of(repo)
    assert graph.edges["tools/x"] == {"a"}
    # tools/ is its own module, so example.com/m/tools/x is not a package of example.com/m
    # (Go would fetch it from the module cache): no edge, no cycle.
    assert graph.edges["a"] == frozenset()
    repo["a/a.go"] = 'package a\n\nimport "example.com/tools/x"\n'
    assert cycles(repo) == [["a", "tools/x"]]
    orphan = {"lib/l.go": 'package lib\n\nimport "example.com/m/a"\n', "a/a.go": "package a\n"}
    assert graph_of(orphan).edges == {"lib": frozenset(), "a": frozenset()}


# --- Rust -----------------------------------------------------------------

CARGO = '[package]\nname = "my-crate"\nversion = "0.1.0"\n'


def test_rust_use_cycle_between_sibling_modules():
    repo = {
        "Cargo.toml": CARGO,
        "src/lib.rs": "mod a;\nmod b;\n",
        "src/a.rs": "use crate::b::X;\npub struct Y;\nuse std::collections::HashMap;\n",
        "src/b.rs": "use crate::a::Y;\npub struct X;\nuse serde::Serialize;\n",
    }
    graph = graph_of(repo)
    assert cycles(repo) == [["src/a.rs", "src/b.rs"]]
    assert graph.edges["src/lib.rs"] == {"src/a.rs", "src/b.rs"}


def test_rust_super_and_nested_files_in_non_mod_rs_layout():
    repo = {
        "Cargo.toml": CARGO,
        "src/lib.rs": "pub mod net;\npub mod util;\n",
        "src/net.rs": "mod tcp;\npub struct Config;\n",
        "src/net/tcp.rs": "use super::Config;\nuse super::super::util::{self, helper};\n",
        "src/util/mod.rs": "pub fn helper() {}\nmod inner;\n",
        "src/util/inner.rs": "use crate::util::helper;\n",
        "src/main.rs": "use my_crate::net::Config;\n",
    }
    graph = graph_of(repo)
    assert graph.edges["src/net/tcp.rs"] == {"src/net.rs", "src/util/mod.rs"}
    assert graph.edges["src/util/inner.rs"] == {"src/util/mod.rs"}
    assert graph.edges["src/main.rs"] == {"src/net.rs"}          # crate name, '-' -> '_'
    assert cycles(repo) == [["src/net.rs", "src/net/tcp.rs"], ["src/util/inner.rs", "src/util/mod.rs"]]


def test_rust_without_cargo_toml_lib_rs_is_still_a_root():
    repo = {
        "lib.rs": "mod a;\nmod b;\n",
        "a.rs": "use crate::b::thing;\n",
        "b.rs": "pub fn thing() {}\n",
    }
    assert graph_of(repo).edges["a.rs"] == {"b.rs"}


# --- Java -----------------------------------------------------------------

def test_java_cycle_across_packages_and_wildcards():
    base = "src/main/java/com/acme"
    repo = {
        f"{base}/a/A.java": "package com.acme.a;\nimport com.acme.b.B;\nimport java.util.List;\nclass A {}\n",
        f"{base}/a/A2.java": "package com.acme.a;\nclass A2 {}\n",
        f"{base}/b/B.java": "package com.acme.b;\nimport static com.acme.a.A.make;\nclass B {}\n",
        f"{base}/c/C.java": "package com.acme.c;\nimport com.acme.a.*;\nimport com.acme.b.B.Inner;\nclass C {}\n",
    }
    graph = graph_of(repo)
    assert cycles(repo) == [[f"{base}/a/A.java", f"{base}/b/B.java"]]
    assert graph.edges[f"{base}/c/C.java"] == {f"{base}/a/A.java", f"{base}/a/A2.java", f"{base}/b/B.java"}
    assert graph.edges[f"{base}/a/A.java"] == {f"{base}/b/B.java"}


# --- dispatch -------------------------------------------------------------

def test_mixed_repository_keeps_languages_apart_and_lists_every_node():
    repo = {
        "go.mod": "module example.com/m\n",
        "cmd/tool/main.go": 'package main\nimport "example.com/m/internal"\n',
        "internal/i.go": "package internal\n",
        "web/app.tsx": "import './util';\n",
        "web/util.js": "export {};\n",
        "py/x.py": "import y\n",
        "py/y.py": "",
    }
    graph = graph_of(repo)
    assert graph.language_of == {
        "cmd/tool": "go", "internal": "go", "web/app.tsx": "tsx",
        "web/util.js": "javascript", "py/x.py": "python", "py/y.py": "python",
    }
    assert graph.edges["cmd/tool"] == {"internal"}
    assert graph.edges["web/app.tsx"] == {"web/util.js"}
    assert graph.edges["py/x.py"] == {"py/y.py"}      # script directory is a source root
    assert set(graph.edges) == set(graph.language_of)


def test_unknown_language_is_a_node_without_edges():
    files = {"x.kt": FileMetrics("x.kt", "kotlin", 1, 0, 0, (ImportRef("y"),))}
    graph = build_import_graph(files, lambda path: None)
    assert graph.edges == {"x.kt": frozenset()} and graph.language_of == {"x.kt": "kotlin"}


def test_read_errors_count_as_missing_files():
    def read(path):
        raise KeyError(path)
    files = {"a/a.go": FileMetrics("a/a.go", "go", 1, 0, 0, (ImportRef("example.com/m/b"),), "a")}
    assert build_import_graph(files, read).edges == {"a": frozenset()}


def test_rust_module_shared_by_lib_and_main_resolves_in_both_crates():
    repo = {
        "Cargo.toml": CARGO,
        "src/lib.rs": "mod util;\n",
        "src/main.rs": "mod util;\nmod cli;\n",
        "src/util.rs": "pub fn f() {}\n",
        "src/cli.rs": "use crate::util::f;\n",
    }
    graph = graph_of(repo)
    assert graph.edges["src/cli.rs"] == {"src/util.rs"}
    assert graph.edges["src/main.rs"] == {"src/util.rs", "src/cli.rs"}


def test_type_checking_edges_hold_only_imports_not_also_made_at_runtime():
    repo = {
        "a.py": "import b\nimport c\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import b\n    import d\n",
        "b.py": "", "c.py": "", "d.py": "",
    }
    graph = graph_of(repo)
    assert graph.edges["a.py"] == {"b.py", "c.py"}
    assert graph.type_checking_edges == {"a.py": {"d.py"}}


def test_jsonc_keeps_strings_that_look_like_comments():
    from neo_git.health.resolvers.tsconfig import parse_jsonc

    text = '{"a": "http://x/*y*/", /* c */ "b": [1, 2,], // tail\n "c": "q\\"//",}'
    assert parse_jsonc(text) == {"a": "http://x/*y*/", "b": [1, 2], "c": 'q"//'}
    assert parse_jsonc("[1, 2]") == {} and parse_jsonc("{oops") == {}


def test_tsconfig_extends_loop_terminates():
    repo = {
        "tsconfig.json": '{"extends": "./b.json"}',
        "b.json": '{"extends": "./tsconfig.json", "compilerOptions": {"baseUrl": "src"}}',
        "src/x.ts": "import 'y';\n",
        "src/y.ts": "export {};\n",
    }
    assert graph_of(repo).edges["src/x.ts"] == {"src/y.ts"}
