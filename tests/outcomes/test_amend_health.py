"""An amended commit's note carries its health: the copy records no new outcomes, but whether the
commit as it stands made the code healthier is still measured (it used to be `"health": null`)."""
from __future__ import annotations

from tests.helpers.git import commit_files, git
from tests.helpers.outcomes import note, process_head


def test_the_amended_commits_note_has_its_health(repo_with_commit):
    repo = repo_with_commit
    commit_files(repo, {"src/__init__.py": "", "src/b.py": "def b():\n    return 2\n"}, "b")
    process_head(repo)
    commit_files(repo, {"src/a.py": "def a():\n    return 1\n"}, "a")
    process_head(repo)
    (repo / "src" / "a.py").write_text("from src import b\n\n\ndef a():\n    return b.b()\n")
    (repo / "src" / "b.py").write_text("from src import a\n\n\ndef b():\n    return a.a()\n")
    git(repo, "commit", "-q", "-a", "--amend", "-m", "a, now with a cycle")
    amended = git(repo, "rev-parse", "HEAD").strip()
    process_head(repo)                                # what post-commit does for the amended commit
    [record] = [r for r in note(repo, amended) if r["type"] == "commit" and r["commit"] == amended]
    assert record["amends"] and record["health"] == "regression"
    assert any("cycle" in reason for reason in record["health_reasons"])
    assert not [r for r in note(repo, amended) if r.get("verdict") == "independent"]   # no new work counted
