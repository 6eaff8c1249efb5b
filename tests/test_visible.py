"""`neo_git.visible.visible`: the one escaping function for stored text shown to people and models."""
from __future__ import annotations

import pytest

from neo_git.visible import visible


@pytest.mark.parametrize("raw, shown", [
    ("plain text, tabs\tstay", "plain text, tabs\tstay"),
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("line\nnext\rover", "line\\nnext\\rover"),
    ("a\u202eevil", "a\\u202eevil"),          # right-to-left override
    ("iso\u2066late\u2069", "iso\\u2066late\\u2069"),
    ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),
    ("csi\x9bone byte", "csi\\x9bone byte"),
])
def test_controls_bidi_and_zero_width_are_shown_as_escapes(raw, shown):
    assert visible(raw) == shown


def test_keep_newlines_keeps_line_feeds_but_not_carriage_returns():
    assert visible("one\ntwo\r\u202e", keep_newlines=True) == "one\ntwo\\r\\u202e"


def test_non_strings_are_shown_as_text():
    assert visible(42) == "42"
