"""The HTML page: skeleton, header, headline numbers, and the pieces every section uses.

The page is one file: the stylesheet (`report.css`) is inlined, charts are inline SVG,
and there is no script at all. A Content-Security-Policy meta tag forbids loading or
running anything (no `script-src`, no network): even a string that slipped past `esc`
could not run or fetch. Sections live in `health_section.py` and `memory_section.py`.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from neo_git.report.text import esc, number, signed

CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")


def stylesheet() -> str:
    """The page's CSS (shipped beside this module)."""
    return (Path(__file__).with_name("report.css")).read_text(encoding="utf-8")


def document(title: str, body: Sequence[str]) -> str:
    """The whole page around *body* (already escaped HTML fragments)."""
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        '<meta name="generator" content="git-neo">',
        f"<title>{esc(title)}</title>",
        f"<style>\n{stylesheet()}</style>",
        "</head>",
        "<body>",
        "<main>",
        *body,
        "</main>",
        "</body>",
        "</html>",
        "",
    ])


def legend(items: Sequence[tuple[str, str]], shape: str = "") -> str:
    """A chart legend: (label, css) pairs; *shape* "box" for areas and bars, "tri" for markers."""
    cls = f"key {shape}".strip()
    return ('<ul class="legend">' + "".join(f'<li class="s-{esc(css)}"><span class="{cls}"></span>{esc(label)}</li>'
                                          for label, css in items) + "</ul>")


def figure(title: str, chart: str, *, legend_html: str = "", note: str = "", wide: bool = False) -> str:
    """A chart in its frame, with a heading, legend and an optional note (escaped here)."""
    note_html = f'<p class="note">{esc(note)}</p>' if note else ""
    style = ' style="grid-column: 1 / -1"' if wide else ""
    return (f"<figure{style}><figcaption><h3>{esc(title)}</h3>{legend_html}{note_html}</figcaption>"
            f"{chart}</figure>")


_CELL_CLASS = {"n": ' class="n"', "w": ' class="w"', "": ""}


def table(table_id: str, caption: str, headers: Sequence[tuple[str, str | bool]], rows: Sequence[Sequence[str]], *,
          scroll: bool = False) -> str:
    """A table; *headers* are (label, kind): "n" (or True) a number, "w" text that must not wrap
    (ids, dates), "" (or False) text. Cells are HTML the caller escaped (`esc`)."""
    kinds = [("n" if kind is True else "" if kind is False else kind) for _label, kind in headers]
    head = "".join(f'<th scope="col"{_CELL_CLASS[kind]}>{esc(label)}</th>' for (label, _), kind in zip(headers, kinds))
    body = "".join("<tr>" + "".join(f"<td{_CELL_CLASS[kind]}>{cell}</td>" for cell, kind in zip(row, kinds)) + "</tr>"
                   for row in rows)
    box = "tablebox scroll" if scroll else "tablebox"
    return (f'<div class="{box}"><table id="{esc(table_id)}"><caption>{esc(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


def row_table(table_id: str, caption: str, corner: str, labels: Sequence[str], values: Sequence[int],
              what: str) -> str:
    """A histogram's table laid sideways: one column per bin, one row of counts."""
    head = f'<th scope="col">{esc(corner)}</th>' + "".join(f'<th scope="col" class="n">{esc(x)}</th>'
                                                          for x in labels)
    body = (f'<tr><th scope="row">{esc(what)}</th>' + "".join(f'<td class="n">{number(v)}</td>' for v in values)
            + "</tr>")
    return (f'<div class="tablebox"><table id="{esc(table_id)}"><caption>{esc(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


def empty(text_html: str) -> str:
    """The placeholder of a section with nothing to draw (HTML given escaped)."""
    return f'<p class="empty">{text_html}</p>'


def card(label: str, value: str, *, change: int | None = None, lower_is_better: bool = True,
         since: str = "", sub: str = "") -> str:
    """One headline number, with its change over the window (good/bad coloured) and a sub-line."""
    chip = ""
    if change is not None:
        mood = "flat" if change == 0 else ("good" if (change < 0) == lower_is_better else "bad")
        arrow = "" if change == 0 else ("\u25bc " if change < 0 else "\u25b2 ")
        chip = f'<span class="chip {mood}">{arrow}{esc(signed(change))}</span> <span>{esc(since)}</span>'
    sub_html = f'<p class="sub">{chip or esc(sub)}</p>' if chip or sub else ""
    return (f'<li class="card"><p class="label">{esc(label)}</p><p class="value">{esc(value)}</p>'
            f"{sub_html}</li>")


def count_text(value: int | None) -> str:
    """A headline count ("–" when unknown)."""
    return number(value)
