"""The supersession rule (docs/architecture.md §4; the reasons: docs/design-notes.md "Write policy").

Which valid fact, if any, a new fact of the same scope and kind replaces:

1. an explicit ``supersedes`` id wins (decided by the caller, `policy.plan_add`);
2. else a fact with the same *normalised subject* (case, whitespace, punctuation and a
   trailing ``v2``/``corrected``/``updated``/``new``/``revised``/``final`` removed), unless they
   name different entities ("Deal 1" / "Deal 2") or different list labels ("`make lint`" /
   "`make test`"). Under a *key* (a subject written as an identifier, "unit_price", or marked as a
   revision, `names_key`) it is superseded unless the bodies are unrelated (both long, body
   cosine below a weak guard); long bodies only loosely related are proposed for review. Under a
   *topic* (a subject in words: "Testing") it is superseded only when the bodies show it
   (`evidence.statement_evidence`: one value replaced, a stated change, everything repeated);
   two records under a title no other fact has are proposed for review;
3. else cosine at or above the embedder's *certain* threshold supersedes two statement-sized facts
   only with the same evidence in their texts (and never for a narrower subject); without it, one
   review question when the two are worded alike (`evidence.worded_alike`). Between the
   *possible* threshold and the certain one the new fact records a ``possibly_supersedes``
   link only with evidence, retiring nothing. Two facts that cite different
   code (`evidence.cites_other_code`) never supersede by cosine: at most a review link.
   Between long texts cosine alone neither retires nor asks: of the LONG_CANDIDATES most
   similar, a link needs what the newer text says about the older one (`store/evidence.py`),
   and a change stated about one brings the others as alternatives (ALTERNATIVES).

Never candidates: facts written in the same batch, and pairs a person rejected
(``metadata.distinct_from`` on either fact). An embedder whose ``supersede_threshold``
is above 1 turns rules 2 and 3 off (the "oracle arm" of an evaluation).
"""
from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from neo_git import scoring
from neo_git.fact_schema import PossibleLink
from neo_git.facts import Fact
from neo_git.textkeys import (
    RECORDS_ONLY,
    key_like,
    record_title,
    revision_suffix,
    subject_key,  # re-exported (rule 2's key)
)

RULE_EXPLICIT = "explicit"
RULE_SUBJECT = "same_subject"
RULE_SIMILARITY = "similarity"
RULE_REVIEW = "review"  # a possible supersession a person accepted
RULE_JUDGE = "judge"    # a possible supersession the review judge accepted (`neo.reviewJudge auto`)

# Under a key, bodies count as "unrelated" only when both have at least this many words and
# their cosine is below BODY_GUARD. Short bodies are values ("$25,000" → "$40,000", "card-based
# UI" → "list-based UI"): under the same key a new value is a restatement even when
# the two share no word. On StateBench train the 11 same-subject restatements whose bodies
# are both long have body cosines ≥ 0.758 (hash embedder; `statebench_eval.py` prints it),
# and no same-subject pair outside brutal_realistic is a non-supersession: the guard is
# kept weak on purpose, for template titles over unrelated records.
BODY_GUARD = 0.10
LONG_BODY_WORDS = 12
# Rule 3 is calibrated on statement-sized facts (StateBench: at most 25 words). Between
# longer texts (decision records, design docs) cosine mostly measures shared project
# vocabulary: on real ADRs the best match of every record scores 0.35-0.59 (10th-90th
# percentile) whether or not it is the record it replaced. Beyond this length cosine
# alone never retires anything (see LONG_CANDIDATES). Shared with recall (scoring.py).
CALIBRATED_WORDS = scoring.CALIBRATED_WORDS
LABEL_WORDS = 4   # entity labels are looked for in the first words of a subject and of a body
MAX_POSSIBLE = 3  # possible links recorded per new fact, most similar first
# Outside the calibrated lengths only the few most similar candidates are looked at, and of those
# only the ones the newer text speaks about (store/evidence.py): a candidate it names (a reference),
# or the most similar one when it states a change about it. A change word near the older subject's
# words is weak evidence, since records about one system share those words (ADR dev: 78 wrong
# links for 10 right ones when any of the two best could be asked about on it). ADR dev, with
# ALTERNATIVES: 3 gives 14.4% of records a review item and finds 20 of 24 true edges; 2: 13.3%, 17;
# 1: 12.2%, 15; 5: 14.9%, 19 (the old rule, the best match at or above the certain threshold: 55%,
# 14). `benchmarks/adr_eval.py --sweep` prints it.
LONG_CANDIDATES = 3
# The most similar long candidate is also proposed, without evidence, when its cosine reaches this
# (None: never). Off: with all-MiniLM-L6-v2 on ADR dev, 0.70 finds 17 of 24 edges for a review
# item on 26% of adds (evidence alone: 13 for 19%), 0.80 finds 14 for 20%; no value reaches the
# issue-21 targets (≤ 15% of adds, ≥ 0.8 of the edges). `benchmarks/adr_eval.py --sweep` prints it.
LONG_BEST_COSINE: float | None = None
# When the newer long text states a change about one of its long candidates, the others looked at
# (from the long floor, LONG_CANDIDATES in all) join the item as *alternatives*: a record that says
# "we no longer …" replaces something, and the thing replaced is often another of its closest
# records than the one its change words sit next to ("Remove protocol buffers from the
# application" names the serialisation record, replaces "Use protobufs as the data storage
# approach"). The queue then asks one question per newer fact, with up to three candidates: ADR
# dev 14.4% of adds with an item either way, 18 → 20 of 24 edges found, 15.4 → 34.0 links per 100
# adds (alternatives: 2 right, 103 wrong). False turns it off (`adr_eval.py --sweep` prints both).
ALTERNATIVES = True

