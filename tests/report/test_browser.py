"""The report in a real browser: Debian's headless Chromium, network off, driven over the
DevTools protocol (tests/helpers/chromium.py). Skipped only when no Chromium is installed at
all, and never in CI (`.ci/run` installs it; with CI set a missing browser fails)."""
from __future__ import annotations

import os
import subprocess

import pytest

from neo_git.identity import open_repository
from neo_git.report.build import build_report
from tests.helpers.chromium import Chromium, find_chromium
from tests.helpers.report import HOSTILE_FACT, HOSTILE_FILE

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
                                reason="Chromium not found on PATH (Debian: apt-get install -y chromium)")

HEALTH_CHARTS = ("health-cycles", "health-modules", "health-god-files", "health-nesting", "health-lines",
                 "health-files")
COUNTS = """Object.fromEntries([...document.querySelectorAll('svg[data-chart]')].map(
    s => [s.dataset.chart, {points: s.querySelectorAll('.pt').length, said: Number(s.dataset.points),
                            nodes: s.querySelectorAll('.node').length, edges: s.querySelectorAll('.edge').length,
                            described: !!document.getElementById(s.getAttribute('aria-describedby'))}]))"""


def _fact_commits(repo) -> int:
    return int(subprocess.run(["git", "rev-list", "--first-parent", "--count", "refs/neo/facts"], cwd=repo,
                              capture_output=True, text=True, check=True).stdout)


def test_report_in_headless_chromium(built, tmp_path):
    if CHROMIUM is None:   # only reached in CI, which must never skip this test
        pytest.fail("CI must run the browser test, but chromium is missing (`.ci/run` installs it)")
    result = build_report(open_repository(built.path))
    with Chromium(CHROMIUM, tmp_path / "profile") as browser:
        browser.open(result.url)

        assert browser.errors() == []
        assert browser.requests() == [result.url]          # the page itself, nothing else

        # The hostile fact, file name and subject are text on the page; nothing ran.
        assert browser.evaluate("window.__pwned === undefined")
        assert browser.evaluate("document.scripts.length + document.images.length") == 0
        text = browser.evaluate("document.body.innerText")
        assert HOSTILE_FACT in text and HOSTILE_FILE.split("/")[1] in text

        counts = browser.evaluate(COUNTS)
        for chart in HEALTH_CHARTS:
            assert counts[chart]["points"] == counts[chart]["said"] == len(built.commits), chart
        assert counts["memory-kinds"]["points"] == counts["memory-review"]["points"] == _fact_commits(built.path)
        assert counts["memory-confidence"]["points"] == 10
        assert counts["memory-retired"]["points"] == 1
        assert counts["outcomes-weekly"]["points"] == counts["outcomes-health"]["points"] == 1
        assert counts["agents-turns"]["points"] == 1 and counts["agents-injected"]["points"] == 11
        assert counts["cycle-1"]["nodes"] == 2 and counts["cycle-1"]["edges"] == 2
        assert all(chart["described"] for chart in counts.values())   # every chart has its table

        # Hover titles name the commit: short id, date, subject.
        first = browser.evaluate("document.querySelector('svg[data-chart=health-cycles] .pt title').textContent")
        assert first.startswith(built.commits[0][:7] + " \u00b7 2024-04-25 ") and "initial layout" in first
        marker = browser.evaluate(
            "document.querySelector('svg[data-chart=health-cycles] .marker title').textContent")
        assert marker.startswith(built.commits[5][:7]) and "1 accepted" in marker
        edge = browser.evaluate("document.querySelector('svg[data-chart=cycle-1] .edge title').textContent")
        assert "import" in edge and ":1" in edge

        light = browser.evaluate("getComputedStyle(document.body).backgroundColor")
        browser.screenshot(tmp_path / "report-light.png")

        browser.emulate(dark=True)
        dark = browser.evaluate("getComputedStyle(document.body).backgroundColor")
        assert light != dark and _luminance(dark) < 0.2 < _luminance(light)
        browser.screenshot(tmp_path / "report-dark.png")

        browser.emulate(print_media=True)
        assert _luminance(browser.evaluate("getComputedStyle(document.body).backgroundColor")) > 0.9
        assert browser.evaluate("matchMedia('print').matches")
        columns = browser.evaluate("getComputedStyle(document.querySelector('.grid2')).gridTemplateColumns")
        assert len(columns.split()) == 2      # two charts a row on paper
        assert browser.pdf().startswith(b"%PDF")

        # Without JavaScript the page is the same page (it has none to begin with).
        browser.emulate()
        browser.call("Emulation.setScriptExecutionDisabled", value=True)
        browser.open(result.url)
        assert browser.evaluate("document.querySelectorAll('svg[data-chart=health-cycles] .pt').length") == \
            len(built.commits)
        assert browser.errors() == []

    for name in ("report-light.png", "report-dark.png"):
        shot = tmp_path / name
        assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 50_000


def _luminance(css: str) -> float:
    """Relative brightness (0..1) of an `rgb(r, g, b)` colour."""
    r, g, b = (int(part) for part in css[css.index("(") + 1:css.index(")")].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255
