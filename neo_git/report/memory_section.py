"""The memory sections: memory over time (from `git log refs/neo/facts`), and outcomes and
agents (from the notes on `refs/notes/neo` and the local turn records)."""
from __future__ import annotations

from datetime import date, timedelta
from typing import TYPE_CHECKING

from neo_git.report import svg
from neo_git.report.activity import HEALTH, INJECTED_BINS, TURN_STATES, VERDICTS, continuous
from neo_git.report.health_section import time_labels
from neo_git.report.memory import CONFIDENCE, RETIRED, VALID
from neo_git.report.page import empty, figure, legend, row_table, table
from neo_git.report.text import day_text, esc, number, short_day, stamp_text

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.report.data import ReportData

MAX_MEMORY_POINTS = 400      # a longer ref history is drawn every n-th commit (the last always)
KINDS = ("constraint", "architecture", "decision", "pattern", "failure", "review", "known_unknown")
CONFIDENCE_BINS = 10


def sample(count: int, limit: int = MAX_MEMORY_POINTS) -> list[int]:
    """Indices of at most *limit* evenly spaced items out of *count*, the last included."""
    if count <= limit:
        return list(range(count))
    step = count / limit
    picked = sorted({min(count - 1, int(i * step)) for i in range(limit)} | {count - 1})
    return picked


def _fact_axis(points: list[dict]) -> svg.Axis:
    titles = [f"{p['commit'][:7]} \u00b7 {stamp_text(p['time'], p.get('offset', 0))} \u00b7 {p['subject']}"
              for p in points]
    return svg.Axis(titles, time_labels([(p["time"], p.get("offset", 0)) for p in points]))


def _label_axis(labels: list[str], titles: list[str] | None = None) -> svg.Axis:
    return svg.Axis(titles or labels, labels, categorical=True)


def memory_section(data: ReportData) -> str:
    """Valid facts by kind, retirements per week, confidence, review load, the most useful facts."""
    memory = data.memory
    out = ['<section id="memory"><h2>Memory over time</h2>']
    if not memory.points:
        out += [empty("No facts yet: <code>git neo add</code> writes the first one to "
                      "<code>refs/neo/facts</code>."), "</section>"]
        return "".join(out)
    picked = [memory.points[i] for i in sample(len(memory.points))]
    shown = "" if len(picked) == len(memory.points) else f" (every {len(memory.points) / len(picked):.1f}th drawn)"
    out.append(f'<p class="lede">From <code>git log refs/neo/facts</code>: {len(memory.points):,} commits'
               f"{esc(shown)}, each the whole project memory after one change.</p>")
    axis = _fact_axis(picked)
    present = [k for k in KINDS if any(p["kinds"].get(k) for p in picked)]
    present += sorted({k for p in picked for k in p["kinds"]} - set(present))
    kinds = [svg.Series(k.replace("_", " "), [p["kinds"].get(k, 0) for p in picked], k) for k in present]
    review = [svg.Series("needs review", [p["needs_review"] for p in picked], "needs_review"),
              svg.Series("stale", [p["stale"] for p in picked], "stale")]
    weeks = _retired_weeks(memory.retired)
    retired = [svg.Series(c, [w[1].get(c, 0) for w in weeks], c) for c in RETIRED]
    bins = confidence_bins(memory.rows)
    bin_labels = [f"{i / CONFIDENCE_BINS:.1f}" for i in range(CONFIDENCE_BINS)]
    bin_titles = [f"confidence {i / CONFIDENCE_BINS:.1f}\u2013{(i + 1) / CONFIDENCE_BINS:.1f}"
                  for i in range(CONFIDENCE_BINS)]
    charts = [
        figure("Valid facts by kind", svg.stacked_area("memory-kinds", "Valid facts by kind", "memory-table", axis,
                                                       kinds),
               legend_html=legend([(s.name, s.css) for s in kinds], "box")),
        figure("Retired per week", svg.bar_chart("memory-retired", "Facts retired per week", "retired-table",
                                                 _label_axis([short_day(w[0]) for w in weeks],
                                                             [f"week of {w[0]}" for w in weeks]), retired)
               if weeks else empty("Nothing retired yet."),
               legend_html=legend([("superseded", "superseded"), ("retracted", "retracted"), ("upkeep", "upkeep")],
                                  "box")),
        figure("Confidence of valid facts", svg.bar_chart("memory-confidence", "Valid facts per confidence band",
                                                          "confidence-table", _label_axis(bin_labels, bin_titles),
                                                          [svg.Series("facts", bins, "1")])),
        figure("Needs review and stale", svg.step_chart("memory-review", "Valid facts needing review, and stale",
                                                        "memory-table", axis, review),
               legend_html=legend([(s.name, s.css) for s in review])),
    ]
    out += ['<div class="grid2">', *charts, "</div>", _memory_table(memory.points, present),
            _retired_table(weeks), _confidence_table(bin_labels, bins),
            _top_facts(data), "</section>"]
    return "".join(out)


