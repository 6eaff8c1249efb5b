"""store/file_memo.py: a record file read once per (mtime, size), the same object while unchanged."""
from __future__ import annotations

import os

from neo_git.store.file_memo import FileMemo


def test_a_record_is_read_once_while_unchanged_and_again_when_it_changes(tmp_path):
    path, reads = tmp_path / "record.json", []
    memo: FileMemo[dict] = FileMemo({})

    def load(p):
        reads.append(p)
        return {"text": p.read_text()}

    assert memo.get(path, load) is memo.empty and reads == []      # missing: the empty value, no read
    path.write_text("one")
    first = memo.get(path, load)
    assert memo.get(path, load) is first and len(reads) == 1
    path.write_text("three")                                      # another size: read again
    assert memo.get(path, load) == {"text": "three"} and len(reads) == 2
    stat = path.stat()
    path.write_text("seven")                                      # same size, same mtime: forget() tells
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert memo.get(path, load) == {"text": "three"}
    memo.forget(path)
    assert memo.get(path, load) == {"text": "seven"}


def test_an_unreadable_record_is_the_empty_value_and_is_not_kept(tmp_path):
    path = tmp_path / "record"
    path.write_text("x")
    memo: FileMemo[dict] = FileMemo({})

    def fails(p):
        raise PermissionError(p)

    assert memo.get(path, fails) is memo.empty
    assert memo.get(path, lambda p: {"ok": True}) == {"ok": True}
