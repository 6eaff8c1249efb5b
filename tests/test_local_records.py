"""Clone-local records under `.git/neo` (`fileio.read_record`, `read_table`, `add_to_table`): the
review judge's answered pairs, the trust verdicts of received commits, the incoming queue. A
damaged record reads as empty (it only saves work); writers at once all keep what they added."""
from __future__ import annotations

import json
import multiprocessing

import pytest

from neo_git.fileio import add_to_table, read_record, read_table, rewrite_record


@pytest.mark.parametrize("content", [b"", b"{not json", b"[1, 2]", b'{"format": 1, "rows": [1]}', b"\xff\xfe",
                                     b"[" * 100_000])
def test_a_damaged_record_reads_as_empty(tmp_path, content):
    path = tmp_path / "record.json"
    path.write_bytes(content)
    assert read_table(path, "rows") == {}
    add_to_table(path, "rows", {"a": {"x": 1}})     # and the next write starts it afresh
    assert read_table(path, "rows") == {"a": {"x": 1}}


def test_a_missing_record_or_a_folder_in_its_place_reads_as_empty(tmp_path):
    assert read_record(tmp_path / "none.json", "rows") is None
    (tmp_path / "folder.json").mkdir()
    assert read_table(tmp_path / "folder.json", "rows") == {}


def test_members_that_are_not_objects_are_dropped_and_the_format_is_written(tmp_path):
    path = tmp_path / "record.json"
    path.write_text(json.dumps({"format": 1, "rows": {"a": {"x": 1}, "b": 3, "c": [1]}}))
    assert read_table(path, "rows") == {"a": {"x": 1}}
    add_to_table(path, "rows", {"d": {"y": 2}})
    assert json.loads(path.read_text()) == {"format": 1, "rows": {"a": {"x": 1}, "d": {"y": 2}}}


def test_a_name_already_there_keeps_its_row_only_when_asked(tmp_path):
    path = tmp_path / "record.json"
    add_to_table(path, "rows", {"a": {"v": "first"}})
    add_to_table(path, "rows", {"a": {"v": "second"}}, keep_first=True)
    assert read_table(path, "rows")["a"] == {"v": "first"}
    add_to_table(path, "rows", {"a": {"v": "third"}})
    assert read_table(path, "rows")["a"] == {"v": "third"}


def test_rewrite_makes_the_folder_and_takes_its_own_lock_name(tmp_path):
    path = tmp_path / "deep" / "queue.json"
    rewrite_record(path, "items", lambda items: [*(items or []), {"id": "x"}], lock=path.with_name("queue.json.lock"),
                   indent=1)
    assert read_record(path, "items") == [{"id": "x"}] and (tmp_path / "deep" / "queue.json.lock").exists()


def _add(path: str, worker: int, start) -> None:
    from pathlib import Path

    start.wait(60)
    for n in range(20):
        add_to_table(Path(path), "rows", {f"{worker}:{n}": {"worker": worker}})


def test_several_processes_adding_at_once_lose_nothing(tmp_path):
    path = tmp_path / "record.json"
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_add, args=(str(path), worker, start)) for worker in range(4)]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    assert set(read_table(path, "rows")) == {f"{w}:{n}" for w in range(4) for n in range(20)}
