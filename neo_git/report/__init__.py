"""`git neo report`: one self-contained HTML page of health and memory over time (docs/architecture.md §14).

    from neo_git.report.build import build_report

    result = build_report(repo, commits=200)     # writes .git/neo/report.html
    result.path, result.url

Modules: `series` (health per first-parent commit, cached per tree), `memory` (the
history of refs/neo/facts), `activity` (outcome notes, agent turns), `cycles` (the
current import cycles with the line behind each edge), `svg`/`graph` (charts),
`page`/`render` and the `*_section` modules (HTML), `build` (gather and write).
Importing this package loads nothing else.
"""
from __future__ import annotations

DEFAULT_COMMITS = 200    # first-parent commits a report (and `health --history`) covers by default