# What lets a statement retire another (store/evidence.py, issue 32): its words show a new value for
# the same attribute, a stated change about it, or the same words.
PROOF = frozenset(("new_value", "update", "restated"))
# Two choices made on the dev sets (`benchmarks/write_policy_eval.py --cross-validate` re-makes them
# leaving each rule file, StateBench track and ADR repository out): a question for two statements
# under one topic whose bodies read alike (body cosine ≥ certain) with no evidence in their words —
# off: instruction files file many such rules under one heading (rules dev, hash, headings: 10.8% of
# adds asked with it, 7.3% without) and StateBench's key view needs none; and a question for two
# statements worded alike whose cosine reaches the certain threshold — on: without it StateBench
# dev's value view keeps 0.89 of its edges (RwR, hash), with it 0.96, for 0.7% → 7.3% of rule adds asked.
TOPIC_QUESTION = False
CERTAIN_QUESTION = True


def names_key(new_subject: str, old_subject: str) -> bool:
    """Rule 2 treats the shared subject as a key (a new body is a new value) when it is written as
    an identifier ("unit_price", "api.timeout") or the newer one marks itself a revision
    ("HTTP client (corrected)", "http_client_v2"): a subject in words is a topic."""
    return key_like(new_subject) or key_like(old_subject) or (
        revision_suffix(new_subject) and not revision_suffix(old_subject))


# An entity label: a word and a number ("Deal 1", "fact_0", "SR-3456", "ticket #12").
_LABEL = re.compile(r"\b([A-Za-z]{2,})[ _#-]?(\d+)\b")
# Words followed by a number that state a value, not name an entity.
_NOT_LABELS = frozenset("""
jan january feb february mar march apr april may jun june jul july aug august sep sept
september oct october nov november dec december mon monday tue tuesday wed wednesday thu
thursday fri friday sat saturday sun sunday at by to from until before after on in of
is was be now only about around over under up down than top last next first within
for and or the a an per every each usd eur gbp us to version tier level step
""".split())


