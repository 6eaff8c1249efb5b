"""Untrusted text shown as data: the one escaping function for every path that shows stored text.

A fact, a file name, a commit author or a session id can come from a teammate's push, an agent
or a file on disk. Wherever such a string reaches a person or a model (the terminal, agent hook
context, MCP replies, `ask` prompts, the HTML report), control characters must be shown, not
obeyed: ANSI/OSC escapes, CR, C1 controls (0x9b is a one-byte CSI to some terminals), the
bidirectional overrides and isolates that reorder what is shown ("Trojan Source",
CVE-2021-42574) and the zero-width characters that hide text. JSON output keeps the exact text.
"""
from __future__ import annotations

import re
from typing import Any

# C0 controls but tab, DEL and C1 controls; LRM/RLM/ALM; the bidi embeddings, overrides and
# isolates (U+202A–U+202E, U+2066–U+2069); the line and paragraph separators (U+2028, U+2029: a
# new line to many terminals and editors, which would let a subject forge a second line); zero-width space/joiners, word joiner and invisible
# operators (U+200B–U+200D, U+2060–U+2064), the Mongolian vowel separator and the BOM.
# Lone surrogates (U+D800–U+DFFF) are bytes of a file name that is not UTF-8 (Python's
# surrogateescape): shown as the byte they stand for, since no terminal can print them.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e"
                      "\u2060-\u2064\u2066-\u2069\ufeff\ud800-\udfff]")
_CONTROL_BUT_NEWLINE = re.compile(_CONTROL.pattern.replace("\x0a-\x1f", "\x0b-\x1f"))
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match) -> str:
    ch = match.group(0)
    if 0xDC80 <= ord(ch) <= 0xDCFF:
        return f"\\x{ord(ch) - 0xDC00:02x}"
    return _NAMED.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


def visible(text: Any, *, keep_newlines: bool = False) -> str:
    """*text* with every control, bidi and zero-width character shown as an escape (`\\x1b`,
    `\\u202e`, `\\n`); tabs stay. *keep_newlines* keeps line feeds (a multi-line block quoted
    in a prompt); a CR is escaped either way."""
    text = str(text)
    pattern = _CONTROL_BUT_NEWLINE if keep_newlines else _CONTROL
    if not pattern.search(text):
        return text
    return pattern.sub(_escape, text)
