"""`render(data) -> str`: the page for a ReportData (header, headline numbers, sections, footer)."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from neo_git.report.health_section import cycles_section, health_section
from neo_git.report.memory import NEEDS_REVIEW, STALE, VALID
from neo_git.report.memory_section import activity_section, memory_section
from neo_git.report.page import card, count_text, document
from neo_git.report.text import day_text, esc, stamp_text

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.report.data import ReportData


def render(data: ReportData) -> str:
    """The whole page as a string."""
    return document(f"git neo report \u00b7 {data.name}", [
        _header(data), _cards(data), health_section(data), cycles_section(data), memory_section(data),
        activity_section(data), _footer(data)])


def _header(data: ReportData) -> str:
    head = data.head
    first = data.health[0].commit
    span = (f"{len(data.health):,} commits, {esc(day_text(first.time, first.offset))} \u2192 "
            f"{esc(day_text(head.time, head.offset))}")
    branch = f"<strong>{esc(data.branch)}</strong> at " if data.branch else "detached HEAD at "
    generated = time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(data.generated))
    measured = (f"health measured for {data.measured:,} commits" if data.measured
                else "health read from the cache")
    return (f'<header class="top"><div><p class="eyebrow">git neo report</p><h1>{esc(data.name)}</h1>'
            f'<p class="meta">{branch}<code>{esc(head.short)}</code> {esc(head.subject)} \u00b7 {span}</p></div>'
            f'<p class="stamp">generated {esc(generated)}<br>{esc(measured)}</p>'
            f"</header>")


def _cards(data: ReportData) -> str:
    now, start = data.health[-1].health, data.health[0].health
    since = f"since {data.health[0].commit.short}" if len(data.health) > 1 else ""

    def change(key: str) -> int | None:
        if len(data.health) < 2 or key not in now or key not in start:
            return None
        return now[key] - start[key]

    health = [card("Import cycles", count_text(now.get("cycles")), change=change("cycles"), since=since)]
    if "import_time_cycles" in now:
        health.append(card("Import-time cycles", count_text(now.get("import_time_cycles")),
                          change=change("import_time_cycles"), since=since))
    health += [
        card("Modules in cycles", count_text(now.get("modules_in_cycles")), change=change("modules_in_cycles"),
             since=since),
        card("God files", count_text(now.get("god_files")), change=change("god_files"), since=since),
        card("Deepest nesting", count_text(now.get("max_nesting")), change=change("max_nesting"), since=since),
        card("Lines of code", count_text(now.get("lines")), sub=f"{now.get('files', 0):,} files"),
    ]
    rows = data.memory.rows.values()
    valid = [r for r in rows if r[VALID]]
    review = sum(r[NEEDS_REVIEW] for r in valid)
    stale = sum(r[STALE] for r in valid)
    memory = [card("Valid facts", count_text(len(valid)), sub=f"{review:,} need review \u00b7 {stale:,} stale")]
    verdicts = {"accepted": 0, "modified": 0, "independent": 0}
    for week in data.activity.weeks:
        for verdict in verdicts:
            verdicts[verdict] += week[verdict]
    memory.append(card("Advice accepted", count_text(verdicts["accepted"]),
                      sub=f"{verdicts['modified']:,} modified \u00b7 {verdicts['independent']:,} independent"))
    turns = sum(d["turns"] for d in data.activity.days)
    injected = sum(d["injected"] for d in data.activity.days)
    known = data.activity.injected_known
    memory.append(card("Agent turns", count_text(turns),
                      sub=f"{injected / known:.1f} facts injected per turn" if known else "no facts injected yet"))
    return (f'<ul class="cards" aria-label="Code health at {esc(data.head.short)}">' + "".join(health) + "</ul>"
            '<ul class="cards" aria-label="Memory">' + "".join(memory) + "</ul>")


def _footer(data: ReportData) -> str:
    from neo_git import __version__

    return ("<footer>"
            f"<p>Written by git-neo {esc(__version__)} on {esc(stamp_text(int(data.generated)))} (UTC). "
            "Every number comes from the repository: <code>git neo health --history N</code> prints the health "
            "series, <code>git log refs/neo/facts</code> the memory, <code>git log --notes=neo</code> the outcomes."
            "</p><p>This page is one file: no scripts, fonts or requests. Print it, or open it from anywhere.</p>"
            "</footer>")