@lru_cache(maxsize=1 << 14)
def entity_labels(text: str) -> Mapping[str, frozenset[str]]:
    """{label word: the numbers it carries} in the first LABEL_WORDS words of *text*, e.g.
    "Deal 1 (closed): $500,000" → {"deal": {"1"}}. Only the opening words: there a label names
    what the fact is about; later ("moved to Room 302", "net-60") it is usually the value. A record's
    number opening the text ("RFC 12: …", `textkeys.record_number`) or an ADR's anywhere ("In
    [ADR003](…) we …") numbers a document: no label ("PEP 8 compliance" has one)."""
    opening = " ".join(text.split()[:2 * LABEL_WORDS])   # room for "ADR 7 —" before the words
    head = " ".join(record_title(opening).replace("_", " ").split()[:LABEL_WORDS])
    found: dict[str, set[str]] = {}
    for word, number in _LABEL.findall(head):
        word = word.casefold()
        if word not in _NOT_LABELS and word not in RECORDS_ONLY:
            found.setdefault(word, set()).add(number.lstrip("0") or "0")
    return {word: frozenset(numbers) for word, numbers in found.items()}


def distinct_entities(a: Fact, b: Fact) -> bool:
    """True when both facts name an entity of the same kind with different numbers
    ("Deal 1 (closed)" / "Deal 2 (in progress)", `fact_0` / `fact_1`): templated facts
    about different things, however similar their wording."""
    for left, right in ((entity_labels(a.subject), entity_labels(b.subject)),
                        (entity_labels(a.body), entity_labels(b.body))):
        if any(left[word].isdisjoint(right[word]) for word in left.keys() & right.keys()):
            return True
    return False


_words = scoring.word_count


def _long(text: str) -> bool:
    return _words(text) >= LONG_BODY_WORDS


@dataclass(frozen=True)
class Thresholds:
    """The cosine thresholds of one embedder."""

    certain: float   # cosine alone supersedes at or above this
    possible: float  # a possibly_supersedes link at or above this (and below certain)
    embedder: str = "?"
    # Between texts longer than the calibrated lengths (CALIBRATED_WORDS) a candidate is looked at
    # only from this cosine (None: from `possible`): records of one project share its vocabulary,
    # so their cosines run higher than statements' (the embedder's `long_possible_threshold`).
    long_possible: float | None = None

    @property
    def long_floor(self) -> float:
        """The cosine from which a long candidate is looked at: `long_possible`, never below `possible`."""
        return self.possible if self.long_possible is None else max(self.possible, self.long_possible)

    @property
    def detecting(self) -> bool:
        """False when automatic detection is off (certain threshold above 1)."""
        return self.certain <= 1.0

    @classmethod
    def of(cls, embedder) -> Thresholds:
        """The embedder's `supersede_threshold` (certain), `possible_threshold` (default: no band)
        and `long_possible_threshold` (default: the possible one)."""
        from neo_git.embed import long_threshold, related_threshold

        return cls(certain=float(embedder.supersede_threshold), possible=related_threshold(embedder),
                   embedder=getattr(embedder, "id", "?"), long_possible=long_threshold(embedder))


@dataclass(frozen=True)
class Decision:
    """What the rule decided for one new fact."""

    target: str | None = None          # id of the fact to supersede
    rule: str | None = None            # RULE_SUBJECT or RULE_SIMILARITY when target is set
    similarity: float | None = None    # cosine of the full texts
    threshold: float | None = None     # the threshold (or guard) that was passed
    possible: tuple[PossibleLink, ...] = ()   # links for review, sorted by id
    evidence: tuple[str, ...] = ()     # what beyond the rule showed the replacement (store/evidence.py)


BodySimilarity = Callable[[Fact, Fact], float]


def blocked(new: Fact, old: Fact) -> bool:
    """A person said these two are distinct (a rejected review), in either direction."""
    return old.id in new.metadata.distinct_from or new.id in old.metadata.distinct_from


def decide(new: Fact, members: Sequence[Fact], scores: Sequence[float], thresholds: Thresholds,
           body_similarity: BodySimilarity | None = None, exclude: Collection[str] = (),
           same_subject: Collection[str] | None = None) -> Decision:
    """Rules 2 and 3 over *members* (live candidates, with their cosine *scores* to *new*).

    *exclude*: ids that are never candidates (the new fact's batch). *same_subject*: ids of
    members whose normalised subject equals the new one's (computed here when None)."""
    if not thresholds.detecting or not members:
        return Decision()
    if same_subject is None:
        key = subject_key(new.subject)
        same_subject = {m.id for m in members if subject_key(m.subject) == key}
    ranked = sorted(zip(map(float, scores), members), key=lambda pair: (-pair[0], pair[1].id))
    same = [pair for pair in ranked if pair[1].id in same_subject]
    return decide_ranked(new, same, ranked, thresholds, body_similarity, exclude, same_subject)


