"""Review evidence: what, beyond one cosine, says a newer fact may replace an older one (issue 21).

Between long texts (decision records, design notes) cosine mostly measures shared project
vocabulary: on the ADR dev set the best match of every record scores 0.35–0.59 whether or not it
is the record it replaced, so a review item per best match asked about half the records. A pair
is worth a person's time when the newer text also says something *about* the older fact:

* ``reference`` — it names the older fact: the older subject (two words or more besides fillers
  such as "the", and without a record number it opens with) appears in the newer text, its words
  in order and at most NAME_GAP apart ("one single state in the Hydra node" names "Single state in
  Hydra.Node."). A newer subject that contains the older one and says more ("Social service
  authentication" after "Social service") is a part of that topic, not its replacement: naming it
  there is no reference. Nor is the older fact's source file: records link the files of those
  they build on;
* ``change`` — it states a change about the older subject: a change word ("instead of",
  "replaces", "no longer", "supersedes", "deprecated", "rather than", "move/migrate/switch from",
  "remove", "previously", "revisit", "reevaluate") within a few words of at least a third of the older
  subject's content words (plurals folded, generic words such as "use", "add", "decision" left
  out), or a newer subject that opens with a change verb and whose object the older subject is
  about ("Remove Bullet gem" after "use-bullet-to-catch-nplus1-queries").

The third name says nothing about the pair itself: ``alternative`` — the newer text states a change
about another of its most similar long records, and this one is among them too
(`supersession.ALTERNATIVES`): the queue asks once about the newer record, with every candidate.

(Subjects that merely overlap, two thirds of the older one's content words in the newer one, were
measured and left out: 60 wrong pairs for 2 right ones the other two already find.)

Each has its reason; none was fitted to a figure (thresholds are the simple fractions a third and
two thirds). `benchmarks/adr_eval.py` prints what each one finds on its own. Pure functions of
the two facts' text: no embedder, no store. `quotes` gives, for a review item, the passage of the
newer text each piece of evidence rests on, so a person decides from the words, not a label.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from difflib import SequenceMatcher
from functools import lru_cache

from neo_git.fact_schema import Citation
from neo_git.facts import Fact
from neo_git.knowledge import ALTERNATIVE as ALTERNATIVE  # re-exported: one of the evidence kinds
from neo_git.textkeys import FILLER, record_title, word_spans, words

REFERENCE = "reference"
CHANGE = "change"
SAME_SUBJECT = "same_subject"   # rule 2's own evidence (same normalised subject, bodies loosely related)
# Not evidence for a supersession but against retiring by similarity alone: both facts cite code
# and no citation of one overlaps one of the other (`cites_other_code`).
DIFFERENT_CODE = "different_code"
# Found by the review judge among a fact's most similar earlier facts (store/review/candidates.py).
JUDGE = "judge"
# Statement evidence (`statement_evidence`, issue 32): what lets a statement-sized fact retire another.
KEY = "key"             # rule 2 under a subject that is an identifier ("unit_price", "api.timeout")
NEW_VALUE = "new_value"  # the newer statement repeats the older one's words with one part replaced
UPDATE = "update"        # the newer statement says a state changed ("moved to", "cancelled") about the older
RESTATED = "restated"    # the newer statement repeats all the older one's words (fillers and change words aside)
# ALTERNATIVE (imported): not about the pair itself — the newer text states a change about another
# of its most similar long candidates, and this one is among them (`supersession.ALTERNATIVES`);
# defined in `knowledge`, below the store, where `open_links` reads it.
EVIDENCE = (REFERENCE, CHANGE, SAME_SUBJECT, DIFFERENT_CODE, JUDGE, ALTERNATIVE, KEY, NEW_VALUE, UPDATE, RESTATED)

CHANGE_SHARE = 1 / 3     # of the older subject's content words, next to a change word
WINDOW_AFTER = 8         # words after a change word that it speaks about ("instead of GOV.UK Notify")
WINDOW_BEFORE = 4        # and before it ("GOV.UK Notify is no longer …")
MIN_REFERENCE_WORDS = 2  # a one-word subject ("Caching") is mentioned by accident, not referred to
NAME_GAP = 3             # a subject's words may be 2 words apart where the newer text names it
# Words that say what kind of statement a subject is, not what it is about.
_GENERIC = FILLER | frozenset("""
use using used add adding adopt adopting define defining introduce introducing implement implementing
implementation make making update updated updating remove removing removal move moving migrate new
how what which when decision record adr
""".split())
_CHANGE = re.compile(
    r"\b(?:instead\s+of|rather\s+than|no\s+longer|replac\w*|supersed\w*|deprecat\w*|obsolete|"
    r"(?:mov|migrat|switch|chang|transition)\w*\s+(?:away\s+)?from|remov\w*|previously|"
    r"revisit\w*|reconsider\w*|re-?evaluat\w*|revert\w*|stop\s+using|drop\w*)\b", re.IGNORECASE)
_CHANGE_VERB = re.compile(r"^\W*(?:remove|replace|move|switch|migrate|drop|retire|deprecate|stop|revert|"
                          r"revisit|supersede|change|update[sd]?)\b", re.IGNORECASE)


@lru_cache(maxsize=1 << 14)
def content_words(subject: str) -> frozenset[str]:
    """What a subject is about: its words without the generic ones (and without 1-letter words),
    after the record number it may open with ("ADR-45: …")."""
    return frozenset(w for w in words(record_title(subject)) if len(w) > 1 and w not in _GENERIC)


@lru_cache(maxsize=1 << 12)
def changed_words(fact_text: str, subject: str) -> frozenset[str]:
    """Words of a text spoken about by a change word (see WINDOW_*), plus the subject's words when
    the subject itself opens with a change verb."""
    found: set[str] = set()
    for match in _CHANGE.finditer(fact_text):
        found.update(words(fact_text[match.end():match.end() + 24 * WINDOW_AFTER])[:WINDOW_AFTER])
        found.update(words(fact_text[max(0, match.start() - 24 * WINDOW_BEFORE):match.start()])[-WINDOW_BEFORE:])
    if _CHANGE_VERB.match(subject):
        found.update(words(subject))
    return frozenset(found)


def _names(text_words: tuple[str, ...], phrase: tuple[str, ...]) -> tuple[int, int] | None:
    """Where the text names *phrase* — its words other than fillers, in order, each at most
    NAME_GAP words after the one before ("single state in Hydra.Node" is named by "one single
    state in the Hydra node") — as (first word, last word) positions of one such naming; None
    where it does not. A phrase of fewer than MIN_REFERENCE_WORDS such words is never named."""
    wanted = [w for w in phrase if w not in FILLER]
    if len(wanted) < MIN_REFERENCE_WORDS:
        return None
    wanted_set = frozenset(wanted)
    places: dict[str, list[int]] = {}
    for at, word in enumerate(text_words):
        if word in wanted_set:
            places.setdefault(word, []).append(at)
    # Every place where the phrase so far can end (not only the first: "red blue x blue y z green"
    # names "red blue green" through the second "blue"), one merge of two sorted lists per word;
    # each with where that naming starts.
    reached = [(at, at) for at in places.get(wanted[0], ())]
    for word in wanted[1:]:
        following, before = [], 0
        for at in places.get(word, ()):
            while before < len(reached) and reached[before][0] < at - NAME_GAP:
                before += 1
            if before < len(reached) and reached[before][0] < at:
                following.append((at, reached[before][1]))
        if not following:
            return None
        reached = following
    return (reached[0][1], reached[0][0]) if reached else None


def review_evidence(new: Fact, old: Fact) -> tuple[str, ...]:
    """The evidence (names from EVIDENCE, in that order) that *new* speaks about *old*."""
    found = []
    if _reference(new, old) is not None:
        found.append(REFERENCE)
    if _change(new, old) is not None:
        found.append(CHANGE)
    return tuple(found)


def _reference(new: Fact, old: Fact) -> tuple[int, int] | None:
    """Where in `new.text` (character span) it names *old*'s subject (unless the newer subject is
    a narrower one containing it); None when it does not. (Its source file's name is no
    reference: records link the files of the records they build on — ADR dev with paths as source
    files: 2.6 more items per 100 adds for no edge found.)"""
    about = content_words(old.subject)
    if about and about < content_words(new.subject):
        return None
    named = _names(words(new.text), words(record_title(old.subject)))
    if named is None:
        return None
    spans = word_spans(new.text)   # the same words as `words`, with their places
    return spans[named[0]][1], spans[named[1]][2]


def _change(new: Fact, old: Fact) -> str | None:
    """How *new* states a change about *old*: "text" — a change word with enough of the older
    subject's content words near it; "subject" — the newer subject opens with a change verb
    about what the older subject is about; None when it does not."""
    about = content_words(old.subject)
    if not about:
        return None
    title = record_title(new.subject)
    if len(about & changed_words(new.text, title)) >= CHANGE_SHARE * len(about):
        return "text"
    if _CHANGE_VERB.match(title):  # "Remove Bullet gem": what it removes
        target = content_words(title) - set(words(title)[:1])
        if target and len(target & about) >= CHANGE_SHARE * len(target):
            return "subject"
    return None


def _change_window(text: str, about: frozenset[str]) -> tuple[int, int] | None:
    """The character span of the change word's window (as `changed_words` reads it) that holds
    the most of *about*, first such on a tie."""
    spans = word_spans(text)
    starts = [start for _, start, _ in spans]
    best, best_hits = None, 0
    for match in _CHANGE.finditer(text):
        after = bisect_left(starts, match.end())
        upto = bisect_left(starts, match.start())   # a match starts at a word boundary
        window = [s for s in spans[max(0, upto - WINDOW_BEFORE):upto] if s[1] >= match.start() - 24 * WINDOW_BEFORE]
        window += [s for s in spans[after:after + WINDOW_AFTER] if s[1] < match.end() + 24 * WINDOW_AFTER]
        hits = len(about & {word for word, _, _ in window})
        if hits > best_hits:
            best_hits = hits
            best = (min(match.start(), *(s[1] for s in window[:1])), max(match.end(), *(s[2] for s in window[-1:])))
    return best


QUOTE_CHARS = 160   # at most this much of the newer text per quote


def quotes(new: Fact, old: Fact, evidence: tuple[str, ...] | list[str] = (REFERENCE, CHANGE)) -> dict[str, str]:
    """{evidence name: the passage of the newer text it rests on}, for the REFERENCE, CHANGE, UPDATE
    and NEW_VALUE evidence in *evidence* that the texts still show: what a person reads to decide a
    review item."""
    out = {}
    if REFERENCE in evidence:
        span = _reference(new, old)
        if span is not None:
            out[REFERENCE] = _passage(new.text, *span)
    how = _change(new, old) if CHANGE in evidence else None
    span = _change_window(new.text, content_words(old.subject)) if how == "text" else None
    if span is not None:
        out[CHANGE] = _passage(new.text, *span, context=0)   # the window holds its own context
    elif how is not None:   # the newer subject says it ("Remove Bullet gem")
        title = record_title(new.subject)
        out[CHANGE] = _passage(title, 0, len(title))
    if UPDATE in evidence:
        match = _UPDATE.search(new.text)
        if match is not None:
            out[UPDATE] = _passage(new.text, match.start(), match.end())
    if NEW_VALUE in evidence:   # where the newer text's words first part from the older's
        known = set(words(old.text))
        fresh = [(start, end) for word, start, end in word_spans(new.text) if word not in known and word not in FILLER]
        if fresh:
            out[NEW_VALUE] = _passage(new.text, fresh[0][0], fresh[-1][1] if len(fresh) <= 3 else fresh[0][1])
    return out


def _passage(text: str, start: int, end: int, context: int = 30) -> str:
    """The span with up to *context* characters on each side, widened to whole whitespace-separated
    tokens (a token cut in two could hide a secret from redaction, and reads badly), whitespace
    collapsed, at most QUOTE_CHARS characters (cut between tokens where it can be), with "…" where
    the text goes on."""
    left, right = max(0, start - context), min(len(text), max(end, start + 1) + context)
    while left > 0 and not text[left - 1].isspace():
        left -= 1
    while right < len(text) and not text[right].isspace():
        right += 1
    quote = " ".join(text[left:right].split())
    cut = len(quote) > QUOTE_CHARS
    if cut:
        head = quote[:QUOTE_CHARS - 1]
        space = head.rfind(" ")
        quote = (head[:space] if space > 0 else head).rstrip()
    before = left > 0 and bool(text[:left].strip())
    after = cut or bool(text[right:].strip())
    return ("…" if before else "") + quote + ("…" if after else "")


def _same_code(a: Citation, b: Citation) -> bool:
    """May two citations name the same code? Same path and, when both narrow it, the same symbol
    (or one inside the other: `Parser` / `Parser.parse`) or overlapping line spans; a whole file,
    or a symbol against a span, may be the same code."""
    if a.path != b.path:
        return False
    left, right = a.symbol, b.symbol
    if left and right:
        return left == right or left.startswith(right + ".") or right.startswith(left + ".")
    first, second = a.span, b.span
    if first and second:
        return first[0] <= second[1] and second[0] <= first[1]
    return True


def cites_other_code(new: Fact, old: Fact) -> bool:
    """Both facts cite code (`metadata.citations`, docs/architecture.md §13) and none of one's citations may be
    the code of one of the other's: two statements about different code (`retry()` in the client,
    `retry()` in the worker) that read alike. Similarity alone never retires one for the other."""
    mine, theirs = new.metadata.citations, old.metadata.citations
    return bool(mine and theirs) and not any(_same_code(a, b) for a in mine for b in theirs)


# --- Statements (issue 32) ----------------------------------------------------------------------
# Within the calibrated lengths a cosine says two statements read alike, not that one replaces the
# other: a project's instruction file holds many parallel rules ("`@excalidraw/common` →
# `packages/common/src/`", "`@excalidraw/element` → `packages/element/src/`") whose cosines are as
# high as a restated value's. What a replacement shows in its words:
#
# * NEW_VALUE — the newer statement says what the older said with ONE part replaced: the words of
#   the two, aligned in order, differ in a single place where the older had words and the newer
#   has others (a value: "Vue" → "Next.js", "January 15" → "January 20", "10 s" → "30 s"), the
#   words they share in order are at least half of each and hold two or more words
#   besides fillers (the attribute: "prefer using … for this project"). Words that only announce
#   the change ("moved", "updated", "now") are left out of the comparison. Parallel items differ
#   in two places or more — the item's name and what it maps to ("common … common" against
#   "element … element"), the tool and its command — and a statement that only adds words ("Run
#   tests" → "Run tests with coverage") narrows the older one rather than replacing its value.
# * UPDATE — the newer statement says a state changed (UPDATE_WORDS: "moved to", "cancelled",
#   "revoked", "no longer", "instead of", "now" …, a word the older does not use) and shares in
#   order at least a third of the shorter one's words: the change is about what the older says.
#   ("Purchase Order #4521 approved for $50,000" → "Purchase Order #4521 CANCELLED …").
# Both are fractions of the texts themselves (a half, a third), not fitted figures;
# `benchmarks/write_policy_eval.py` measures what they decide.
_UPDATE = re.compile(
    r"\b(?:moved|moving|updated|changed|changing|revoked|cancell?ed|reallocated|reassigned|reduced|increased|"
    r"decreased|delayed|postponed|rescheduled|corrected|correction|replaced|"
    r"superseded|deprecated|reverted|switched|rescinded|withdrawn|invalidated|retracted|no\s+longer|"
    r"instead\s+of|now)\b", re.IGNORECASE)
UPDATE_WORDS = frozenset("""moved moving updated changed changing revoked cancelled canceled reallocated reassigned
reduced increased decreased delayed postponed rescheduled corrected correction
replaced superseded deprecated reverted switched rescinded withdrawn invalidated retracted no longer instead now
""".split())
NEW_VALUE_SHARE = 1 / 2   # of the longer statement's words, shared in order (the attribute)
UPDATE_SHARE = 1 / 3      # of the shorter statement's words, shared in order, beside a change word


# A colon or semicolon between words ends a clause: "billing service: timeout set to 10" names the
# thing, then says something of it. Words on either side of one never form a single place.
_CLAUSE = re.compile(r"[:;](?=\s|$)")
_BREAK = ":"   # the clause mark in a word sequence (no word is ":")


def _clause_words(text: str) -> tuple[str, ...]:
    """`words(text)` without words that only announce a change, with _BREAK where a clause ends."""
    out: list[str] = []
    for part in _CLAUSE.split(text):
        if out and out[-1] != _BREAK:
            out.append(_BREAK)
        out.extend(w for w in words(part) if w not in UPDATE_WORDS)
    return tuple(out[:-1] if out and out[-1] == _BREAK else out)


@lru_cache(maxsize=1 << 14)
def _alignment(older: str, newer: str) -> tuple[int, int, int, int, int, int, frozenset[str]]:
    """(shared words in order, of those not fillers, shorter length, longer length, places that
    differ, of those replacements, the older text's words in those places) of two texts' words, words that only announce a change left
    out; a place that differs only in fillers or clause marks does not count. Clause marks are
    aligned like words but never counted as one, so a place never spans one ("billing service:
    timeout" → "search index: owner" differs in two places: what, and which of its settings)."""
    a, b = _clause_words(older), _clause_words(newer)
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    shared = content = places = replaced = 0
    old_words: set[str] = set()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            shared += sum(w != _BREAK for w in a[i1:i2])
            content += sum(w not in FILLER and w != _BREAK for w in a[i1:i2])
            continue
        old_words.update(a[i1:i2])
        if any(w not in FILLER and w != _BREAK for w in (*a[i1:i2], *b[j1:j2])):
            places += 1
            replaced += tag == "replace"
    length_a, length_b = len(a) - a.count(_BREAK), len(b) - b.count(_BREAK)
    return shared, content, min(length_a, length_b), max(length_a, length_b), places, replaced, frozenset(old_words)


# A list item that opens with a code or bold span ("`make lint` - lint all libraries", "**Format**:
# `task fmt`", a table row "`playwright-core` | …") defines that label: two items with different
# labels are two entries of one list, as "Deal 1" and "Deal 2" are two deals, however alike the rest.
_LABEL = re.compile(r"^\W{0,3}?(`[^`\n]{1,80}`|\*\*[^*\n]{1,80}\*\*|__[^_\n]{1,80}__)")


def opening_label(text: str) -> str | None:
    """The code or bold span *text* opens with, normalised ("`Make Lint`" → "make lint"); None if none."""
    match = _LABEL.match(text.lstrip())
    return " ".join(words(match.group(1))) if match else None


# A plain label: a statement that opens with a few words and a colon ("billing service: timeout set
# to 10", "Imports: absolute only") says what it is about before it says anything of it. Two with
# labels that share no word are two entries of one list. Words that only mark the kind of remark
# ("Note:", "Update:", "Correction:") label nothing.
LABEL_WORDS = 4
_PLAIN_LABEL = re.compile(r"^\s*([^:;\n]{1,60}?):(?=\s)")
_REMARK = _GENERIC | UPDATE_WORDS | frozenset("note notes important reminder warning fyi nb ps tip".split())


def plain_label(text: str) -> frozenset[str] | None:
    """The content words of the plain label *text* opens with (at most LABEL_WORDS words before a
    colon); None when it opens with none."""
    match = _PLAIN_LABEL.match(text)
    if match is None:
        return None
    said = words(match.group(1))
    about = frozenset(w for w in said if w not in _REMARK)
    return about if 0 < len(said) <= LABEL_WORDS and about else None


def different_labels(new: Fact, old: Fact) -> bool:
    """Both bodies (or texts) open with a code or bold label, and the labels differ; or both open
    with a plain label and the two share no word."""
    mine, theirs = new.body or new.text, old.body or old.text
    a, b = opening_label(mine), opening_label(theirs)
    if a is not None and b is not None:
        return a != b
    left, right = plain_label(mine), plain_label(theirs)
    return left is not None and right is not None and left.isdisjoint(right)


@lru_cache(maxsize=1 << 14)
def _says_all(older: str, newer: str) -> bool:
    """The newer text repeats every word of the older one (fillers and change words aside), in
    order, and adds words in one place: retiring the older loses nothing it said ("… for all
    outbound calls" → "… for all outbound HTTP calls"). Additions in two places or more change
    what the older said ("Compile a single module: build/sbt <module>/compile" → "Compile test
    code for a single module: build/sbt <module>/Test/compile")."""
    a = [w for w in words(older) if w not in UPDATE_WORDS and w not in FILLER]
    b = [w for w in words(newer) if w not in UPDATE_WORDS and w not in FILLER]
    if len(a) < 2 or len(b) <= len(a):
        return False
    changes = [tag for tag, *_ in SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal"]
    return changes == ["insert"]


_NUMBER = re.compile(r"^\d+(?:st|nd|rd|th)?$")


@lru_cache(maxsize=1 << 14)
def _new_number(older: str, newer: str) -> bool:
    """The second way a statement shows a new value: both give numbers, the newer one a number the
    older does not ("$100 per unit" → "$150 per unit (the $100 was last year's pricing)"), and the
    words besides numbers of the shorter one are at least half in the other (the attribute)."""
    a, b = words(older), words(newer)
    numbers_a = {w for w in a if _NUMBER.match(w)}
    numbers_b = {w for w in b if _NUMBER.match(w)}
    if not numbers_a or not numbers_b or not numbers_b - numbers_a:
        return False
    rest_a = {w for w in a if not _NUMBER.match(w) and w not in FILLER and len(w) > 1}
    rest_b = {w for w in b if not _NUMBER.match(w) and w not in FILLER and len(w) > 1}
    shorter = min(rest_a, rest_b, key=len)
    if not (len(rest_a & rest_b) >= 2 and len(rest_a & rest_b) >= NEW_VALUE_SHARE * len(shorter)):
        return False
    # The new number stands where an old one stood: beside the same word (one of the BESIDE
    # nearest before it or after it, fillers, change words and other numbers aside: "timeout 10 s"
    # → "30 s", "25% volume discount" → "10% discount"), not merely somewhere in a text that shares
    # two words ("the log level at 1" → "the database at 2").
    places = {side for at, w in enumerate(a) if _NUMBER.match(w) for side in _beside(a, at)}
    return any(side in places for at, w in enumerate(b) if w in numbers_b - numbers_a for side in _beside(b, at))


_ASIDE = re.compile(r"\([^()]*\)")


@lru_cache(maxsize=1 << 14)
def _number_swap(older: str, newer: str) -> bool:
    """The third way: the newer statement is the older one word for word with its numbers changed,
    once an aside in parentheses is set apart ("$100 per unit" → "$150 per unit (the $100 was last
    year's pricing)"): the same words in the same places, numbers only where they differ, and at
    least one word besides fillers and numbers (what the numbers are of)."""
    a = [w for w in words(older) if w not in UPDATE_WORDS]
    b = [w for w in words(_ASIDE.sub(" ", newer)) if w not in UPDATE_WORDS]
    if len(a) != len(b) or not any(w not in FILLER and not _NUMBER.match(w) for w in a):
        return False
    changed = [(x, y) for x, y in zip(a, b) if x != y]
    return bool(changed) and all(_NUMBER.match(x) and _NUMBER.match(y) for x, y in changed)


BESIDE = 2   # words on each side of a number that say what it is the value of


def _beside(text_words: tuple[str, ...], at: int) -> list[tuple[int, str]]:
    """The BESIDE nearest words before (-1, word) and after (1, word) position *at* that are not
    fillers, change words or numbers."""
    found = []
    for step in (-1, 1):
        i, taken = at + step, 0
        while 0 <= i < len(text_words) and taken < BESIDE:
            word = text_words[i]
            if word not in FILLER and word not in UPDATE_WORDS and not _NUMBER.match(word):
                found.append((step, word))
                taken += 1
            i += step
    return found


def statement_evidence(new: Fact, old: Fact, bodies: bool = False) -> tuple[str, ...]:
    """RESTATED, NEW_VALUE and UPDATE (see above) for two statements: their texts, or with *bodies* their
    bodies (two facts under one subject: the subject says nothing about which replaces which)."""
    older, newer = (old.body, new.body) if bodies and old.body and new.body else (old.text, new.text)
    shared, content, shorter, longer, places, replaced, old_words = _alignment(older, newer)
    found = []
    says_all = _says_all(old.body, new.body) if old.body and new.body else _says_all(older, newer)
    if shorter and (places == 0 or says_all):
        found.append(RESTATED)
    if shorter and places == 1 and replaced == 1 and content >= 2 and shared >= NEW_VALUE_SHARE * longer:
        if bodies or not _names_another(new, old, old_words):
            found.append(NEW_VALUE)
    elif _new_number(older, newer) or _number_swap(older, newer):
        found.append(NEW_VALUE)
    said = {" ".join(m.group(0).casefold().split()) for m in _UPDATE.finditer(newer)}
    if said - {" ".join(m.group(0).casefold().split()) for m in _UPDATE.finditer(older)} and content \
            and shared >= UPDATE_SHARE * shorter:
        found.append(UPDATE)
    return tuple(found)


def _names_another(new: Fact, old: Fact, replaced_words: frozenset[str]) -> bool:
    """Two facts with bodies under subjects that share no word, whose texts differ in the one place
    that holds the older subject's words: the same sentence said of another thing ("Kafka retention
    settings … are tuned by hand" → "Redis eviction settings … are tuned by hand"), not a new value."""
    if not (old.body and new.body):
        return False
    about_old, about_new = content_words(old.subject), content_words(new.subject)
    return bool(about_old and about_new) and about_old.isdisjoint(about_new) \
        and not about_old.isdisjoint(replaced_words)


def worded_alike(new: Fact, old: Fact) -> bool:
    """At least a third of the shorter statement's words (compared on their first STEM letters)
    stand in the other in the same order:
    two statements worded alike, not only about the same things. What makes a cosine at the
    certain threshold, with no other evidence, worth one question."""
    a, b = _stems(old.text), _stems(new.text)
    shared = sum(block.size for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return bool(a and b) and shared >= UPDATE_SHARE * min(len(a), len(b))


STEM = 5   # letters a word is compared on by `worded_alike` ("renewal" and "renew", "switching" and "switch")


@lru_cache(maxsize=1 << 14)
def _stems(text: str) -> tuple[str, ...]:
    return tuple(w[:STEM] for w in words(text) if w not in UPDATE_WORDS)


def narrower_subject(new: Fact, old: Fact) -> bool:
    """Both facts have a subject and a body, and one subject says all the other says and more
    ("Connection pool limits for the crawler" and "Connection pool limits"): a case of the topic,
    or the topic of a case, beside it rather than in its place (as `_reference` reads it too)."""
    if not (new.body and old.body):
        return False
    a, b = content_words(new.subject), content_words(old.subject)
    return bool(a and b) and (a < b or b < a)