def confidence_bins(rows: dict) -> list[int]:
    """Valid facts per confidence band [0, 0.1), …, [0.9, 1.0]."""
    bins = [0] * CONFIDENCE_BINS
    for row in rows.values():
        if row[VALID]:
            bins[min(CONFIDENCE_BINS - 1, max(0, int(float(row[CONFIDENCE]) * CONFIDENCE_BINS)))] += 1
    return bins


def _retired_weeks(retired: dict) -> list[tuple[str, dict]]:
    valid = sorted(k for k in retired if isinstance(k, str) and isinstance(retired[k], dict))
    if not valid:
        return []
    try:
        span = continuous(date.fromisoformat(valid[0]), date.fromisoformat(valid[-1]), timedelta(days=7), 104)
    except ValueError:
        return []
    return [(d.isoformat(), retired.get(d.isoformat(), {})) for d in span]


def _memory_table(points: list[dict], kinds: list[str]) -> str:
    headers = [("Commit", "w"), ("Date", "w"), ("Change", "")] + [(k.replace("_", " "), "n") for k in kinds]
    headers += [("Valid", "n"), ("Needs review", "n"), ("Stale", "n")]
    rows = []
    for p in reversed(points[-1000:]):
        rows.append([f"<code>{esc(p['commit'][:7])}</code>", esc(day_text(p["time"], p.get("offset", 0))),
                     f'<span class="subject">{esc(p["subject"])}</span>']
                    + [number(p["kinds"].get(k, 0)) for k in kinds]
                    + [number(sum(p["kinds"].values())), number(p["needs_review"]), number(p["stale"])])
    caption = "Memory per commit of refs/neo/facts, newest first" + (
        " (the last 1,000)" if len(points) > 1000 else "")
    return table("memory-table", caption, headers, rows, scroll=len(rows) > 12)


def _retired_table(weeks: list[tuple[str, dict]]) -> str:
    rows = [[esc(w), *(number(counts.get(c, 0)) for c in RETIRED)] for w, counts in reversed(weeks) if counts]
    return table("retired-table", "Facts retired per week (weeks with none left out)",
                 [("Week of", "w"), ("Superseded", "n"), ("Retracted", "n"), ("Upkeep", "n")], rows,
                 scroll=len(rows) > 8)


def _confidence_table(labels: list[str], bins: list[int]) -> str:
    return row_table("confidence-table", "Valid facts per confidence band (from the value shown up to the next)",
                     "Confidence", labels, bins, "facts")


def _top_facts(data: ReportData) -> str:
    if not data.top_facts:
        return empty("No fact has earned a success yet: a fact earns one when advice that relied on it ships "
                     "(<code>git neo outcomes</code>).")
    rows = []
    for rank, top in enumerate(data.top_facts, 1):
        fact = top.fact
        body = fact.body if len(fact.body) <= 160 else fact.body[:159] + "\u2026"
        commits = []
        for c in top.commits[:6]:
            if isinstance(c, str):
                commits.append(f"<code>{esc(c[:7])}</code>")
            else:
                commits.append(f'<code title="{esc(c.subject)}">{esc(c.short)}</code> {esc(c.subject[:60])}')
        more = f" and {len(top.commits) - 6} more" if len(top.commits) > 6 else ""
        state = "" if fact.is_valid else ' <span class="badge soft">retired</span>'
        rows.append([number(rank),
                     f'<span class="facttext">{esc(fact.subject)}</span>{state}'
                     f'<span class="factbody">{esc(body)}</span>',
                     esc(fact.kind.value.replace("_", " ")), f"{fact.metadata.confidence:.2f}",
                     number(fact.metadata.success_count), "<br>".join(commits) + esc(more)])
    return table("top-facts", "Facts that earned the most successes, and the commits that earned them",
                 [("#", "n"), ("Fact", ""), ("Kind", "w"), ("Confidence", "n"), ("Successes", "n"),
                  ("Earned by", "")], rows)


