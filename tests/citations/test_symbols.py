"""Symbols and fingerprints for every language the health engine parses: functions, methods
(`Class.method`, Go receivers, Rust impls), classes; whitespace and comments never change a
fingerprint, a changed statement always does; path globs cover what `git ls-files` covers."""
from __future__ import annotations

import pytest

from neo_git.citations.symbols import read_code
from neo_git.pathglob import glob_matches
from tests.helpers.git import commit_files, git

# (language, source, reformatted with other whitespace and comments, one statement changed,
#  the symbols it defines)
CASES = {
    "python": (
        "class Store:\n    def load(self, key):\n        value = self.cache.get(key)\n        return value or 0\n\n\n"
        "def helper(a, b):\n    return [a, b]\n",
        "class Store:\n  # a store\n  def load(self,\n           key):\n    value = self.cache.get(key)  # hit?\n"
        "    return value or 0\n\ndef helper(a, b,):\n    return [\n        a,\n        b,\n    ]\n",
        "class Store:\n    def load(self, key):\n        value = self.cache.get(key)\n        return value or 1\n\n\n"
        "def helper(a, b):\n    return [a, b]\n",
        {"Store", "Store.load", "helper"}),
    "javascript": (
        "class Store {\n  load(key) {\n    const value = this.cache.get(key);\n    return value || 0;\n  }\n}\n"
        "const helper = (a, b) => [a, b];\nfunction main() { return helper(1, 2); }\n",
        "class Store {\n    /* a store */\n    load(key) { const value = this.cache.get(key); // hit?\n"
        "        return value || 0; }\n}\nconst helper = (a, b) => [a, b,];\nfunction main() {\n  return helper(1, 2);\n}\n",
        "class Store {\n  load(key) {\n    const value = this.cache.get(key);\n    return value || 1;\n  }\n}\n"
        "const helper = (a, b) => [a, b];\nfunction main() { return helper(1, 2); }\n",
        {"Store", "Store.load", "helper", "main"}),
    "typescript": (
        "export class Store {\n  load(key: string): number {\n    const value = this.cache.get(key);\n"
        "    return value ?? 0;\n  }\n}\nexport interface Cache { get(key: string): number }\n"
        "export function main(): void { new Store().load('a'); }\n",
        "export class Store {\n  // loads\n  load(key: string): number { const value = this.cache.get(key);\n"
        "    return value ?? 0; }\n}\nexport interface Cache {\n  get(key: string): number\n}\n"
        "export function main(): void {\n  new Store().load('a');\n}\n",
        "export class Store {\n  load(key: string): number {\n    const value = this.cache.get(key);\n"
        "    return value ?? 1;\n  }\n}\nexport interface Cache { get(key: string): number }\n"
        "export function main(): void { new Store().load('a'); }\n",
        {"Store", "Store.load", "Cache", "Cache.get", "main"}),
    "go": (
        "package store\n\ntype Store struct{ cache map[string]int }\n\n"
        "func (s *Store) Load(key string) int {\n\tvalue := s.cache[key]\n\treturn value\n}\n\n"
        "func Helper(a, b int) []int { return []int{a, b} }\n",
        "package store\n\n// Store keeps values.\ntype Store struct {\n\tcache map[string]int\n}\n\n"
        "func (s *Store) Load(key string) int {\n\tvalue := s.cache[key] // hit?\n\n\treturn value\n}\n\n"
        "func Helper(a, b int) []int {\n\treturn []int{\n\t\ta,\n\t\tb,\n\t}\n}\n",
        "package store\n\ntype Store struct{ cache map[string]int }\n\n"
        "func (s *Store) Load(key string) int {\n\tvalue := s.cache[key]\n\treturn value + 1\n}\n\n"
        "func Helper(a, b int) []int { return []int{a, b} }\n",
        {"Store", "Store.Load", "Helper"}),
    "rust": (
        "pub struct Store { cache: Vec<i32> }\n\nimpl Store {\n    pub fn load(&self, key: usize) -> i32 {\n"
        "        let value = self.cache[key];\n        value\n    }\n}\n\nfn helper(a: i32) -> i32 { a }\n",
        "/// A store.\npub struct Store {\n    cache: Vec<i32>,\n}\n\nimpl Store {\n    // loads\n"
        "    pub fn load(&self, key: usize) -> i32 { let value = self.cache[key]; /* hit */ value }\n}\n\n"
        "fn helper(a: i32) -> i32 {\n    a\n}\n",
        "pub struct Store { cache: Vec<i32> }\n\nimpl Store {\n    pub fn load(&self, key: usize) -> i32 {\n"
        "        let value = self.cache[key + 1];\n        value\n    }\n}\n\nfn helper(a: i32) -> i32 { a }\n",
        {"Store", "Store.load", "helper"}),
    "java": (
        "class Store {\n  int load(String key) {\n    int value = cache.get(key);\n    return value;\n  }\n"
        "  Store() {}\n}\n",
        "class Store {\n    /** Loads. */\n    int load(String key) { int value = cache.get(key); // hit\n"
        "        return value; }\n    Store() { }\n}\n",
        "class Store {\n  int load(String key) {\n    int value = cache.get(key);\n    return value + 1;\n  }\n"
        "  Store() {}\n}\n",
        {"Store", "Store.load", "Store.Store"}),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_symbols_and_fingerprints(language):
    source, reformatted, changed, names = CASES[language]
    code = read_code(language, source.encode())
    assert set(code.symbols) == names
    again = read_code(language, reformatted.encode())
    assert set(again.symbols) == names
    for name in names:    # whitespace, wrapping, trailing commas and comments change nothing
        assert again.symbols[name].fingerprint == code.symbols[name].fingerprint, (language, name)
    assert again.fingerprint == code.fingerprint
    edited = read_code(language, changed.encode())
    method = next(n for n in names if n.startswith("Store.") and n.split(".")[1].lower() == "load")
    assert edited.symbols[method].fingerprint != code.symbols[method].fingerprint
    assert edited.fingerprint != code.fingerprint
    untouched = [n for n in names if n not in (method, "Store")]
    assert all(edited.symbols[n].fingerprint == code.symbols[n].fingerprint for n in untouched)


def test_a_renamed_function_keeps_its_fingerprint_and_a_moved_statement_does_not():
    a = read_code("python", b"def load(x):\n    if x:\n        a()\n    b()\n")
    b = read_code("python", b"def fetch(x):\n    if x:\n        a()\n    b()\n")
    c = read_code("python", b"def load(x):\n    if x:\n        a()\n        b()\n")   # same tokens, other tree
    assert a.symbols["load"].fingerprint == b.symbols["fetch"].fingerprint
    assert a.symbols["load"].fingerprint != c.symbols["load"].fingerprint


def test_a_property_and_its_setter_are_one_symbol():
    code = read_code("python", b"class C:\n    @property\n    def x(self):\n        return 1\n\n"
                               b"    @x.setter\n    def x(self, v):\n        self._x = v\n")
    assert code.symbols["C.x"].start == 2 and code.symbols["C.x"].end == 8


GLOB_FILES = ("src/a.py", "src/sub/b.py", "src/sub/c.ts", "migrations/1.sql", "migrations/x/2.sql", "top.py",
              ".github/workflows/ci.yml", "src/api/CLAUDE.md")
GLOBS = ("src", "src/*", "src/*.py", "src/**/*.py", "**/*.py", "migrations/**", "*.py", "src/sub", "sr?",
         "src/**", "**/sub", "src/[as]*", "src/[!a]*", "src/sub/", ".github/**", "src/api/**", "**/*.sql")


def test_path_globs_cover_exactly_what_git_ls_files_glob_pathspecs_cover(git_repo):
    commit_files(git_repo, {name: "x\n" for name in GLOB_FILES}, "files")
    for pattern in GLOBS:
        expected = git(git_repo, "ls-files", f":(glob){pattern}").split()
        assert [f for f in sorted(GLOB_FILES) if glob_matches(pattern, f)] == sorted(expected), pattern
