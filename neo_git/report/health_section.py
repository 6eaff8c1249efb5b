"""The health sections: health over time (one point per first-parent commit) and where the
cycles are now (a graph per cycle at HEAD)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from neo_git.report import svg
from neo_git.report.activity import VERDICTS
from neo_git.report.cycles import MAX_NODES
from neo_git.report.graph import cycle_graph
from neo_git.report.page import empty, figure, legend, table
from neo_git.report.text import day_text, esc, local_time, number, stamp_text

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.report.data import ReportData
    from neo_git.report.series import CommitInfo

MAX_GRAPHS = 12          # cycles drawn as graphs; the rest are listed


def commit_title(info: CommitInfo) -> str:
    """The hover heading of a commit: short id · date and time · subject."""
    return f"{info.short} \u00b7 {stamp_text(info.time, info.offset)} \u00b7 {info.subject}"


def commit_axis(infos: list[CommitInfo]) -> svg.Axis:
    """Tooltip headings and axis labels for a row of commits (see `time_labels`)."""
    return svg.Axis([commit_title(i) for i in infos], time_labels([(i.time, i.offset) for i in infos]))


def time_labels(moments: list[tuple[int, int]]) -> list[str]:
    """Axis labels for (epoch, offset) positions, as precise as the row's span needs: "Nov 2023"
    over a year or across years, "Mar 4" over days, "Mar 4 14:05" within three days, "14:05:09"
    within two hours (memory written by a script)."""
    if not moments:
        return []
    span = moments[-1][0] - moments[0][0]
    stamps = [local_time(t, o) for t, o in moments]
    if span < 2 * 3600:
        labels = [m.strftime("%H:%M:%S") for m in stamps]
    elif span < 3 * 86400:
        labels = [f"{m.strftime('%b')} {m.day} {m.strftime('%H:%M')}" for m in stamps]
    elif span < 300 * 86400 and stamps[0].year == stamps[-1].year:
        labels = [f"{m.strftime('%b')} {m.day}" for m in stamps]
    else:
        labels = [m.strftime("%b %Y") for m in stamps]
    if len(moments) > 1 and len(set(labels)) == 1:   # all at one moment (a script wrote them)
        labels = [f"#{i + 1}" for i in range(len(moments))]
    return labels


def outcome_markers(data: ReportData) -> list[svg.Marker]:
    """A marker under every commit of the window that carried outcomes (coloured by the best verdict)."""
    markers = []
    for index, point in enumerate(data.health):
        counts = data.activity.by_commit.get(point.commit.commit)
        if not counts:
            continue
        best = next(v for v in VERDICTS if counts.get(v))
        what = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts.get(v))
        markers.append(svg.Marker(index, best, f"{commit_title(point.commit)}\noutcomes: {what}"))
    return markers


def _has(points, key: str) -> bool:
    return any(key in p.health for p in points)


def _languages(points) -> list[str]:
    seen: dict[str, int] = {}
    for p in points:
        for language, row in p.health["languages"].items():
            seen[language] = max(seen.get(language, 0), row["lines"])
    return sorted(seen, key=lambda language: (-seen[language], language))


def health_section(data: ReportData) -> str:
    """Charts of cycles, god files, nesting and size per language over the window, and the table."""
    points = data.health
    axis = commit_axis([p.commit for p in points])
    markers = outcome_markers(data)
    timed = _has(points, "import_time_cycles")

    def values(key: str) -> list:
        return [p.health.get(key) for p in points]

    cycles = [svg.Series("every edge", values("cycles"), "1", under=timed)]
    modules = [svg.Series("every edge", values("modules_in_cycles"), "1", under=timed)]
    if timed:
        cycles.append(svg.Series("import-time", values("import_time_cycles"), "2"))
        modules.append(svg.Series("import-time", values("modules_in_import_time_cycles"), "2"))
    languages = _languages(points)
    lines = [svg.Series(lang, [p.health["languages"].get(lang, {}).get("lines", 0) for p in points], lang)
             for lang in languages]
    files = [svg.Series(lang, [p.health["languages"].get(lang, {}).get("files", 0) for p in points], lang)
             for lang in languages]
    pairs = [(s.name, s.css) for s in cycles]
    charts = [
        figure("Import cycles", svg.step_chart("health-cycles", "Import cycles per commit", "health-table", axis,
                                               cycles, markers), legend_html=legend(pairs)),
        figure("Modules in cycles", svg.step_chart("health-modules", "Modules caught in import cycles per commit",
                                                   "health-table", axis, modules, markers), legend_html=legend(pairs)),
        figure("God files", svg.step_chart("health-god-files", "God files per commit", "health-table", axis,
                                           [svg.Series("god files", values("god_files"), "6")], markers)),
        figure("Deepest nesting", svg.step_chart("health-nesting", "Deepest control-flow nesting per commit",
                                                 "health-table", axis,
                                                 [svg.Series("max nesting", values("max_nesting"), "4")], markers)),
        figure("Lines of code by language", svg.step_chart("health-lines", "Lines of code per language per commit",
                                                           "language-table", axis, lines, markers),
               legend_html=legend([(s.name, s.css) for s in lines])),
        figure("Files by language", svg.step_chart("health-files", "Source files per language per commit",
                                                   "language-table", axis, files, markers),
               legend_html=legend([(s.name, s.css) for s in files])),
    ]
    window = (f"the last {len(points):,} first-parent commits of {data.branch or 'HEAD'}"
              if len(points) > 1 else f"commit {data.head.short}")
    marker_note = (legend([("accepted", "accepted"), ("modified", "modified"), ("independent", "independent")],
                          "tick") if markers else "")
    lede = (f"<p class=\"lede\">Measured on {esc(window)}, oldest on the left. Hover a chart for the commit and its "
            f"numbers; lower is healthier. Ticks under the axis are commits that carried outcomes.</p>")
    return "".join([
        '<section id="health"><h2>Health over time</h2>', lede, marker_note,
        '<div class="grid2">', *charts, "</div>",
        health_table(data, timed), language_table(data, languages), "</section>",
    ])


def health_table(data: ReportData, timed: bool) -> str:
    """Every commit's numbers, newest first (the text alternative of the charts)."""
    headers = [("Commit", "w"), ("Date", "w"), ("Subject", ""), ("Cycles", "n")]
    if timed:
        headers.append(("Import-time", "n"))
    headers += [("Modules in cycles", "n"), ("God files", "n"), ("Nesting", "n"), ("Files", "n"),
                ("Lines", "n"), ("Outcomes", "")]
    rows = []
    for point in reversed(data.health):
        info, h = point.commit, point.health
        counts = data.activity.by_commit.get(info.commit) or {}
        pills = "".join(f'<span class="pill {v}">{counts[v]} {v}</span>' for v in VERDICTS if counts.get(v))
        row = [f'<code>{esc(info.short)}</code>', esc(day_text(info.time, info.offset)),
               f'<span class="subject">{esc(info.subject)}</span>', number(h.get("cycles"))]
        if timed:
            row.append(number(h.get("import_time_cycles")))
        row += [number(h.get("modules_in_cycles")), number(h.get("god_files")), number(h.get("max_nesting")),
                number(h.get("files")), number(h.get("lines")), pills]
        rows.append(row)
    return table("health-table", "Health per commit, newest first", headers, rows, scroll=len(rows) > 12)


