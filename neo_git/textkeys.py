"""How the write policy compares texts: the duplicate key and rule 2's subject key.

Kept apart from the policy (`store/supersession.py`, `store/index.py`) so the parse cache can
record, per fact, hashes of both (`fact_table.py`): the first add of a process then finds its
duplicates and same-subject candidates among 50,000 stored facts without decoding them.
Changing either function changes `KEYS_SIGNATURE`, which names the parse cache's format: a
cache written with other keys is never read.
"""
from __future__ import annotations

import hashlib
import re
from functools import lru_cache

_SUFFIX = re.compile(r"(?:\s+(?:v\d+|corrected|updated|new|revised|final))+$")
_PUNCT = re.compile(r"[\W_]+", re.UNICODE)


def _normalized(text: str) -> str:
    return " ".join(text.split()).casefold()


def _subject_key(subject: str) -> str:
    words = _PUNCT.sub(" ", record_title(subject).casefold()).strip()
    stripped = _SUFFIX.sub("", words).strip()
    return stripped or words


@lru_cache(maxsize=1 << 18)
def normalized(text: str) -> str:
    """Whitespace collapsed and case folded: two facts whose texts match this way are duplicates."""
    return _normalized(text)


@lru_cache(maxsize=1 << 16)
def subject_key(subject: str) -> str:
    """`"API_migration deadline (v2)"` → `"api migration deadline"`, `"ADR-8: Keycloak setup"` →
    `"keycloak setup"` (a record's number is not its subject): what rule 2 compares."""
    return _subject_key(subject)


# A subject that is an identifier: one token of two or more parts joined by "_", ".", "-", "/" or
# ":" ("unit_price", "api.timeout", "feature-flags/checkout", "deploy:window"), or in camelCase
# ("retryPolicy"). Such a subject names one value (a key), as a setting's name does: under it a
# new body is a new value. A subject in words ("Testing", "Code style > Imports", "HTTP client")
# is a topic that many distinct statements are filed under.
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[_.:/-]+[A-Za-z0-9]+)+$|^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$")


@lru_cache(maxsize=1 << 14)
def key_like(subject: str) -> bool:
    """Is *subject* an identifier ("unit_price", "api.timeout", "retryPolicy"), not words?"""
    return bool(_KEY.match(subject.strip()))


def revision_suffix(subject: str) -> bool:
    """Does *subject* end with a word that marks a revision ("v2", "corrected", "updated", "new",
    "revised", "final"), as "http_client_v2" and "HTTP client (corrected)" do?"""
    return _SUFFIX.search(_PUNCT.sub(" ", record_title(subject).casefold()).strip()) is not None


# Word-level comparison, shared by the review evidence (`store/evidence.py`) and recall's echoes
# (`ranking.echoes`); not part of KEYS_SIGNATURE (no cache stores them).
_WORD = re.compile(r"\w+", re.UNICODE)
# Words a text may add or drop around what it is about ("the", "our", "one").
FILLER = frozenset("a an the of for to in on at by with and or as our we us my your their is are be was were it "
                   "its this that these those from into via per one".split())


def fold(word: str) -> str:
    """Plural and -ies folded ("queries" → "query", "migrations" → "migration")."""
    if len(word) > 4:
        if word.endswith("ies"):
            return word[:-3] + "y"
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            return word[:-1]
    return word


@lru_cache(maxsize=1 << 14)
def words(text: str) -> tuple[str, ...]:
    """Lower-cased, plural-folded words of *text*, in order."""
    return tuple(fold(w) for w in _WORD.findall(text.casefold()))