def decide_ranked(new: Fact, same_pairs: Iterable[tuple[float, Fact]], ranked: Iterable[tuple[float, Fact]],
                  thresholds: Thresholds, body_similarity: BodySimilarity | None, exclude: Collection[str],
                  same_subject: Collection[str]) -> Decision:
    """`decide` over candidates already in (-score, id) order: *same_pairs* those of the new
    fact's subject (rule 2), *ranked* every candidate scoring at least `thresholds.possible`
    (rule 3; it may be lazy: rule 3 stops early, so most candidates are never looked at)."""
    if not thresholds.detecting:
        return Decision()

    def usable(score: float, old: Fact) -> bool:
        return score == score and old.id not in exclude and old.id != new.id and not blocked(new, old)

    from neo_git.store.evidence import (
        ALTERNATIVE,
        CHANGE,
        DIFFERENT_CODE,
        KEY,
        REFERENCE,
        SAME_SUBJECT,
        cites_other_code,
        different_labels,
        narrower_subject,
        review_evidence,
        statement_evidence,
        worded_alike,
    )

    possible: list[PossibleLink] = []
    short = _words(new.text) <= CALIBRATED_WORDS
    for score, old in same_pairs:  # rule 2: the most similar same-subject fact that passes the guards
        if not usable(score, old) or distinct_entities(new, old) or different_labels(new, old):
            continue
        keyed = names_key(new.subject, old.subject)
        if keyed and body_similarity is not None and _long(new.body) and _long(old.body):
            body = body_similarity(new, old)
            if body < BODY_GUARD:
                continue  # same title, unrelated content (a template title, a generic subject)
            if body < thresholds.possible:
                # Long bodies only loosely related: as unsure as rule 3's band, so ask (once).
                if not possible:
                    possible.append(_link(old, score, thresholds.possible, (SAME_SUBJECT, *review_evidence(new, old))))
                continue
        if keyed:
            return Decision(old.id, RULE_SUBJECT, score, BODY_GUARD, evidence=(KEY,))
        # A subject in words is a topic ("Testing"): many distinct statements are filed under one.
        # The bodies must show the replacement; else at most one question, when their words give a reason.
        said = statement_evidence(new, old, bodies=True)
        statements = short and _words(old.text) <= CALIBRATED_WORDS
        if statements and PROOF & set(said):
            return Decision(old.id, RULE_SUBJECT, score, BODY_GUARD, evidence=said)
        if possible:
            continue
        related = body_similarity(new, old) if body_similarity is not None else score
        if not statements:
            # Two records under one title (decision records, design notes): the title names the
            # record, and cosine between long texts is no proof; a person decides.
            # Asked only while the title names one record: under a title shared by several facts
            # already (a heading: "Testing") statements are filed side by side.
            if related >= thresholds.possible and sum(1 for _ in same_subject) == 1:
                possible.append(_link(old, score, thresholds.possible, (SAME_SUBJECT, *said)))
        elif said or (TOPIC_QUESTION and related >= thresholds.certain):
            possible.append(_link(old, score, thresholds.possible, (SAME_SUBJECT, *said)))
    uncalibrated = 0  # long candidates looked at
    unlinked: list[tuple[float, Fact]] = []  # of those from the long floor, the ones not proposed
    long_change = False  # a change stated about one of them (not about a statement in the calibrated band)
    for score, old in ranked:  # rule 3: cosine alone, most similar first
        if not usable(score, old):
            continue
        if score < thresholds.possible or len(possible) >= MAX_POSSIBLE:
            break
        if old.id in same_subject or distinct_entities(new, old) or different_labels(new, old):
            continue  # failed rule 2's guards (or proposed by them), or another entity
        if not (short and _words(old.text) <= CALIBRATED_WORDS):
            # Outside the calibrated lengths cosine alone neither retires nor asks: of the few most
            # similar candidates, those from the long floor the newer text speaks about
            # (store/evidence.py). Those below the floor count too: else a short fact would read
            # every long record of the project down to the possible threshold.
            uncalibrated += 1
            if uncalibrated > LONG_CANDIDATES:
                break
            if score < thresholds.long_floor:
                continue
            evidence = review_evidence(new, old)
            if REFERENCE in evidence or (uncalibrated == 1 and (CHANGE in evidence or (
                    LONG_BEST_COSINE is not None and score >= LONG_BEST_COSINE))):
                possible.append(_link(old, score, thresholds.possible, evidence))
                long_change = long_change or CHANGE in evidence
            else:
                unlinked.append((score, old))
            continue
        evidence = review_evidence(new, old)
        if cites_other_code(new, old):
            # Statements about different code that read alike: at most a question for a person.
            possible.append(_link(old, score, thresholds.possible, (*evidence, DIFFERENT_CODE)))
            continue
        said = statement_evidence(new, old)
        if score >= thresholds.certain and not possible and not uncalibrated and PROOF & set(said) \
                and not narrower_subject(new, old):
            return Decision(old.id, RULE_SIMILARITY, score, thresholds.certain, evidence=said)
        if evidence or said or (CERTAIN_QUESTION and score >= thresholds.certain and worded_alike(new, old)):
            possible.append(_link(old, score, thresholds.possible, (*evidence, *said)))
    if unlinked and ALTERNATIVES and long_change:
        # The newer text says it changes something; what it changes is often another of its most
        # similar records than the one its words point to: one question, several candidates.
        room = MAX_POSSIBLE - len(possible)
        possible += [_link(old, score, thresholds.possible, (ALTERNATIVE,)) for score, old in unlinked[:room]]
    return Decision(possible=tuple(sorted(possible, key=lambda link: link.id)))


