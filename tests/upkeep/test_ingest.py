"""Constraint ingestion from the agent instruction files in the work tree."""
from __future__ import annotations

import json

import pytest

from neo_git.ingest import ingest
from neo_git.ingest.sections import split_sections
from tests.helpers.git import git
from tests.helpers.store import REF, open_store, run_cli

CLAUDE = """# Project rules

## Testing
- Run `pytest -q` before every commit.

## Style
Use absolute imports only.

## Secrets
Never commit keys like api_key=sk-abcdefghijklmnopqrstuvwxyz123456.
"""

AGENTS = """# Agents

## Tests
* run pytest -q before every commit

## Branches
Never push directly to main.
"""


@pytest.fixture
def repo(repo_with_commit):
    open_store(repo_with_commit).init()
    return repo_with_commit


def write(repo, name, text):
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def constraints(store):
    return {f.subject: f for f in store.list(scope="project", kind="constraint")}


def tip(repo):
    return git(repo, "rev-parse", REF).strip()


def test_one_constraint_per_section_tagged_with_its_source(repo):
    write(repo, "CLAUDE.md", CLAUDE)
    store = open_store(repo)
    report = ingest(store)
    facts = constraints(store)
    assert set(facts) == {"Project rules › Testing", "Project rules › Style", "Project rules › Secrets"}
    style = facts["Project rules › Style"]
    assert style.body == "Use absolute imports only."
    assert "ingested" in style.tags and "source:CLAUDE.md" in style.tags
    assert style.metadata.source_file == "CLAUDE.md" and style.metadata.provenance == "structural"
    assert "sk-abcdefghij" not in facts["Project rules › Secrets"].body  # redacted before writing
    assert "[REDACTED" in facts["Project rules › Secrets"].body
    assert len(report.added) == 3
    assert git(repo, "log", "-1", "--format=%s", REF).strip() == "ingest constraints: 3 added"
    assert len(git(repo, "log", "--format=%H", REF).split()) == 2  # init + one commit for the whole file


def test_ingest_is_idempotent(repo):
    write(repo, "CLAUDE.md", CLAUDE)
    write(repo, ".cursorrules", "Prefer small functions.\n")
    ingest(open_store(repo))
    before = tip(repo)
    again = ingest(open_store(repo))
    assert tip(repo) == before and not again.wrote and again.unchanged == 4


def test_same_rule_in_two_files_is_one_constraint_with_both_sources(repo):
    write(repo, "CLAUDE.md", CLAUDE)
    write(repo, "AGENTS.md", AGENTS + "\n## Tests again\n- Run pytest -q before every commit.\n")
    store = open_store(repo)
    ingest(store)
    facts = store.list(scope="project", kind="constraint")
    testing = [f for f in facts if "pytest" in f.body]
    assert len(testing) == 1, [f.subject for f in facts]
    assert {"source:CLAUDE.md", "source:AGENTS.md"} <= set(testing[0].tags)
    assert len([t for t in testing[0].tags if t.startswith("section:")]) == 3  # 1 in CLAUDE.md, 2 in AGENTS.md
    assert len(facts) == 4  # testing, style, secrets, branches
    # one file drops it: the constraint stays, with the other source only
    write(repo, "AGENTS.md", "# Agents\n\n## Branches\nNever push directly to main.\n")
    report = ingest(store)
    assert report.updated == [testing[0].id] and not report.retired
    kept = store.get(testing[0].id)
    assert kept.is_valid and "source:AGENTS.md" not in kept.tags and "source:CLAUDE.md" in kept.tags


def test_changed_section_supersedes_exactly_that_constraint(repo):
    write(repo, "CLAUDE.md", CLAUDE)
    store = open_store(repo)
    ingest(store)
    old = constraints(store)
    write(repo, "CLAUDE.md", CLAUDE.replace("Use absolute imports only.", "Use relative imports inside a package."))
    report = ingest(store)
    new = constraints(store)
    assert len(report.superseded) == 1 and not report.retired
    old_style, new_style = old["Project rules › Style"], new["Project rules › Style"]
    assert report.superseded == [[old_style.id, new_style.id]]
    assert new_style.supersedes == old_style.id and "relative" in new_style.body
    assert new["Project rules › Testing"].id == old["Project rules › Testing"].id  # left alone
    assert new["Project rules › Secrets"].id == old["Project rules › Secrets"].id
    why = store.why(old_style.id)
    assert "section 'Project rules › Style' of CLAUDE.md changed" in why["explanation"]


def test_sections_ingested_together_never_supersede_each_other(repo):
    similar = "# Rules\n" + "".join(f"## Rule {i}\nAlways run the linter on module {i} before merging.\n"
                                    for i in range(8))
    write(repo, "AGENTS.md", similar)
    store = open_store(repo)
    report = ingest(store)
    assert len(report.added) == 8 and not report.superseded
    assert len(store.list(scope="project", kind="constraint")) == 8


