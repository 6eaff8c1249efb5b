"""The matching rule: substance shipped -> accepted, rewritten -> modified, else pending."""
from neo_git.outcomes.matching import ACCEPTED, MODIFIED, PENDING, is_trivial, match_suggestion, normalise
from tests.helpers.outcomes import BASE as BEFORE, RETRY


def test_verbatim_is_accepted():
    match = match_suggestion(RETRY, None, BEFORE, BEFORE + "\n" + RETRY)
    assert match.verdict == ACCEPTED
    assert match.shipped == match.suggested == 6   # `try:` is trivial


def test_reindented_inside_a_class_is_accepted():
    indented = "class Client:\n" + "".join("    " + line + "\n" for line in RETRY.splitlines())
    assert match_suggestion(RETRY, None, BEFORE, BEFORE + indented).verdict == ACCEPTED


def test_a_closing_brace_overlap_is_not_accepted():
    js_suggestion = "function retry(fn) {\n  return fn();\n}\n"
    before = "function main() {\n  run();\n"
    after = before + "}\n"   # the commit only adds the brace
    assert match_suggestion(js_suggestion, None, before, after).verdict == PENDING
    assert match_suggestion("}\n", None, before, after).verdict == PENDING


def test_imports_only_overlap_does_not_count():
    suggestion = "import time\n" + RETRY
    after = "import time\n" + BEFORE
    assert match_suggestion(suggestion, None, BEFORE, after).verdict == PENDING


def test_a_rewritten_version_is_modified():
    rewritten = RETRY.replace("attempts=3", "attempts=5").replace("except OSError:", "except (OSError, TimeoutError):")
    rewritten = rewritten.replace("if attempt == attempts - 1:", "if attempt >= attempts - 1:")
    match = match_suggestion(RETRY, None, BEFORE, BEFORE + rewritten)
    assert match.verdict == MODIFIED
    assert match.similar >= 2


def test_an_unrelated_edit_of_the_same_file_leaves_it_pending():
    after = BEFORE.replace("return os.getenv(url)", "value = os.environ.get(url, '')\n    return value.strip()")
    assert match_suggestion(RETRY, None, BEFORE, after).verdict == PENDING


def test_a_diff_suggestion_matches_its_added_lines():
    diff = ("--- a/db.py\n+++ b/db.py\n@@ -3,2 +3,3 @@\n def fetch(url):\n"
            "-    return os.getenv(url)\n+    value = os.getenv(url)\n+    return value or DEFAULT_URL\n")
    after = BEFORE.replace("    return os.getenv(url)", "    value = os.getenv(url)\n    return value or DEFAULT_URL")
    assert match_suggestion(None, diff, BEFORE, after).verdict == ACCEPTED


def test_lines_already_in_the_file_are_not_the_advice():
    # the code block repeats the unchanged signature; only the new body decides
    suggestion = "def fetch(url):\n    return os.environ[url]\n"
    assert match_suggestion(suggestion, None, BEFORE, BEFORE).verdict == PENDING
    after = BEFORE.replace("os.getenv(url)", "os.environ[url]")
    assert match_suggestion(suggestion, None, BEFORE, after).verdict == ACCEPTED


def test_trivial_lines():
    for line in ("}", "});", "pass", "return", "return None", "else:", "import os", "from a import b",
                 "use std::io;", "#include <stdio.h>", "const x = require('x')"):
        assert is_trivial(normalise(line)), line
    for line in ("return fn()", "x = 1", "# why we retry", "raise"):
        assert not is_trivial(normalise(line)), line
