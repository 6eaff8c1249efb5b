"""`git neo report` and `git neo health --history`: the numbers, the caches, the page's text."""
from __future__ import annotations

import html
import json
import re
import subprocess

import pytest

from neo_git.identity import open_repository
from neo_git.report.build import build_report, collect
from tests.helpers.git import commit_files
from tests.helpers.report import HOSTILE_FACT, HOSTILE_FILE, HOSTILE_SUBJECT, run_cli


def parsed(page: str) -> tuple[set[str], list[tuple[str, str]]]:
    """(every tag name, every src/href/xlink:href attribute) of a page, as an HTML parser reads it."""
    from html.parser import HTMLParser

    tags: set[str] = set()
    links: list[tuple[str, str]] = []

    class Reader(HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.add(tag)
            links.extend((name, value) for name, value in attrs if name in ("src", "href", "xlink:href", "srcset"))

    Reader().feed(page)
    return tags, links


def test_report_command_writes_one_page_and_prints_where(built):
    proc = run_cli(built.path, "report")
    assert proc.returncode == 0, proc.stderr
    path, url = proc.stdout.splitlines()
    assert path == str(built.path / ".git" / "neo" / "report.html")
    assert url.startswith("file://") and url.endswith("/.git/neo/report.html")
    page = (built.path / ".git" / "neo" / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    # One file: nothing to load, nothing to run.
    assert "<script" not in page.lower()
    tags, links = parsed(page)
    assert not links, "the page must not reference anything"
    assert not tags & {"script", "img", "iframe", "object", "embed", "link", "base", "form"}
    assert "@import" not in page and "url(" not in page.replace("url(#", "")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "7 commits" in proc.stderr and "7 measured now" in proc.stderr


def test_untrusted_text_is_escaped_wherever_it_appears(built):
    result = build_report(open_repository(built.path), out=built.path / "page.html")
    page = result.path.read_text(encoding="utf-8")
    for hostile in (HOSTILE_FACT, HOSTILE_SUBJECT, HOSTILE_FILE.split("/")[1]):
        shown = hostile.replace("\u202e", "\\u202e")      # a bidi override is shown, not obeyed
        assert html.escape(shown, quote=True) in page, hostile
        assert hostile not in page
    assert "\u202e" not in page
    assert "<b>" not in page and "<img" not in page
    tags, links = parsed(page)
    assert not links and "script" not in tags and "b" not in tags


def test_health_series_follows_the_first_parent_chain(built):
    data = collect(open_repository(built.path), 200)
    assert [p.commit.commit for p in data.health] == built.commits
    assert [p.health["cycles"] for p in data.health] == built.cycles
    assert [p.health["max_nesting"] for p in data.health] == [2, 3, 3, 3, 4, 4, 4]
    assert data.health[-1].health["languages"]["javascript"] == {"files": 2, "lines": 4}
    assert data.health[3].commit.subject == HOSTILE_SUBJECT
    # The side branch's own commit is not on the chart: only the merge that brought it.
    assert "side work" not in [p.commit.subject for p in data.health]


def test_window_takes_the_newest_commits(built):
    data = collect(open_repository(built.path), 3)
    assert [p.commit.commit for p in data.health] == built.commits[-3:]


def test_a_second_report_measures_nothing_and_a_new_commit_measures_one(built):
    repo = open_repository(built.path)
    first = build_report(repo)
    assert first.measured == len(built.commits)
    again = build_report(repo)
    assert again.measured == 0 and again.commits == first.commits
    commit_files(built.path, {"app/more.py": "from app import core\n"}, "one more")
    assert build_report(open_repository(built.path)).measured == 1


def test_each_commit_reparses_only_the_blobs_it_changed(built, monkeypatch):
    """The walk is incremental: over the whole window every distinct blob is parsed once."""
    import neo_git.health.metrics as metrics

    (built.path / ".git" / "neo" / "health.sqlite").unlink()
    for leftover in (built.path / ".git" / "neo").glob("health.sqlite-*"):
        leftover.unlink()
    parsed = []
    real = metrics.analyze_source

    def counting(path, source):
        parsed.append((path, source))
        return real(path, source)

    monkeypatch.setattr(metrics, "analyze_source", counting)
    repo = open_repository(built.path)
    from neo_git.report.series import first_parent_commits, health_series

    chain = first_parent_commits(repo, 200)
    health_series(repo, chain)
    blobs = set()
    for info in chain:
        tree = repo[info.commit].tree
        stack = [("", tree)]
        while stack:
            prefix, current = stack.pop()
            for entry in current:
                if entry.type_str == "tree":
                    stack.append((f"{prefix}{entry.name}/", repo[entry.id]))
                elif entry.name.endswith((".py", ".js")):
                    blobs.add(str(entry.id))
    assert len(parsed) == len({source for _path, source in parsed}) == len(blobs)


def test_a_changed_god_file_threshold_recomputes_instead_of_showing_stale_numbers(built):
    repo = open_repository(built.path)
    assert collect(repo, 200).health[-1].health["god_files"] == 0
    repo.config["neo.godFileLines"] = "5"      # app/util.py and app/extra.py have 6 lines
    data = collect(open_repository(built.path), 200)
    assert data.health[-1].health["god_files"] == 2 and data.measured == len(built.commits)


def test_a_damaged_summary_cache_is_a_miss(built):
    repo = open_repository(built.path)
    build_report(repo)
    cache = built.path / ".git" / "neo" / "cache" / "report-health.json"
    text = cache.read_text(encoding="utf-8")
    cache.write_text(text.replace('"cycles":1', '"cycles":"<script>"', 1), encoding="utf-8")
    data = collect(open_repository(built.path), 200)
    assert [p.health["cycles"] for p in data.health] == built.cycles
    cache.write_text("{not json", encoding="utf-8")
    assert collect(open_repository(built.path), 200).measured == len(built.commits)


def test_cycles_now_name_the_import_line_behind_each_edge(built):
    data = collect(open_repository(built.path), 200)
    (cycle,) = data.cycles
    assert cycle.nodes == ("web/<img src=x onerror=alert(1)>.js", "web/app.js")
    edges = {(e.source, e.target): (e.line, e.text) for e in cycle.edges}
    assert edges == {
        ("web/app.js", HOSTILE_FILE): (1, 'import page from "./<img src=x onerror=alert(1)>.js";'),
        (HOSTILE_FILE, "web/app.js"): (1, 'import app from "./app.js";'),
    }


def test_python_cycle_edges_point_at_their_lines(git_repo):
    commit_files(git_repo, {"pkg/__init__.py": "", "pkg/a.py": "import os\n\nfrom pkg import b\n",
                            "pkg/b.py": "X = 1\n\n\ndef late():\n    from pkg import a\n    return a\n"}, "cycle")
    data = collect(open_repository(git_repo), 10)
    (cycle,) = data.cycles
    assert {(e.source, e.target, e.line) for e in cycle.edges} == {("pkg/a.py", "pkg/b.py", 3),
                                                                     ("pkg/b.py", "pkg/a.py", 5)}


def test_memory_over_time_counts_kinds_retirements_and_successes(built):
    data = collect(open_repository(built.path), 200)
    memory = data.memory
    last = memory.points[-1]
    assert last["kinds"] == {"constraint": 1, "decision": 1, "pattern": 1, "review": 1}
    assert [sum(p["kinds"].values()) for p in memory.points] == [0, 1, 1, 2, 3, 2, 3, 4]
    (week,) = memory.retired.values()
    assert week == {"superseded": 1, "retracted": 1}
    (top,) = data.top_facts
    assert top.fact.id == built.accepted_fact and top.fact.metadata.success_count == 1
    assert [c.commit for c in top.commits] == [built.commits[5]]


def test_memory_history_continues_from_its_cache(built):
    from neo_git.report.memory import memory_history
    from neo_git.store import FactStore

    repo = open_repository(built.path)
    memory_history(repo)
    FactStore.open(built.path).add("Queue retries", "Jobs retry three times.", kind="pattern")
    continued = memory_history(open_repository(built.path))
    for cache in (built.path / ".git" / "neo" / "cache").glob("report-memory.json"):
        cache.unlink()
    fresh = memory_history(open_repository(built.path))
    assert continued.to_payload() == fresh.to_payload()
    assert continued.points[-1]["kinds"]["pattern"] == 2


def test_outcomes_and_turns_are_bucketed(built):
    data = collect(open_repository(built.path), 200)
    acts = data.activity
    (week,) = [w for w in acts.weeks if w["accepted"]]
    assert week["accepted"] == 1 and week["health"]["improvement"] + week["health"]["neutral"] == 1
    assert acts.by_commit[built.commits[5]] == {"accepted": 1}
    assert [d["turns"] for d in acts.days] == [3]
    assert acts.injected[0] == 1 and acts.injected[3] == 1 and acts.injected[5] == 1 and acts.injected_known == 3


def test_report_page_marks_the_commit_that_carried_an_outcome(built):
    page = build_report(open_repository(built.path), out=built.path / "page.html").path.read_text("utf-8")
    charts = re.findall(r'<svg class="chart lines"[^>]*data-chart="health-[^"]+".*?</svg>', page, re.S)
    assert len(charts) == 6
    for chart in charts:
        assert chart.count('class="marker m-accepted"') == 1
        assert f"{built.commits[5][:7]}" in chart


def test_health_history_prints_the_series(built):
    proc = run_cli(built.path, "health", "--history", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["commit"] for r in rows] == built.commits[::-1][:3]
    assert [r["cycles"] for r in rows] == built.cycles[::-1][:3]
    assert rows[0]["date"].startswith("2024-05-01T") and rows[0]["subject"] == "merge side"
    text = run_cli(built.path, "health", "--history", "7")
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[0].split()[:5] == ["commit", "date", "cycles", "import-time", "in"]
    assert len(lines) == 8 and lines[1].startswith(built.commits[-1][:7])
    # The terminal shows markup as it is (it is not HTML), and the bidi override as an escape.
    assert HOSTILE_SUBJECT.replace("\u202e", "\\u202e") in text.stdout


def test_health_history_from_a_revision(built):
    proc = run_cli(built.path, "health", built.commits[2], "--history", "2", "--json")
    assert [r["commit"] for r in json.loads(proc.stdout)] == [built.commits[2], built.commits[1]]


@pytest.mark.parametrize("args", [["--history", "0"], ["--history", "x"], ["--history", "2", "--staged"],
                                  ["--history", "2", "--diff", "HEAD", "HEAD"]])
def test_health_history_usage_errors(built, args):
    proc = run_cli(built.path, "health", *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_report_in_an_empty_repository_is_a_fatal_with_a_hint(git_repo):
    proc = run_cli(git_repo, "report")
    assert proc.returncode == 1
    assert proc.stderr.startswith("fatal: ") and "hint: " in proc.stderr


def test_report_out_and_json(built, tmp_path):
    out = tmp_path / "deep" / "health.html"
    proc = run_cli(built.path, "report", "--commits", "2", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["path"] == str(out) and result["commits"] == 2 and out.is_file()
    assert result["url"] == out.resolve().as_uri()


def test_report_without_facts_notes_or_turns(git_repo):
    commit_files(git_repo, {"a.py": "X = 1\n"}, "only code")
    page = build_report(open_repository(git_repo)).path.read_text(encoding="utf-8")
    assert "No facts yet" in page and "No outcomes recorded yet" in page and "No agent turns" in page
    assert "No import cycles" in page


def test_snapshot_walk_measures_like_snapshot_commit_and_stores_only_the_last_state(built):
    """The walk holds each state in memory for the next commit: same numbers, one stored state."""
    import sqlite3

    from neo_git.health.measure import snapshot_commit, snapshot_walk

    neo = built.path / ".git" / "neo"
    for cache in neo.glob("health.sqlite*"):
        cache.unlink()
    repo = open_repository(built.path)
    walked = [s.to_dict() for s in snapshot_walk(repo, built.commits)]
    with sqlite3.connect(str(neo / "health.sqlite")) as conn:
        stored = [bytes(row[0]).hex() for row in conn.execute("SELECT tree FROM snapshot_states")]
    assert stored == [str(repo[built.commits[-1]].tree_id)]
    for cache in neo.glob("health.sqlite*"):
        cache.unlink()
    assert walked == [snapshot_commit(open_repository(built.path), c).to_dict() for c in built.commits]


def test_history_of_a_tree_is_a_fatal_with_a_hint(built):
    tree = subprocess.run(["git", "rev-parse", "HEAD^{tree}"], cwd=built.path, capture_output=True, text=True,
                          check=True).stdout.strip()
    proc = run_cli(built.path, "health", tree, "--history", "2")
    assert proc.returncode == 1 and "is a tree, not a commit" in proc.stderr and "hint:" in proc.stderr


def test_memory_counts_facts_whose_cited_code_changed_as_stale(git_repo):
    from tests.helpers.citations import process

    commit_files(git_repo, {"app.py": "def run():\n    return 1\n"}, "code")
    proc = run_cli(git_repo, "add", "--kind", "pattern", "--cite", "app.py:run", "Run returns one", "run() is 1")
    assert proc.returncode == 0, proc.stderr
    commit_files(git_repo, {"app.py": "def run():\n    total = 40\n    return total + 2\n"}, "change run")
    process(git_repo)                      # the post-commit worker re-verifies the citation
    data = collect(open_repository(git_repo), 10)
    assert data.memory.points[0]["stale"] == 0 and data.memory.points[-1]["stale"] == 1
    assert "1 stale" in build_report(open_repository(git_repo)).path.read_text(encoding="utf-8")
