"""One import cycle drawn as an SVG graph: its modules on a circle, an arrow per import.

Each arrow bends to its right, so the two directions between a pair of modules never
overlap, and carries the line number(s) of the import(s) behind it; the hover title
names the file, the line and the import as written. Module labels are file names (the
full path is in the title). The edge table under the graph is its text alternative.
"""
from __future__ import annotations

import math
import posixpath

from neo_git.report.cycles import MAX_NODES, Cycle, CycleEdge
from neo_git.report.text import esc

WIDTH = 560
CHAR_W = 6.6         # average label character width at the graph's font size (12px)
NODE_H = 24


def _label(node: str) -> str:
    name = posixpath.basename(node.rstrip("/")) or node
    return name if len(name) <= 28 else name[:27] + "\u2026"


def _f(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _box(point: tuple[float, float], label: str) -> tuple[float, float]:
    """Half width and half height of a node's box."""
    return max(len(label) * CHAR_W / 2 + 10, 24), NODE_H / 2


def _clip(center: tuple[float, float], toward: tuple[float, float], half: tuple[float, float]) -> tuple[float, float]:
    """Where the segment from *center* toward *toward* leaves the node's box (plus a gap)."""
    dx, dy = toward[0] - center[0], toward[1] - center[1]
    if dx == 0 and dy == 0:
        return center
    scale = min(half[0] / abs(dx) if dx else math.inf, half[1] / abs(dy) if dy else math.inf)
    gap = 4 / math.hypot(dx, dy)
    return center[0] + dx * (scale + gap), center[1] + dy * (scale + gap)


def cycle_graph(chart_id: str, title: str, table_id: str, cycle: Cycle) -> str:
    """The SVG of *cycle* (at most MAX_NODES modules drawn; the table lists every edge)."""
    nodes = list(cycle.nodes[:MAX_NODES])
    count = len(nodes)
    labels = {node: _label(node) for node in nodes}
    widest = max(_box((0, 0), label)[0] for label in labels.values())
    # An ellipse as wide as the frame allows (labels stay inside), as tall as the count needs.
    rx = min(WIDTH / 2 - widest - 8, 90 + count * 30)
    ry = 0.0 if count == 2 else min(300.0, max(80.0, count * 18.0))
    raw = {}
    for index, node in enumerate(nodes):
        angle = math.pi + 2 * math.pi * index / count if count == 2 else -math.pi / 2 + 2 * math.pi * index / count
        raw[node] = (WIDTH / 2 + rx * math.cos(angle), ry * math.sin(angle))
    # The drawing's height is what the nodes use plus room for the arrows bending out.
    margin = NODE_H / 2 + (46 if count == 2 else 30)
    top = min(y for _x, y in raw.values()) - margin
    height = int(max(y for _x, y in raw.values()) - top + margin)
    position = {node: (x, y - top) for node, (x, y) in raw.items()}
    grouped: dict[tuple[str, str], list[CycleEdge]] = {}
    for edge in cycle.edges:
        if edge.source in position and edge.target in position:
            grouped.setdefault((edge.source, edge.target), []).append(edge)
    marker = f"{chart_id}-arrow"
    out = [f'<svg class="chart graph" viewBox="0 0 {WIDTH} {height}" role="img" aria-labelledby="{esc(chart_id)}-t"'
           f' aria-describedby="{esc(table_id)}" data-chart="{esc(chart_id)}" data-nodes="{count}"'
           f' data-edges="{len(grouped)}">',
           f'<title id="{esc(chart_id)}-t">{esc(title)}</title>',
           f'<defs><marker id="{esc(marker)}" class="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7"'
           f' markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z"/></marker></defs>']
    out.append('<g class="edges">')
    for (source, target), edges in sorted(grouped.items()):
        start, end = position[source], position[target]
        mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
        dx, dy = end[0] - start[0], end[1] - start[1]
        length = math.hypot(dx, dy) or 1.0
        bend = min(60.0, 18 + length * 0.12)
        control = (mid[0] - dy / length * bend, mid[1] + dx / length * bend)   # bend to the right
        a = _clip(start, control, _box(start, labels[source]))
        b = _clip(end, control, _box(end, labels[target]))
        label = ", ".join(f"L{e.line}" for e in edges if e.line) or "?"
        at = (0.25 * a[0] + 0.5 * control[0] + 0.25 * b[0], 0.25 * a[1] + 0.5 * control[1] + 0.25 * b[1])
        details = "\n".join(f"{e.file}:{e.line}  {e.text}" if e.line else f"{e.file}  (line unknown)" for e in edges)
        out.append(f'<g class="edge"><title>{esc(source)} \u2192 {esc(target)}\n{esc(details)}</title>'
                   f'<path d="M{_f(a[0])} {_f(a[1])}Q{_f(control[0])} {_f(control[1])} {_f(b[0])} {_f(b[1])}"'
                   f' marker-end="url(#{esc(marker)})"/>'
                   f'<text x="{_f(at[0])}" y="{_f(at[1])}" text-anchor="middle" dy="0.32em">{esc(label)}</text></g>')
    out.append('</g><g class="nodes">')
    for node in nodes:
        x, y = position[node]
        half_w, half_h = _box(position[node], labels[node])
        language = cycle.languages.get(node, "")
        out.append(f'<g class="node s-{esc(language)}"><title>{esc(node)} ({esc(language or "?")})</title>'
                   f'<rect x="{_f(x - half_w)}" y="{_f(y - half_h)}" width="{_f(2 * half_w)}" height="{NODE_H}"'
                   f' rx="6"/><text x="{_f(x)}" y="{_f(y)}" text-anchor="middle" dy="0.34em">'
                   f"{esc(labels[node])}</text></g>")
    out += ["</g>", "</svg>"]
    return "".join(out)
