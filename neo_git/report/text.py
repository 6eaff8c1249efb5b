"""Text for the page: the one escaping function for untrusted strings, and number/date formats.

Everything that came from a repository, a teammate or an agent (fact text, file names,
commit subjects, branch names, agent names) reaches the HTML only through `esc`: control,
bidi and zero-width characters are shown as escapes (`neo_git.visible`), then `&<>"'` are
entity-encoded, so a fact reading `<script>` is text on the page, in element content and in
attribute values alike.
"""
from __future__ import annotations

import html
from datetime import datetime, timedelta, timezone

from neo_git.visible import visible


def esc(value: object) -> str:
    """*value* as safe HTML text (element content or a quoted attribute value)."""
    return html.escape(visible(value), quote=True)


def number(value: float | int | None) -> str:
    """A count with thousands separators; "–" for missing."""
    if value is None:
        return "\u2013"
    if isinstance(value, float) and not value.is_integer():
        text = f"{value:,.2f}"
    else:
        text = f"{int(value):,}"
    return text.replace("-", "\u2212")   # a real minus sign


def signed(value: int) -> str:
    """+3 / −2 / ±0 with a real minus sign."""
    if value > 0:
        return f"+{value:,}"
    if value < 0:
        return f"\u2212{-value:,}"
    return "\u00b10"


def local_time(epoch: int, offset_minutes: int = 0) -> datetime:
    """*epoch* in the time zone it was recorded in (a commit's own offset)."""
    return datetime.fromtimestamp(epoch, timezone(timedelta(minutes=offset_minutes)))


def day_text(epoch: int, offset_minutes: int = 0) -> str:
    """YYYY-MM-DD."""
    return local_time(epoch, offset_minutes).strftime("%Y-%m-%d")


def stamp_text(epoch: int, offset_minutes: int = 0) -> str:
    """YYYY-MM-DD HH:MM."""
    return local_time(epoch, offset_minutes).strftime("%Y-%m-%d %H:%M")


def short_day(iso_day: str, with_year: bool = False) -> str:
    """"Mar 4" (or "Mar 4 2024") from an ISO date, without locale surprises."""
    moment = datetime.fromisoformat(iso_day)
    text = f"{moment.strftime('%b')} {moment.day}"
    return f"{text} {moment.year}" if with_year else text