def _link(old: Fact, score: float, threshold: float, evidence: Sequence[str]) -> PossibleLink:
    """A `possibly_supersedes` link, with the evidence found (store/evidence.py), if any."""
    return PossibleLink(old.id, round(score, 4), threshold, tuple(dict.fromkeys(evidence)))


def ranked_candidates(group, scores: Sequence[float], floor: float, same_subject: Collection[str]
                      ) -> tuple[list[tuple[float, Fact]], Iterable[tuple[float, Fact]]]:
    """For `decide_ranked`: the group's same-subject members (rule 2 does not need a high
    cosine; a NaN scores -1), and its live members scoring ≥ *floor*, both in (-score, id)
    order. The second is lazy when *scores* is an ndarray: rows are sorted in numpy and
    become (score, Fact) pairs only as rule 3 reads them, so an add costs the same however
    many facts of its kind resemble it (their share is fixed, so their number grows with
    the store)."""
    members = group.members
    same = []
    for fact_id in same_subject:
        row = group.row_of.get(fact_id)
        if row is not None:
            score = float(scores[row])
            same.append((score if not math.isnan(score) else -1.0, members[group.id_at(row)]))
    same.sort(key=lambda pair: (-pair[0], pair[1].id))
    np = sys.modules.get("numpy")
    if np is not None and isinstance(scores, np.ndarray) and scores.ndim == 1:
        alive = np.frombuffer(bytes(group.alive), dtype=np.bool_)
        hits = np.flatnonzero(alive & (scores >= floor))
        order = np.argsort(-scores[hits], kind="stable")
        return same, _in_rank_order(hits[order].tolist(), scores[hits][order].tolist(), group)
    ranked = sorted(((float(score), members[group.id_at(row)]) for row, score in enumerate(scores)
                     if group.alive[row] and score == score and score >= floor),
                    key=lambda pair: (-pair[0], pair[1].id))
    return same, ranked


def _in_rank_order(rows: list[int], values: list[float], group) -> Iterator[tuple[float, Fact]]:
    """(score, member) for rows already sorted by descending score; equal scores by id."""
    i, n = 0, len(rows)
    while i < n:
        j = i + 1
        while j < n and values[j] == values[i]:
            j += 1
        run = [(values[k], group.members[group.id_at(rows[k])]) for k in range(i, j)]
        if j - i > 1:
            run.sort(key=lambda pair: pair[1].id)
        yield from run
        i = j
