"""Case 5: a hostile push cannot override, hide or fake facts silently."""
from __future__ import annotations

from tests.helpers.plumbing import fact_dict, neo, push_files, ref_blob, ref_state


def test_a_blob_filed_under_the_wrong_folder_does_not_override_the_real_fact(team_repo, capsys):
    repo, ids = team_repo
    target = ids[0]
    fake = f"facts/zz/{target}.json"
    push_files(repo, {fake: fact_dict(target, "Use urllib for HTTP", body="hijacked")})
    result = neo(capsys, "show", target)
    assert result.code == 0, result.err
    assert "HTTP client" in result.out and "hijacked" not in result.out
    listed = neo(capsys, "list")
    assert "Use urllib" not in listed.out and "HTTP client" in listed.out
    assert fake in listed.err and "warning:" in listed.err


def test_a_misfiled_fact_alone_is_skipped_not_adopted(team_repo, capsys):
    repo, _ = team_repo
    stray = "0123456789abcdef"
    push_files(repo, {f"facts/ff/{stray}.json": fact_dict(stray, "stray")})
    result = neo(capsys, "list")
    assert "stray" not in result.out
    assert f"facts/ff/{stray}.json" in result.err


def test_non_project_scope_on_the_ref_is_skipped_with_a_warning(team_repo, capsys):
    repo, _ = team_repo
    global_id = "fedcba9876543210"
    path = f"facts/fe/{global_id}.json"
    push_files(repo, {path: fact_dict(global_id, "Global on the ref", scope="global")})
    result = neo(capsys, "list", "--all")
    assert result.code == 0
    assert "Global on the ref" not in result.out
    assert path in result.err and "scope" in result.err


def test_a_self_superseded_fact_cannot_make_restore_lie(team_repo, capsys):
    repo, _ = team_repo
    loop_id = "1111222233334444"
    path = f"facts/11/{loop_id}.json"
    push_files(repo, {path: fact_dict(loop_id, "Loop", is_valid=False, superseded_by=loop_id, supersedes=loop_id)})
    before = ref_state(repo)
    result = neo(capsys, "restore", loop_id)
    if result.code == 0:  # if it says "restored", the ref must say so too
        assert ref_blob(repo, loop_id)["is_valid"] is True
    else:
        assert result.code == 1 and "fatal:" in result.err
        assert ref_state(repo) == before
    assert "restored" not in result.out or ref_blob(repo, loop_id)["is_valid"] is True


def test_self_pointers_are_skipped_with_a_warning(team_repo, capsys):
    repo, _ = team_repo
    for n, field in enumerate(("superseded_by", "supersedes")):
        fact_id = f"22223333444455{n}0"
        push_files(repo, {f"facts/22/{fact_id}.json": fact_dict(fact_id, f"self {field}", **{field: fact_id})})
    dep = "2222333344445599"
    push_files(repo, {f"facts/22/{dep}.json": fact_dict(dep, "self depends", depends_on=[dep])})
    result = neo(capsys, "list", "--all")
    assert result.code == 0
    assert "self " not in result.out
    assert result.err.count("points at itself") == 3


def test_a_pointer_to_a_missing_fact_is_reported_and_ignored(team_repo, capsys):
    repo, ids = team_repo
    orphan = "3333444455556666"
    path = f"facts/33/{orphan}.json"
    push_files(repo, {path: fact_dict(orphan, "Orphan", is_valid=False, superseded_by="9999999999999999")})
    listed = neo(capsys, "list", "--all")
    assert "9999999999999999" in listed.err and path in listed.err
    result = neo(capsys, "restore", orphan)
    assert result.code == 0, result.err
    assert ref_blob(repo, orphan)["is_valid"] is True
    shown = neo(capsys, "why", ids[0])
    assert shown.code == 0


def test_why_explains_a_pushed_fact_with_null_threshold_and_embedder(team_repo, capsys):
    repo, ids = team_repo
    odd = "7777000000000001"
    push_files(repo, {f"facts/77/{odd}.json": fact_dict(odd, "odd", is_valid=False, superseded_by=ids[0], metadata={
        "invalidation": {"reason": "superseded", "similarity": 0.9, "threshold": None, "embedder": None}})})
    result = neo(capsys, "why", odd)
    assert result.code == 0, result.err
    assert "similarity 0.900" in result.out
