"""Charts as inline SVG strings: step lines, stacked areas, (stacked, diverging) bars.

No script: every data point is a `<g class="pt">` holding a full-height hover band and a
`<title>` (the browser's own tooltip: commit, date, subject, values), so the page reads
the same with JavaScript off and the points can be counted in the DOM (`data-points` on
each chart says how many there are). Colours come from CSS classes (`s-<name>`), so the
page's light and dark schemes restyle the charts too. Every label passes through
`text.esc`; the callers hand in raw strings.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from neo_git.report.text import esc, number

WIDTH, HEIGHT = 560, 210
TOP, RIGHT, BOTTOM, LEFT = 12, 10, 40, 44
RUG = 8                     # outcome markers sit this far below the plot


@dataclass(frozen=True)
class Series:
    """One named row of values; *css* picks its colour (`s-<css>`)."""

    name: str
    values: Sequence[float | None]
    css: str
    # drawn wide and pale under the others: a total whose subset series often equals it (every-edge
    # cycles under import-time ones) stays visible as a halo where the two coincide
    under: bool = False


@dataclass(frozen=True)
class Marker:
    """A mark under one x position (a commit that carried outcomes)."""

    index: int
    css: str
    title: str


@dataclass(frozen=True)
class Axis:
    """What the x positions stand for: a tooltip heading and an axis label per position."""

    titles: Sequence[str]          # tooltip heading per position (commit · date · subject)
    labels: Sequence[str]          # short axis label per position ("Mar 4")
    ticks: Sequence[int] = field(default_factory=tuple)   # positions to label (empty: pick ~6)
    categorical: bool = False      # weeks, days, bins: label up to 16 positions, centred


def nice_scale(low: float, high: float, count: int = 4, *, whole: bool = True) -> list[float]:
    """Round tick values covering [low, high], zero included; *whole* (counts) keeps steps at
    whole numbers of 1, 2 or 5 times a power of ten."""
    low, high = min(low, 0.0), max(high, 0.0)
    if high - low <= 0:
        high = 1.0
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    steps = (1, 2, 5, 10) if whole else (1, 2, 2.5, 5, 10)
    step = next(m * magnitude for m in steps if m * magnitude >= raw)
    if whole:
        step = max(1.0, round(step))
    ticks = [math.floor(low / step) * step]
    while ticks[-1] < high - 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def pick_ticks(count: int, wanted: int = 6) -> list[int]:
    """About *wanted* evenly spaced positions out of *count*, first and last included."""
    if count <= wanted:
        return list(range(count))
    step = (count - 1) / (wanted - 1)
    return sorted({round(i * step) for i in range(wanted)})


class _Frame:
    """Geometry of one chart: positions to x, values to y."""

    def __init__(self, count: int, low: float, high: float, height: int = HEIGHT) -> None:
        self.count = max(count, 1)
        self.height = height
        self.ticks = nice_scale(low, high)
        self.low, self.high = self.ticks[0], self.ticks[-1]
        self.plot_w = WIDTH - LEFT - RIGHT
        self.plot_h = height - TOP - BOTTOM
        self.band = self.plot_w / self.count

    def x(self, index: int) -> float:
        return LEFT + self.band * (index + 0.5)

    def y(self, value: float) -> float:
        span = (self.high - self.low) or 1.0
        return TOP + self.plot_h * (1 - (value - self.low) / span)

    @property
    def bottom(self) -> float:
        return TOP + self.plot_h


def _f(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _open(chart_id: str, title: str, table_id: str, points: int, height: int, kind: str) -> list[str]:
    return [f'<svg class="chart {kind}" viewBox="0 0 {WIDTH} {height}" role="img" preserveAspectRatio="xMidYMid meet"'
            f' aria-labelledby="{esc(chart_id)}-t" aria-describedby="{esc(table_id)}" data-chart="{esc(chart_id)}"'
            f' data-points="{points}">',
            f'<title id="{esc(chart_id)}-t">{esc(title)}</title>']


def _grid(frame: _Frame, axis: Axis, *, with_rug: bool) -> list[str]:
    out = ['<g class="grid">']
    for tick in frame.ticks:
        y = _f(frame.y(tick))
        zero = ' class="zero"' if tick == 0 else ""
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y}" y2="{y}"{zero}/>')
        out.append(f'<text class="tick" x="{LEFT - 8}" y="{y}" text-anchor="end" dy="0.32em">{number(tick)}</text>')
    label_y = _f(frame.bottom + (RUG + 20 if with_rug else 18))
    longest = max((len(label) for label in axis.labels), default=1)
    room = max(2, int(frame.plot_w / (longest * 6.4 + 14)))    # labels that fit side by side
    ticks = axis.ticks or pick_ticks(frame.count, min(room, 16 if axis.categorical else 8))
    shown = ""
    for index in ticks:
        if not 0 <= index < len(axis.labels) or not axis.labels[index] or axis.labels[index] == shown:
            continue   # a tick never repeats the label before it (many commits on one day)
        shown = axis.labels[index]
        edge = frame.count > 1 and not axis.categorical
        anchor = "start" if edge and index == 0 else "end" if edge and index == frame.count - 1 else "middle"
        x = frame.x(index) - (frame.band / 2 if anchor == "start" else -frame.band / 2 if anchor == "end" else 0)
        out.append(f'<text class="tick" x="{_f(max(x, LEFT))}" y="{label_y}" text-anchor="{anchor}">'
                   f'{esc(shown)}</text>')
    out.append("</g>")
    return out


def _values_text(series: Sequence[Series], index: int) -> str:
    return "\n".join(f"{s.name}: {number(s.values[index])}" for s in series
                     if index < len(s.values) and s.values[index] is not None)


def _point(frame: _Frame, index: int, title: str, inner: str) -> str:
    """One data point: a hover band the plot's height over position *index*, its tooltip, and
    what *inner* draws there (dots, bars)."""
    return (f'<g class="pt"><title>{esc(title)}</title><rect class="band" x="{_f(LEFT + frame.band * index)}"'
            f' y="{TOP}" width="{_f(frame.band)}" height="{_f(frame.plot_h)}"/>{inner}</g>')


def _dot(frame: _Frame, index: int, value: float, css: str) -> str:
    return f'<circle class="dot s-{esc(css)}" cx="{_f(frame.x(index))}" cy="{_f(frame.y(value))}" r="3.5"/>'


def _markers(frame: _Frame, markers: Sequence[Marker]) -> list[str]:
    if not markers:
        return []
    width = max(1.5, min(frame.band * 0.8, 6.0))
    out = ['<g class="rug">']
    for marker in markers:
        out.append(f'<g class="marker m-{esc(marker.css)}"><title>{esc(marker.title)}</title>'
                   f'<rect x="{_f(frame.x(marker.index) - width / 2)}" y="{_f(frame.bottom + 3)}" width="{_f(width)}"'
                   f' height="{RUG}" rx="1"/></g>')
    out.append("</g>")
    return out


def step_chart(chart_id: str, title: str, table_id: str, axis: Axis, series: Sequence[Series],
               markers: Sequence[Marker] = ()) -> str:
    """A step line per series (values hold until the next commit), one hover band per position."""
    count = len(axis.titles)
    values = [v for s in series for v in s.values if v is not None]
    frame = _Frame(count, min(values, default=0), max(values, default=1))
    out = _open(chart_id, title, table_id, count, HEIGHT, "lines") + _grid(frame, axis, with_rug=bool(markers))
    for s in series:
        # Each value holds over its commit's band: a step line from the band's left edge to its
        # right edge, so the first and last commits get their full width too.
        path, previous = [], None
        for index, value in enumerate(s.values):
            if value is None:
                previous = None
                continue
            left, right, y = LEFT + frame.band * index, LEFT + frame.band * (index + 1), frame.y(value)
            if previous is None:
                path.append(f"M{_f(left)} {_f(y)}")
            elif previous != y:
                path.append(f"V{_f(y)}")
            path.append(f"H{_f(right)}")
            previous = y
        if path:
            under = " under" if s.under else ""
            out.append(f'<path class="line{under} s-{esc(s.css)}" d="{"".join(path)}"/>')
    out += _markers(frame, markers)
    out.append('<g class="points">')
    for index in range(count):
        dots = "".join(_dot(frame, index, value, s.css)
                       for s in series if index < len(s.values) and (value := s.values[index]) is not None)
        out.append(_point(frame, index, f"{axis.titles[index]}\n{_values_text(series, index)}", dots))
    out += ["</g>", "</svg>"]
    return "".join(out)


def stacked_area(chart_id: str, title: str, table_id: str, axis: Axis, series: Sequence[Series]) -> str:
    """Series stacked on each other as step areas (composition over time), one band per position."""
    count = len(axis.titles)
    totals = [sum((s.values[i] or 0) for s in series) for i in range(count)]
    frame = _Frame(count, 0, max(totals, default=1))
    out = _open(chart_id, title, table_id, count, HEIGHT, "areas") + _grid(frame, axis, with_rug=False)
    base = [0.0] * count
    for s in series:
        top = [base[i] + (s.values[i] or 0) for i in range(count)]
        if any(top[i] != base[i] for i in range(count)):
            upper = [f"M{_f(LEFT)} {_f(frame.y(top[0]))}"]
            for i in range(count):
                if i:
                    upper.append(f"V{_f(frame.y(top[i]))}")
                upper.append(f"H{_f(LEFT + frame.band * (i + 1))}")
            lower = []
            for i in range(count - 1, -1, -1):
                lower.append(f"V{_f(frame.y(base[i]))}H{_f(LEFT + frame.band * i)}")
            out.append(f'<path class="area s-{esc(s.css)}" d="{"".join(upper + lower)}Z"/>')
        base = top
    out.append('<g class="points">')
    for index in range(count):
        values = _values_text(series, index) + f"\ntotal: {number(totals[index])}"
        out.append(_point(frame, index, f"{axis.titles[index]}\n{values}", _dot(frame, index, totals[index], "total")))
    out += ["</g>", "</svg>"]
    return "".join(out)


def bar_chart(chart_id: str, title: str, table_id: str, axis: Axis, series: Sequence[Series]) -> str:
    """Stacked bars per position; negative values stack downwards from zero (a diverging chart)."""
    count = len(axis.titles)
    ups = [sum(max(0, s.values[i] or 0) for s in series) for i in range(count)]
    downs = [sum(min(0, s.values[i] or 0) for s in series) for i in range(count)]
    frame = _Frame(count, min(downs, default=0), max(ups, default=1))
    out = _open(chart_id, title, table_id, count, HEIGHT, "bars") + _grid(frame, axis, with_rug=False)
    width = max(1.0, min(frame.band * 0.72, 36.0))
    out.append('<g class="points">')
    for index in range(count):
        rects, up, down = [], 0.0, 0.0
        x = frame.x(index) - width / 2
        for s in series:
            value = s.values[index] or 0
            if value == 0:
                continue
            start = up if value > 0 else down
            end = start + value
            y1, y2 = sorted((frame.y(start), frame.y(end)))
            rects.append(f'<rect class="bar s-{esc(s.css)}" x="{_f(x)}" y="{_f(y1)}" width="{_f(width)}"'
                         f' height="{_f(max(y2 - y1, 0.5))}"/>')
            if value > 0:
                up = end
            else:
                down = end
        out.append(_point(frame, index, f"{axis.titles[index]}\n{_values_text(series, index)}", "".join(rects)))
    out += ["</g>", "</svg>"]
    return "".join(out)
