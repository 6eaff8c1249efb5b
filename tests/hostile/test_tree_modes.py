"""Links, executables and submodules on the local facts ref: skipped with a warning by every
reader and reported by the doctor, never a crash or a "missing object"."""
from __future__ import annotations

from tests.helpers.git import git
from tests.helpers.plumbing import REF, mktree, neo, push_tree


def _plant_modes(repo) -> str:
    """Plant a submodule under a free two-hex folder name and a link under `zz`; return the name.

    Fact ids are random, so the submodule's name is chosen among the prefixes no fact uses."""
    tree = git(repo, "rev-parse", f"{REF}^{{tree}}").strip()
    facts = git(repo, "rev-parse", f"{REF}:facts").strip()
    meta = git(repo, "rev-parse", f"{REF}:meta.json").strip()
    rows = []
    for line in git(repo, "ls-tree", facts).splitlines():
        meta_part, name = line.split("\t", 1)
        mode, kind, oid = meta_part.split()
        rows.append((mode, kind, oid, name))
    taken = {row[3] for row in rows}
    free = next(f"{n:02x}" for n in range(256) if f"{n:02x}" not in taken)
    rows += [("160000", "commit", "0" * 39 + "1", free), ("120000", "blob", meta, "zz")]
    new_facts = mktree(repo, rows, missing_ok=True)
    root = mktree(repo, [("100644", "blob", meta, "meta.json"), ("040000", "tree", new_facts, "facts"),
                         ("160000", "commit", "0" * 39 + "3", "sub")], missing_ok=True)
    assert tree != root
    push_tree(repo, root)
    return free


def _next_ids(monkeypatch, *fact_ids: str) -> None:
    """The next adds get *fact_ids*, in order (a random id could land in the planted folder)."""
    import neo_git.store.writing as writing

    queue = list(fact_ids)
    monkeypatch.setattr(writing, "new_fact_id", lambda: queue.pop(0))


def test_a_submodule_or_link_in_the_facts_tree_is_skipped_by_readers_and_named_by_the_doctor(team_repo, capsys,
                                                                                                monkeypatch):
    repo, ids = team_repo
    free = _plant_modes(repo)
    listed = neo(capsys, "list")
    assert listed.code == 0, listed.err
    assert all(i in listed.out for i in ids)
    assert f"facts/{free} is not a folder" in listed.err and "facts/zz is not a folder" in listed.err
    assert neo(capsys, "recall", "HTTP client").code == 0
    logging_id = ids[0][:2] + ("0" * 14 if ids[0][2:] != "0" * 14 else "1" * 14)  # a good folder: the
    _next_ids(monkeypatch, logging_id)                                               # submodule stays
    added = neo(capsys, "add", "Logging", "structured logs only")
    assert added.code == 0, added.err
    assert git(repo, "ls-tree", f"{REF}:facts", free).startswith("160000 ")
    doctor = neo(capsys, "doctor")
    assert doctor.code == 1
    assert "mode 160000" in doctor.out and "mode 120000" in doctor.out
    assert "missing" not in doctor.out


def test_a_fact_whose_folder_name_a_submodule_holds_replaces_it(team_repo, capsys, monkeypatch):
    """A new fact's id is random: 1 in 256 times its folder's name is the one the submodule took.
    The write files the fact there (a sync drops such entries too), never a crash."""
    repo, ids = team_repo
    free = _plant_modes(repo)
    fact_id = free + "0" * 14
    _next_ids(monkeypatch, fact_id)
    added = neo(capsys, "add", "Logging", "structured logs only")
    assert added.code == 0, added.err
    assert git(repo, "ls-tree", "-r", "--name-only", f"{REF}:facts", free).split() == [f"{free}/{fact_id}.json"]
    listed = neo(capsys, "list")
    assert listed.code == 0 and all(i in listed.out for i in (*ids, fact_id))
    doctor = neo(capsys, "doctor")
    assert f"facts/{free} is not a folder" not in doctor.out and "facts/zz is not a folder" in doctor.out