def test_deleted_file_retires_its_constraints(repo):
    write(repo, "CLAUDE.md", CLAUDE)
    write(repo, ".windsurfrules", "Keep functions under 50 lines.\n")
    store = open_store(repo)
    ingest(store)
    (repo / "CLAUDE.md").unlink()
    report = ingest(store)
    assert len(report.retired) == 3 and all("CLAUDE.md was deleted" in why for _, why in report.retired)
    assert [f.subject for f in store.list(scope="project", kind="constraint")] == [".windsurfrules"]
    assert "retired" in store.why(report.retired[0][0])["explanation"]


def test_removed_section_is_retired(repo):
    write(repo, "CLAUDE.md", CLAUDE)
    store = open_store(repo)
    ingest(store)
    write(repo, "CLAUDE.md", CLAUDE.split("## Secrets")[0])
    report = ingest(store)
    assert len(report.retired) == 1 and "no longer in CLAUDE.md" in report.retired[0][1]


def test_unreadable_files_are_skipped_and_keep_their_constraints(repo):
    write(repo, "CLAUDE.md", CLAUDE)
    store = open_store(repo)
    ingest(store)
    before = tip(repo)
    (repo / "CLAUDE.md").write_bytes(b"\xff\xfe binary \x00 junk")
    (repo / ".cursor" / "rules").mkdir(parents=True)
    (repo / ".cursor" / "rules" / "latin1.mdc").write_bytes("caf\xe9 rules".encode("latin-1"))
    (repo / ".clinerules").write_text("x" * (300 * 1024), encoding="utf-8")
    report = ingest(store)
    assert sorted(report.skipped) == [".clinerules", ".cursor/rules/latin1.mdc", "CLAUDE.md"]
    assert any("binary" in w for w in report.warnings) and any("UTF-8" in w for w in report.warnings)
    assert any("larger than" in w for w in report.warnings)
    assert tip(repo) == before and len(constraints(store)) == 3


def test_every_source_location(repo):
    for name in ("AGENTS.md", ".cursorrules", ".cursor/rules/python.mdc", ".github/copilot-instructions.md",
                 ".windsurfrules", ".clinerules/style.md"):
        write(repo, name, f"Rule from {name} about naming {len(name)}.\n")
    store = open_store(repo)
    report = ingest(store)
    assert len(report.files) == 6 and len(report.added) == 6
    assert {f.metadata.source_file for f in store.list(scope="project", kind="constraint")} == set(report.files)


def test_front_matter_and_code_fences():
    text = "---\ndescription: Python rules\nglobs: '*.py'\n---\nUse type hints.\n\n## Example\n```\n# no heading\n```\n"
    sections = split_sections(".cursor/rules/py.mdc", text)
    assert [(s.heading, s.text) for s in sections] == [("Python rules", "Use type hints."),
                                                       ("Example", "```\n# no heading\n```")]


def test_cli_ingest_and_init(repo_with_commit):
    write(repo_with_commit, "CLAUDE.md", CLAUDE)
    out = run_cli(["init", "--json"], cwd=repo_with_commit)
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["ingest"]["added"]) == 3
    out = run_cli(["ingest"], cwd=repo_with_commit)
    assert out.returncode == 0 and b"0 added" in out.stdout and b"3 unchanged" in out.stdout


def test_dry_run_writes_nothing(repo):
    write(repo, "CLAUDE.md", CLAUDE)
    before = tip(repo)
    report = ingest(open_store(repo), dry_run=True)
    assert len(report.added) == 3 and tip(repo) == before
    assert "would change" in report.summary()


def test_symlink_out_of_the_work_tree_is_not_read(repo, tmp_path):
    secret = tmp_path / "outside.md"
    secret.write_text("# Private\nsomething from outside the repository\n", encoding="utf-8")
    (repo / "CLAUDE.md").symlink_to(secret)
    report = ingest(open_store(repo))
    assert report.skipped == ["CLAUDE.md"] and not report.added
    assert any("outside the work tree" in w for w in report.warnings)


def test_a_rule_retired_by_hand_is_not_brought_back(repo):
    write(repo, "CLAUDE.md", CLAUDE)
    store = open_store(repo)
    ingest(store)
    style = constraints(store)["Project rules › Style"]
    store.invalidate(style.id, "we allow relative imports now; the file is out of date")
    before = tip(repo)
    assert not ingest(store).wrote and tip(repo) == before
    # once the section says something new, it is a new rule again
    write(repo, "CLAUDE.md", CLAUDE.replace("Use absolute imports only.", "Relative imports are fine."))
    report = ingest(store)
    assert len(report.added) == 1 and "Relative" in store.get(report.added[0]["id"]).body


def test_renamed_heading_keeps_the_constraint(repo):
    write(repo, "CLAUDE.md", CLAUDE)
    store = open_store(repo)
    ingest(store)
    style = constraints(store)["Project rules › Style"]
    write(repo, "CLAUDE.md", CLAUDE.replace("## Style", "## Code style"))
    report = ingest(store)
    assert report.updated == [style.id] and not report.added and not report.retired
    assert store.get(style.id).subject == "Project rules › Code style"
