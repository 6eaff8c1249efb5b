"""`git neo ingest` maps a nested instruction file and an editor rule's globs to path scope
instead of always-apply constraints."""
from __future__ import annotations

from neo_git.ingest import ingest
from neo_git.store import FactStore
from tests.helpers.git import commit_files

FILES = {
    "CLAUDE.md": "# Style\nUse type hints everywhere.\n",
    "src/api/CLAUDE.md": "# API\nEvery handler validates its input with pydantic.\n",
    "services/billing/AGENTS.md": "# Billing\nAmounts are integers in cents.\n",
    ".cursor/rules/frontend.mdc": "---\ndescription: Frontend\nglobs: *.tsx, src/web/**/*.{ts,js}\n"
                                 "alwaysApply: false\n---\nComponents are function components.\n",
    ".cursor/rules/everywhere.mdc": "---\ndescription: Always\nglobs: src/**\nalwaysApply: true\n---\n"
                                    "Never log secrets.\n",
    ".github/instructions/sql.instructions.md": "---\napplyTo: 'migrations/**/*.sql'\n---\nMigrations are "
                                                "raw SQL.\n",
}


def _by_body(store):
    return {f.body: f for f in store.list(kind="constraint")}


def test_nested_files_and_editor_globs_become_path_scope(repo_with_commit):
    repo = repo_with_commit
    commit_files(repo, FILES, "rules")
    (repo / "node_modules" / "pkg").mkdir(parents=True)
    (repo / "node_modules" / "pkg" / "CLAUDE.md").write_text("# Vendored\nIgnore me.\n")
    (repo / ".gitignore").write_text("node_modules/\n")
    store = FactStore.open(repo)
    report = ingest(store)
    assert "src/api/CLAUDE.md" in report.files and "node_modules/pkg/CLAUDE.md" not in report.files
    facts = _by_body(store)
    assert facts["Use type hints everywhere."].metadata.paths == ()
    assert facts["Every handler validates its input with pydantic."].metadata.paths == ("src/api/**",)
    assert facts["Amounts are integers in cents."].metadata.paths == ("services/billing/**",)
    assert facts["Components are function components."].metadata.paths == (
        "**/*.tsx", "src/web/**/*.ts", "src/web/**/*.js")
    assert facts["Never log secrets."].metadata.paths == ()
    assert facts["Migrations are raw SQL."].metadata.paths == ("migrations/**/*.sql",)

    unrelated = [f.body for f in store.recall("how do we deploy?").constraints]
    assert "Use type hints everywhere." in unrelated and "Never log secrets." in unrelated
    assert "Every handler validates its input with pydantic." not in unrelated
    on_api = [f.body for f in store.recall("how do we deploy?", file="src/api/users.py").constraints]
    assert "Every handler validates its input with pydantic." in on_api
    assert "Components are function components." not in on_api
    on_web = [f.body for f in store.recall("x", file="src/web/app/button.tsx").constraints]
    assert "Components are function components." in on_web


def test_changing_a_rules_globs_updates_its_scope_in_place(repo_with_commit):
    repo = repo_with_commit
    commit_files(repo, {".cursor/rules/frontend.mdc": FILES[".cursor/rules/frontend.mdc"]}, "rule")
    store = FactStore.open(repo)
    ingest(store)
    before = _by_body(store)["Components are function components."]
    (repo / ".cursor/rules/frontend.mdc").write_text(FILES[".cursor/rules/frontend.mdc"].replace(
        "globs: *.tsx, src/web/**/*.{ts,js}", "globs: app/**"))
    report = ingest(store)
    after = _by_body(store)["Components are function components."]
    assert after.id == before.id and after.metadata.paths == ("app/**",) and report.updated == [before.id]
    assert ingest(store).wrote is False