# Words that name a series of numbered records ("ADR-7: Use Postgres", "RFC 12", "Decision 3: …"):
# there the number identifies a document, not an entity the fact is about, and another record of
# the series may well replace it.
RECORD_SERIES = frozenset("adr madr rfc rfd pep kep tep decision".split())
# Of those, the words that number nothing but records: the others also name a standard or a
# proposal a fact is about ("RFC 3339 timestamps", "PEP 8 compliance"), so there a number is a
# record's only when a separator follows it ("RFC 12: Transport").
RECORDS_ONLY = frozenset("adr madr".split())
# A record's number opening its title: a series word and a number ("ADR001: ", "ADR 1: ", "RFC-12: "),
# or a bare number and a separator followed by a space ("7. ", "001 — ", "12) "), not "1.5 s timeout"
# nor a range ("3 - 5 retries");
# a word must follow ("ADR-7:" alone is all the title there is).
_RECORD_PREFIX = re.compile(
    r"^\W*(?:(?P<series>[A-Za-z]{2,8})[\s_#-]*0*(?P<labelled>\d{1,6})\b\s*(?P<separator>[.:)\]]|[—–-]+)?"
    r"|0*(?P<bare>\d{1,6})\s*(?:[.:)\]]|[—–-]+)(?=\s)(?!\s+\d+\b))\s*(?=\S)(?=\W*\w)", re.UNICODE)


@lru_cache(maxsize=1 << 14)
def _record_prefix(subject: str) -> tuple[str, str, int] | None:
    """(series, number, where the title starts) when *subject* opens with a record's number."""
    match = _RECORD_PREFIX.match(subject)
    if match is None:
        return None
    if match.group("bare") is not None:
        return "", match.group("bare").lstrip("0") or "0", match.end()
    series = match.group("series").casefold()
    if series not in RECORD_SERIES or (match.group("separator") is None and series not in RECORDS_ONLY):
        return None
    return series, match.group("labelled").lstrip("0") or "0", match.end()


def record_number(subject: str) -> tuple[str, str] | None:
    """(series, number) when *subject* opens with a record's number: ("adr", "45") for "ADR-45:
    Entity versioning", ("", "17") for "17. Use UDP"; None otherwise (also for "Deal 1: …",
    whose word is no record series, and for "PEP 8 compliance", a standard without a separator)."""
    prefix = _record_prefix(subject)
    return None if prefix is None else prefix[:2]


def record_title(subject: str) -> str:
    """*subject* without the record number it opens with ("ADR-45: Entity versioning" → "Entity
    versioning"): what the record is about."""
    prefix = _record_prefix(subject)
    if prefix is None:
        return subject
    return subject[prefix[2]:] or subject


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for each word of *text*: the words `words` gives (folded), with where
    each stands in *text* (for quoting the passage a comparison found)."""
    folded = text.casefold()
    if len(folded) == len(text):  # each character folds to one: the places are the same
        return [(fold(m.group(0)), m.start(), m.end()) for m in _WORD.finditer(folded)]
    # "İ" folds to "i" and a combining dot (no word character): map folded places back.
    owner = [at for at, char in enumerate(text) for _ in char.casefold()]
    return [(fold(m.group(0)), owner[m.start()], owner[m.end() - 1] + 1) for m in _WORD.finditer(folded)]


def key_hash(text: str) -> int:
    """64 bits of a key, for finding candidates (always confirmed on the texts themselves)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def duplicate_hash(subject: str, body: str) -> int:
    """`key_hash` of the duplicate key (normalised subject and body); uncached, for bulk use."""
    return key_hash(_normalized(subject) + "\0" + _normalized(body))


def subject_hash(subject: str) -> int:
    """`key_hash` of rule 2's subject key; uncached, for bulk use."""
    return key_hash(_subject_key(subject))


def _signature() -> str:
    parts = [_SUFFIX.pattern, _PUNCT.pattern, _RECORD_PREFIX.pattern, " ".join(sorted(RECORD_SERIES)),
             " ".join(sorted(RECORDS_ONLY))]
    for function in (_normalized, _subject_key, duplicate_hash, subject_hash, key_hash, _record_prefix.__wrapped__,
                     record_number, record_title):
        code = function.__code__
        parts.append(repr((code.co_code, code.co_consts, code.co_names)))
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:12]


KEYS_SIGNATURE = _signature()