def language_table(data: ReportData, languages: list[str]) -> str:
    """Files and lines per language per commit, newest first."""
    headers = [("Commit", "w"), ("Date", "w")]
    for language in languages:
        headers += [(f"{language} files", "n"), (f"{language} lines", "n")]
    rows = []
    for point in reversed(data.health):
        row = [f'<code>{esc(point.commit.short)}</code>', esc(day_text(point.commit.time, point.commit.offset))]
        for language in languages:
            found = point.health["languages"].get(language, {})
            row += [number(found.get("files", 0)), number(found.get("lines", 0))]
        rows.append(row)
    return table("language-table", "Files and lines per language, newest first", headers, rows,
                 scroll=len(rows) > 12)


def common_folder(paths) -> str:
    """The folder (with a trailing "/") every one of *paths* is in, or ""."""
    import posixpath

    folders = [posixpath.dirname(p) for p in paths]
    if not folders or any(not f for f in folders):
        return ""
    common = posixpath.commonpath(folders)
    return common + "/" if common else ""


def _under(path: str, prefix: str) -> str:
    return path[len(prefix):] if prefix and path.startswith(prefix) else path


def cycles_section(data: ReportData) -> str:
    """A graph per import cycle at HEAD, each edge labelled with its import line, and its table."""
    head = data.head
    out = ['<section id="cycles"><h2>Where the cycles are now</h2>',
           f'<p class="lede">Import cycles at <code>{esc(head.short)}</code>: the modules of each cycle, an arrow per '
           f"import between them, labelled with the line that makes it (hover for the import as written).</p>"]
    if not data.cycles:
        out.append(empty(f"No import cycles at <code>{esc(head.short)}</code>."))
        out.append("</section>")
        return "".join(out)
    out.append('<div class="stack">')
    for number_, cycle in enumerate(data.cycles[:MAX_GRAPHS], 1):
        languages = sorted({lang for lang in cycle.languages.values() if lang})
        badge = ""
        if cycle.import_time is True:
            badge = '<span class="badge">import-time</span>'
        elif cycle.import_time is False:
            badge = '<span class="badge soft">deferred imports only</span>'
        note = f"{len(cycle.nodes)} modules ({', '.join(languages) or '?'})"
        if len(cycle.nodes) > MAX_NODES:
            note += f"; the first {MAX_NODES} are drawn, the table lists every import"
        chart_id, table_id = f"cycle-{number_}", f"cycle-{number_}-table"
        prefix = common_folder(cycle.nodes)
        rows = [[f'<span class="path">{esc(_under(e.file, prefix))}:{e.line if e.line else "?"}</span>',
                 f"<code>{esc(e.text)}</code>" if e.text else "",
                 f'<span class="path">{esc(_under(e.target, prefix))}</span>'] for e in cycle.edges]
        under = f", paths under {prefix}" if prefix else ""
        edges = table(table_id, f"Imports in cycle {number_}{under}", [("Where", ""), ("Import", ""), ("Target", "")],
                      rows, scroll=len(rows) > 10)
        graph = cycle_graph(chart_id, f"Import cycle {number_}: {', '.join(cycle.nodes)}", table_id, cycle)
        out.append(f'<figure class="cycle"><figcaption><h3>Cycle {number_}{badge}</h3>'
                   f'<p class="note">{esc(note)}</p></figcaption><div class="pair">{graph}{edges}</div></figure>')
    out.append("</div>")
    if len(data.cycles) > MAX_GRAPHS:
        rest = data.cycles[MAX_GRAPHS:]
        rows = [[number(i), number(len(c.nodes)), f'<span class="path">{esc(", ".join(c.nodes))}</span>']
                for i, c in enumerate(rest, MAX_GRAPHS + 1)]
        out.append(table("cycles-more", f"{len(rest)} more cycles", [("Cycle", "n"), ("Modules", "n"),
                                                                      ("Members", "")], rows, scroll=True))
    out.append("</section>")
    return "".join(out)