def activity_section(data: ReportData) -> str:
    """Outcomes per week with the health they carried; agent turns per day and facts injected."""
    acts = data.activity
    out = ['<section id="outcomes"><h2>Outcomes and agents</h2>',
           '<p class="lede">What shipped: advice accepted as written or modified, and changes nobody suggested '
           "(from the notes on <code>refs/notes/neo</code>), with the health verdict each carried; and what agents "
           "did, from this clone's turn records.</p>", '<div class="grid2">']
    if acts.weeks:
        axis = _label_axis([short_day(w["week"]) for w in acts.weeks], [f"week of {w['week']}" for w in acts.weeks])
        verdicts = [svg.Series(v, [w[v] for w in acts.weeks], v) for v in VERDICTS]
        carried = [svg.Series("improved", [w["health"]["improvement"] for w in acts.weeks], "improvement"),
                   svg.Series("regressed", [-w["health"]["regression"] for w in acts.weeks], "regression")]
        out.append(figure("Outcomes per week", svg.bar_chart("outcomes-weekly", "Outcomes per week", "outcomes-table",
                                                             axis, verdicts),
                          legend_html=legend([(s.name, s.css) for s in verdicts], "box")))
        out.append(figure("Health they carried", svg.bar_chart("outcomes-health", "Outcomes that improved (up) or "
                                                                "regressed (down) health, per week", "outcomes-table",
                                                                axis, carried),
                          legend_html=legend([(s.name, s.css) for s in carried], "box"),
                          note="Up: outcomes whose files got healthier; down: outcomes whose files got worse."))
    else:
        out.append(figure("Outcomes per week", empty(
            "No outcomes recorded yet: <code>git neo install</code> sets up the hooks that judge each commit.")))
    if acts.days:
        axis = _label_axis([short_day(d["day"]) for d in acts.days], [d["day"] for d in acts.days])
        states = [svg.Series(s, [d[s] for d in acts.days], s) for s in TURN_STATES]
        out.append(figure("Agent turns per day", svg.bar_chart("agents-turns", "Agent turns per day", "turns-table",
                                                               axis, states),
                          legend_html=legend([(s.name, s.css) for s in states], "box")))
        labels = [str(i) for i in range(INJECTED_BINS)] + [f"{INJECTED_BINS}+"]
        out.append(figure("Facts injected per turn", svg.bar_chart(
            "agents-injected", "Turns by the number of facts injected", "injected-table",
            _label_axis(labels, [f"{label} facts injected" for label in labels]),
            [svg.Series("turns", acts.injected, "injected")]),
            note=f"{acts.injected_known:,} of {sum(d['turns'] for d in acts.days):,} turns recorded how many facts "
                 "the prompt hook gave them."))
    else:
        out.append(figure("Agent turns per day", empty(
            "No agent turns recorded in this clone: <code>git neo agent install claude</code> (or codex).")))
    out.append("</div>")
    tables = []
    if acts.weeks:
        rows = [[esc(w["week"]), *(number(w[v]) for v in VERDICTS), *(number(w["health"][h]) for h in HEALTH)]
                for w in reversed(acts.weeks) if any(w[v] for v in VERDICTS)]
        tables.append(table("outcomes-table", "Outcomes per week, and the health verdicts they carried",
                            [("Week of", "w"), ("Accepted", "n"), ("Modified", "n"), ("Independent", "n"),
                             ("Improved", "n"), ("Neutral", "n"), ("Regressed", "n")], rows, scroll=len(rows) > 10))
    if acts.days:
        rows = [[esc(d["day"]), number(d["turns"]), *(number(d[s]) for s in TURN_STATES), number(d["injected"]),
                 f"{d['injected'] / d['turns']:.1f}" if d["turns"] else "–"]
                for d in reversed(acts.days) if d["turns"]]
        tables.append(table("turns-table", "Agent turns per day",
                            [("Day", "w"), ("Turns", "n"), *((s, "n") for s in TURN_STATES),
                             ("Facts injected", "n"), ("Per turn", "n")], rows, scroll=len(rows) > 10))
    out += tables
    if acts.days:
        out.append(row_table("injected-table", "Turns by the number of facts injected", "Facts injected", labels,
                             acts.injected, "turns"))
    out.append("</section>")
    return "".join(out)
