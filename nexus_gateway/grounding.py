"""Grounding: a generated value must come from the request or the session window.

The grammar makes every output parse and type-check; it cannot tell a value the request gave from one
the model made up. Strings must be copied (or, for prose, have their words present; an identifier
re-spelled only when its words stand together), numbers stated as words, optional enums and booleans
named; a date, a time of day or a time zone the model normalised counts when the request states it
("March 1st, 2025" → 2025-03-01, "9am" → 09:00, "in Tokyo" → Asia/Tokyo). Placeholders (``"<owner>"``,
``"string"``, example values, ``page: 1``) fail and are dropped, never forwarded. A place or a time
copied as said becomes the form its key wants (``New York`` → America/New_York, ``3pm`` → 15:00 where
the schema asks for HH:MM). Measured rule by rule in ``docs/arguments.md``.
"""

from __future__ import annotations

import functools
import math
import re
import zoneinfo
from collections import Counter
from collections.abc import Collection
from typing import Any

from .affordance import REPO_PATTERN, URL_PATTERN
from .lexical import NUMBER_WORDS, STOPWORDS, split_identifier, stem, tokenize
from .mentions import (
    COUNT_OR_END,
    FREE_TEXT,
    affirmed,
    named_keys,
    names_value,
    ones_from_an_end,
    quoted_spans,
    sayer,
)
from .signature import _resolve

# Prose the request must give itself (quoted, or under the key's own name) when the key is optional: the
# 0.5B model otherwise writes a description nobody asked for, or pastes the whole request as a body.
PROSE = re.compile(r"body|description|content|message|comment|summary|reason|note|rationale")
# A number as a word of its own ("#318", "PR 512", "3.12", "1st", "6cm"), not the digits inside an id or
# a hash ("DC_kwDOAbCd4M4AxYz1", "5b1e9f0c").
# A number standing as a word ("#12", "issue 45", "2.5"), not a part of a version or a branch ("4.x").
# A minus sign belongs to its number ("and -4" states -4, not 4), an exponent too ("1e-9" states no 1);
# a hyphen between numbers is a range ("Dec 12-15").
_NUMBER = re.compile(
    r"(?<![\w.])(?<![\s(\[,:=]-)(?<!^-)(?<![eE][-+])"  # not after a sign or an exponent's "e-"
    r"(?:(?<!\d,)|(?!\d{3}(?![\d.])))"  # nor a thousands group ("2,000,000"; "1,2,3" is three numbers)
    r"\d+(?:\.\d+)?(?!\.\w)(?![eE][-+]?\d)(?!,\d{3}(?!\d))(?=[A-Za-z]*(?!\w))"
)
_NEGATIVE = re.compile(r"(?:^|(?<=[\s(\[,:=]))-\d+(?:\.\d+)?(?![\w.,]*\d)")
_THOUSANDS = re.compile(r"(?<![\w.,])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,]*\d)")
_SCIENTIFIC = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?[eE][-+]?\d+\b")
_SCALED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(thousand|million|billion|trillion)\b", re.I)
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
# Every digit run of a URL is an id it states, anchors included (``#discussion_r1650022311``).
_URL_DIGITS = re.compile(r"\d+")
_WORDS = re.compile(r"[a-z0-9]+")
_LETTERS = re.compile(r"[a-z]+")
PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?%")
# A code in capitals the model wrote for words the request spelt out ("Canadian dollars" → CAD).
_ACRONYM = re.compile(r"[A-Z]{2,5}")
_MONTH_NAMES: tuple[str, ...] = ("january", "february", "march", "april", "may", "june", "july", "august", "september")
_MONTH_NAMES += ("october", "november", "december")
MONTHS = {name[:3]: n for n, name in enumerate(_MONTH_NAMES, 1)}
MONTH_WORDS = frozenset((*_MONTH_NAMES, *MONTHS, "sept"))
_SLASHED_DATE = re.compile(r"^(?:(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})|(\d{4})/(\d{1,2})/(\d{1,2}))$")
_ISO_FORMAT_SAID = re.compile(r"\bISO\b|ISO ?8601|yyyy-mm-dd", re.I)
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?Z?)?$")
# A time of day as requests say it ("9:30", "9am", "3 p.m.", "17:05") and as schemas want it ("09:30").
_SAID_TIME = re.compile(r"(?<![\w:.])(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?(?![\w:])", re.I)
_CLOCK_VALUE = re.compile(r"^(\d{1,2}):(\d{2})(?::00)?$")
# What may follow a time the model copied with its zone: "3pm UTC", "15:00 UTC+9", "9am Asia/Tokyo", "noon
# Tokyo time"; not a date or a second time ("14:00 on 2023-04-15"), which a longer format key wants kept.
_ZONE_AFTER = re.compile(r"(?:\s+[A-Za-z][\w/]*(?:[+-]\d{1,2}(?::\d{2})?)?(?:\s+time)?)?\s*", re.I)
# "the current directory", "this folder", "the working dir", "cwd": the path ``.`` by every shell's convention
_HERE = re.compile(r"\b(?:current|working|present|this)\s+(?:working\s+)?(?:directory|folder|dir)\b|\b(?:cwd|pwd)\b")
# "the last commit", "the latest commit": git's ``HEAD``
_LAST_COMMIT = re.compile(r"\b(?:last|latest|most recent|newest|current)\s+commit\b")
# A description's sentence that names the value to use when the user gives none
_FALLBACK = re.compile(
    r"\bif (?:no|not|none|omitted|unspecified|missing)\b|\bwhen (?:no|not|omitted)\b"
    r"|\bby default\b|\bdefaults? (?:to|is)\b",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
# A key that holds a time zone: its name or description says so.
_ZONE_KEY = re.compile(r"time ?zone|\btz\b|iana", re.I)
PLACEHOLDER = re.compile(
    r"^(<.*>|\{.*\}|\[.*\]|string|example|sample|value|xxx+|todo|n/?a|none|null|your[-_ ].*)$", re.I
)


def _word_list(text: str) -> list[str]:
    return [stem(w) for w in _WORDS.findall(split_identifier(text).lower())]


def _run_tokens(text: str) -> list[str]:
    """Words, with the separators that carry structure (``/`` of a path, ``.`` of a file name) kept as
    tokens: ``-``, ``_`` and spaces join words interchangeably, ``/`` and ``.`` do not."""
    tokens: list[str] = []
    for piece in re.split(r"([/.])", text):
        tokens.extend([piece] if piece in ("/", ".") else _word_list(piece))
    return tokens


def _words(text: str) -> set[str]:
    return set(_word_list(text))


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def abbreviates(acronym: str, words: list[str]) -> bool:
    """Consecutive ``words``, none a function word, begin with the acronym's letters, each word at least
    one and all of them used: "Canadian dollars" → CAD, "US dollars" → USD, "New York City" → NYC."""
    wanted = acronym.lower()

    def spelled(at: int, rest: str) -> bool:
        if not rest:
            return True
        if at >= len(words):
            return False
        word = words[at]
        return word not in STOPWORDS and any(
            word.startswith(rest[:n]) and spelled(at + 1, rest[n:]) for n in range(1, len(rest) + 1)
        )

    return any(
        spelled(start + 1, wanted[n:])
        for start, word in enumerate(words)
        for n in range(1, len(wanted))  # two words at least: one word's prefix is a substring, checked before
        if word not in STOPWORDS and word.startswith(wanted[:n])
    )


class _Sources:
    def __init__(self, text: str) -> None:
        self.raw = text
        self.text = _normal(text)
        tokens = _run_tokens(text)
        self.words = set(tokens) - {"/", "."}
        self._runs = " " + " ".join(tokens) + " "
        # each stated number and how often
        plain = URL_PATTERN.sub(" ", text)
        self.numbers = Counter(_NUMBER.findall(plain))
        self.numbers.update(spelled_numbers(plain))
        self.digit_runs = {int(d) for d in re.findall(r"\d+", plain)}
        # "the last commit" states a 1 only for a key that counts or reads from an end (placement then
        # picks the end): the model's ``context_lines: 1`` for "what changed in the last commit" counts
        # no commits. A 1 stated as well may go anywhere.
        ends = len(ones_from_an_end(plain))
        self.implied_one = ends > 0 and self.numbers["1"] == ends
        self.months = {MONTHS[w[:3]] for w in _LETTERS.findall(plain.lower()) if w in MONTH_WORDS}
        self.times = _said_times(plain)
        self.percents = {float(n) for n in PERCENT.findall(text)}  # "7%" for a rate written as 7
        for url in URL_PATTERN.findall(text):
            self.numbers.update(_URL_DIGITS.findall(url))
        self.quoted = [_normal(span) for span in quoted_spans(text)]
        self.plain_words = _LETTERS.findall(text.lower())
        # an enum value said as the decoder reads it ("by creation date" → ``created``), outside quoted
        # text ("Closes #130" in a quoted PR body asks for no ``state: closed``), outside negations and
        # not by "open" creating something ("Open an issue …" asks for no ``state: open``)
        said_text = affirmed(text)
        self.said = sayer(said_text)
        self.value_words = set(_run_tokens(said_text))

    def quotes(self, value: str) -> bool:
        """The value is text the request quotes (or holds a quoted span whole)."""
        value = _normal(value)
        return any(value in span or span in value for span in self.quoted)

    def abbreviates(self, acronym: str) -> bool:
        """Whether consecutive words of the sources spell ``acronym`` (``abbreviates``)."""
        return abbreviates(acronym, self.plain_words)

    def states_run(self, tokens: list[str]) -> bool:
        """The words occur together, in this order (``docs-refresh`` from "docs refresh"), with the same
        ``/`` and ``.`` between them."""
        return f" {' '.join(tokens)} " in self._runs


PRONOUNS = frozenset(
    [
        "i",
        "me",
        "my",
        "mine",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "it",
        "its",
        "we",
        "us",
        "our",
        "they",
        "them",
        "their",
        "this",
        "that",
    ]
)


def _grounded(value: Any, prop: dict[str, Any], name: str, required: bool, sources: _Sources) -> bool:
    if isinstance(value, bool):
        return required or bool(_words(name) & sources.words)
    if isinstance(value, int | float):
        text = str(value)
        if value == 1 and sources.implied_one:
            return bool(COUNT_OR_END & set(tokenize(f"{name} {prop.get('description', '')}")))
        return text in sources.numbers or (text.endswith(".0") and text[:-2] in sources.numbers)
    if isinstance(value, str):
        if not value.strip() or value.strip().lower() in PRONOUNS or placeholder(value, sources.text):
            return False
        if PROSE.search(name.lower()) and _is_the_request(value, sources):
            return False  # "undo my last commit" is no commit message: the model found none and pasted the request
        if required and described_fallback(value, prop):
            return True
        if isinstance(prop.get("enum"), list) and value.lower() == "true":
            # a flag spelt as a string ("True", "False", "dontcare"): set, as a boolean is, by its key's
            # words ("free to enter" → ``free_entry: "True"``), never by the word "true". Not "False":
            # the 0.5B model wrote it for "any free performance venue", whose words are the key's too
            return required or bool((_words(name) - STOPWORDS) & sources.words)
        if isinstance(prop.get("enum"), list):  # "in" does not name ``in_progress``
            said = (
                bool((_words(value) - STOPWORDS) & sources.value_words)
                or names_value(value, sources.said)
                or _normal(value) in sources.quoted  # "with the status 'concluded'"
            )
            return required or said
        if (words := _words(value)) and words <= _words(name):
            return False  # the key's own name echoed as its value: ``labels: ["label"]`` from "bug-labelled"
        if name.lower() in ACCOUNT_KEYS and not ACCOUNT_NAME.fullmatch(value):
            return False  # "In our Q&A discussion" names no owner ``Q&A``: accounts and repositories are slugs
        if _normal(value) in sources.text:
            return True
        if _stated_date(value, sources):
            # a day and month in slashes are no value for a key that asks for an ISO date
            return not (slashed_date(value) and _wants_an_iso_date(prop))
        if prop.get("format") in ("date", "date-time") or "iso 8601" in str(prop.get("description", "")).lower():
            # a date the model normalised ("March 1st, 2025" → 2025-03-01): its year must be stated
            return value[:4] in sources.numbers
        if _normalised_time(value, sources) or (_holds_zone(name, prop) and _normalised_zone(value, sources)):
            return True
        if value == "HEAD" and _LAST_COMMIT.search(sources.text):
            return True
        if _ACRONYM.fullmatch(value) and sources.abbreviates(value):
            return True
        if FREE_TEXT.search(name.lower()):
            words = _words(value)
            return bool(words) and len(words & sources.words) / len(words) >= 0.5
        # an identifier the model re-spelled (``docs-refresh`` from "docs refresh") is stated when its
        # words stand together in the sources; words from all over the request glued into one value
        # (``inventory-api.py``, ``lumen-ui/src/Button.tsx``), a path made of words ("docs folder" →
        # ``docs/folder``) or a possessive (``my-blog``) are not. A path is never re-spelled: "the top
        # level of psf/requests" names no ``top-level`` file
        if "path" in name.lower():
            return value.strip() in (".", "./") and bool(_HERE.search(sources.text))
        run = _run_tokens(value)
        return bool(run) and run[0] not in PRONOUNS and sources.states_run(run)
    return True


def described_fallback(value: str, prop: dict[str, Any]) -> bool:
    """The key's description names this value as the one to use when the user gives none: the time
    server's ``timezone`` says "Use 'UTC' as local timezone if no timezone provided by the user", so "what
    time is it" is answered in the server's local zone instead of asking for one."""
    for sentence in _SENTENCE_END.split(str(prop.get("description", ""))):
        if _FALLBACK.search(sentence) and any(f"{q}{value}{q}" in sentence for q in "'\"`"):
            return True
    return False


def placeholder(value: Any, said: str) -> bool:
    """``<owner>``, ``{id}`` or "example" as a value; ``{"welcome": "Hi"}`` typed out in the request
    (``said``: its text lower-cased, its spaces collapsed) is content, not a placeholder,
    and so is a name written as one ("on dataset your_dataset_name", "My API key is YOUR_API_KEY": the
    request's own identifier, which the 0.5B model copied and this dropped). The eval counts leaks by it
    too (``eval_args.leaks``)."""
    if not isinstance(value, str) or not PLACEHOLDER.match(stripped := value.strip()):
        return False
    typed_out = stripped[0] in "<{[" or bool(re.search(r"\w[-_]\w", stripped))
    return not (typed_out and _normal(stripped) in said)


def _stated_slashed_date(value: str, sources: _Sources) -> bool:
    """A date written with slashes, dots or dashes around its year ("10/12/2022", "12-10-2022",
    "2022/12/10") for one the request says ("10th December 2022"): its year is stated, and its two other
    numbers are the stated day and month in one order or the other (which order a schema wants its
    description says, when it does; the value is the request's either way)."""
    match = _SLASHED_DATE.match(value)
    if match is None:
        return False
    first, second, year = (int(g) for g in (match.group(1, 2, 3) if match.group(3) else match.group(5, 6, 4)))
    digits = sources.digit_runs

    def month_said(month: int) -> bool:
        return month in sources.months or month in digits

    return year in digits and (
        (first in digits and month_said(second) and second <= 12)
        or (second in digits and month_said(first) and first <= 12)
    )


def _wants_an_iso_date(prop: dict[str, Any]) -> bool:
    description = str(prop.get("description", ""))
    return prop.get("format") in ("date", "date-time") or bool(_ISO_FORMAT_SAID.search(description))


def _stated_date(value: str, sources: _Sources) -> bool:
    """An ISO date the model wrote for a date the request says another way ("May 12th, 2022",
    "12/05/2022"): its year, its month (by name or number) and its day are all stated, and so is its
    time of day unless it is midnight. A date in slashes: ``_stated_slashed_date``."""
    match = _ISO_DATE.match(value)
    if match is None:
        return _stated_slashed_date(value, sources)
    digits = sources.digit_runs
    year, month, day = (int(g) for g in match.groups()[:3])
    date_said = year in digits and day in digits and (month in sources.months or month in digits)
    hour, minute = (int(g) if g else 0 for g in match.groups()[3:])
    return date_said and ((hour, minute) == (0, 0) or (hour, minute) in sources.times)


def _as_json_number(value: float) -> str:
    """How ``str`` prints the number a generation holds: ``2000000``, ``-74.006``, ``1e-09``."""
    return str(int(value)) if math.isfinite(value) and value == int(value) and abs(value) < 1e15 else repr(value)


def spelled_numbers(text: str) -> list[str]:
    """The numbers a text states other than as plain digits: "top three" states 3, "the last commit" 1,
    "at 8%" states 0.08 (its 8 is a number of its own), "-74.006" its sign, "$2,000,000" 2000000, "1e-9"
    and "100 million" their values. Grounding and the eval's leak count both read them here."""
    words = [str(NUMBER_WORDS[w]) for w in _LETTERS.findall(text.lower()) if w in NUMBER_WORDS]
    words += [repr(round(float(n) / 100, 10)) for n in PERCENT.findall(text)]
    words += [_as_json_number(float(n)) for n in _NEGATIVE.findall(text)]
    # "-74.0060" and "2.50" as a generation prints them
    words += [_as_json_number(float(n)) for n in _NUMBER.findall(text) if "." in n and n.endswith("0")]
    words += [_as_json_number(float(n.replace(",", ""))) for n in _THOUSANDS.findall(text)]
    words += [_as_json_number(float(n)) for n in _SCIENTIFIC.findall(text)]
    words += [_as_json_number(float(n) * _SCALES[scale.lower()]) for n, scale in _SCALED.findall(text)]
    words += ["1" for _ in ones_from_an_end(text)]  # "the last commit", "the first line"
    return words


def _clock(match: re.Match[str]) -> tuple[int, int] | None:
    """The 24-hour time a match of ``_SAID_TIME`` says; None without a colon or am/pm (a bare "9" may
    be an issue number) or past 23 o'clock."""
    hour, minute, half = match.groups()
    if not minute and not half:
        return None
    h = int(hour)
    half = (half or "").lower().replace(".", "")
    if half == "pm" and h < 12:
        h += 12
    elif half == "am" and h == 12:
        h = 0
    return (h, int(minute or 0)) if h < 24 else None


def _said_times(text: str) -> set[tuple[int, int]]:
    """The times of day a text (URLs removed) states."""
    return {time for match in _SAID_TIME.finditer(text) if (time := _clock(match)) is not None}


def _normalised_time(value: str, sources: _Sources) -> bool:
    """A time the model wrote the way the schema wants it ("9am" → ``09:00``)."""
    match = _CLOCK_VALUE.match(value)
    return match is not None and (int(match[1]), int(match[2])) in sources.times


@functools.cache
def _iana_zones() -> frozenset[str]:
    try:
        return frozenset(zoneinfo.available_timezones())
    except OSError:  # no time zone database on this system: the rule does nothing
        return frozenset()


def _place(zone: str) -> str:
    """The place a zone (or a path) names last, as said: ``America/New_York`` → ``New York``."""
    return zone.rsplit("/", 1)[-1].replace("_", " ")


@functools.cache
def _zones_by_place() -> dict[str, str]:
    """``"new york"`` → ``America/New_York``, for the places that name one zone only."""
    places: dict[str, list[str]] = {}
    for zone in _iana_zones():
        if "/" in zone and not zone.startswith(("Etc/", "SystemV/")):
            places.setdefault(_place(zone).lower(), []).append(zone)
    return {place: zones[0] for place, zones in places.items() if len(zones) == 1}


def as_time_zone(value: Any, key: str, prop: dict[str, Any]) -> Any:
    """A place the model copied into a time zone key ("from New York time" → ``New York``) becomes its
    IANA name (``America/New_York``) when the key holds a zone and the place names exactly one."""
    if not isinstance(value, str) or value in _iana_zones() or not _holds_zone(key, prop):
        return value
    return _zones_by_place().get(_normal(value), value)


def as_clock_time(value: Any, prop: dict[str, Any], sources: _Sources) -> Any:
    """A time copied as said ("3pm", "9:30 am", also with the zone it was said in: "3pm UTC") becomes
    ``15:00`` / ``09:30`` when the key asks for ``HH:MM``; and one the model wrote on the wrong half of the
    day (``05:00`` for "5pm", which grounding would drop, so the call asked for its time) becomes the one
    time the request says on that clock face."""
    if not isinstance(value, str) or "HH:MM" not in str(prop.get("description", "")):
        return value
    times = [m for m in _SAID_TIME.finditer(value) if _clock(m) is not None]
    alone = len(times) == 1 and not value[: times[0].start()].strip() and _ZONE_AFTER.fullmatch(value[times[0].end() :])
    said = _clock(times[0]) if alone else None
    if said is not None and said not in sources.times:
        face = [t for t in sources.times if (t[0] % 12, t[1]) == (said[0] % 12, said[1])]
        said = face[0] if len(face) == 1 else said
    return value if said is None else f"{said[0]:02d}:{said[1]:02d}"


_BARE_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def as_timestamp(value: Any, prop: dict[str, Any]) -> Any:
    """A date the model wrote bare (``2025-03-01`` for "since March 1st, 2025") becomes the start of that
    day, ``2025-03-01T00:00:00Z``, when the key asks for a timestamp (``format: date-time``, or a
    description that says "timestamp"): the key holds an instant, and the day the request names starts
    at midnight. A key that also takes a bare date ("YYYY-MM-DDTHH:MM:SSZ or YYYY-MM-DD") keeps it."""
    if not isinstance(value, str) or not _BARE_DATE.match(value):
        return value
    description = str(prop.get("description", ""))
    timestamp = prop.get("format") == "date-time" or "timestamp" in description.lower()
    return f"{value}T00:00:00Z" if timestamp and "YYYY-MM-DD)" not in description else value


# A glob as said: a word with a wildcard ("*.py", "test_*"); a bare extension (".py"), which as a glob
# would match only a file named ".py".
_GLOB_WORD = re.compile(r"(?<!\S)[^\s'\"]*[*?][^\s'\"]*")
_BARE_EXTENSION = re.compile(r"^\.[A-Za-z0-9]{1,10}$")
_FILE_NAME_ONLY = re.compile(r"^[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,9}$")  # "app.py", "package.json"


def _said_globs(text: str) -> set[str]:
    """The globs a text says ("*.py", "drafts/*"), without the punctuation that ends a sentence."""
    return {w.rstrip(".,;:!?)") for w in _GLOB_WORD.findall(text)}


def _takes_a_glob(key: str, prop: dict[str, Any], description: str | None) -> bool:
    """A pattern key of a tool that takes globs: its description or the key's says "glob"."""
    said_here = f"{prop.get('description', '')} {description or ''}".lower()
    return bool(re.search(r"glob|pattern", key, re.I)) and "glob" in said_here


# Files a request names by their language or format ("find all python files", "the markdown docs in
# docs"), and the extension of each; a kind with more than one usual extension (YAML, JPEG, HTML) is left
# out rather than half matched.
FILE_KINDS = {
    "python": ".py",
    "javascript": ".js",
    "typescript": ".ts",
    "markdown": ".md",
    "json": ".json",
    "toml": ".toml",
    "rust": ".rs",
    "java": ".java",
    "kotlin": ".kt",
    "ruby": ".rb",
    "php": ".php",
    "shell": ".sh",
    "bash": ".sh",
    "csv": ".csv",
    "text": ".txt",
    "log": ".log",
    "xml": ".xml",
    "sql": ".sql",
    "swift": ".swift",
    "pdf": ".pdf",
    "png": ".png",
    "svg": ".svg",
    "css": ".css",
    "notebook": ".ipynb",
    "jupyter": ".ipynb",
}
_KIND_SAID = re.compile(
    rf"\b({'|'.join(FILE_KINDS)})\s+(?:source\s+)?(?:files?|scripts?|sources?|modules?|documents?|docs|notebooks?"
    r"|images?|pictures?|configs?|logs?|sheets?|spreadsheets?)\b",
    re.I,
)


# A key that holds a folder or a path, where the word of a kind of file ("json") is no value.
_PLACE_KEY = re.compile(r"path|dir|folder|root|location|cwd", re.I)


def file_kind_globs(
    arguments: dict[str, Any], schema: dict[str, Any], description: str | None, text: str
) -> tuple[dict[str, Any], list[str]]:
    """A request such as "find all python files" names no glob, so the 0.5B model writes a regular
    expression (``.*\\.py``) or half a glob (``*.*md``), which grounding drops, and the call asked for its
    pattern. When the request names one kind of file, a glob key the request gives no glob of its own gets
    ``*.py`` (``as_globs`` then makes it recursive where the tool searches below), and a folder's key that
    holds only the kind's word (``path: "json"`` for "where are the json files") is dropped: a kind of
    file is not a folder. Returns the arguments and the keys dropped."""
    kinds = {FILE_KINDS[m.group(1).lower()]: m.group(1).lower() for m in _KIND_SAID.finditer(text)}
    if len(kinds) != 1:
        return arguments, []
    ((extension, word),) = kinds.items()
    said = _said_globs(text)
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    out = {
        k: v
        for k, v in arguments.items()
        if not (isinstance(v, str) and v.lower() == word and _PLACE_KEY.search(k))  # ``language: python`` stays
    }
    for key, prop in props.items():
        value = out.get(key)
        if not isinstance(prop, dict) or prop.get("type") != "string" or not _takes_a_glob(key, prop, description):
            continue
        if value not in said:
            out[key] = "*" + extension
    return out, [k for k in arguments if k not in out]


def as_globs(
    arguments: dict[str, Any], schema: dict[str, Any], description: str | None, text: str
) -> tuple[dict[str, Any], list[str]]:
    """A pattern key of a tool that takes globs (its description or the key's says "glob") gets a glob:
    "files ending in .py" makes the 0.5B model write ``.py``, which matches no file, so it becomes
    ``*.py`` (as does the model's own ``*.py`` for it), or ``**/*.py`` when the tool searches
    recursively (a glob without ``/`` matches only the top folder), as a file name does (``**/app.py``
    for "files named app.py"); a wildcard the model cut short (``*`` for "find *.py files", which
    matches every file) becomes the one glob the request says that starts with it; and a list of globs
    keeps only those the request says (the model fills ``excludePatterns`` with ``*.md`` for "every .md
    file in docs", which would exclude every match).
    Returns the arguments and the keys dropped."""
    props = schema.get("properties") or {}
    said = _said_globs(text)
    out: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in arguments.items():
        prop = props.get(key) or {}
        said_here = f"{prop.get('description', '')} {description or ''}".lower()
        if not _takes_a_glob(key, prop, description):
            out[key] = value
        elif isinstance(value, list):
            kept = [v for v in value if not isinstance(v, str) or not _GLOB_WORD.fullmatch(v) or v in said]
            if kept or not value or key in (schema.get("required") or []):
                out[key] = kept
            if kept != value:
                dropped.append(key)
        elif isinstance(value, str) and value not in said and _BARE_EXTENSION.match(value.removeprefix("*")):
            out[key] = ("**/*" if "recursive" in said_here else "*") + value.removeprefix("*")
        elif isinstance(value, str) and "recursive" in said_here and _FILE_NAME_ONLY.match(value):
            out[key] = "**/" + value  # "files named app.py": anywhere below, not only in the top folder
        elif isinstance(value, str) and value not in said:
            longer = [w for w in said if w.startswith(value) and w != value]
            out[key] = longer[0] if len(longer) == 1 else value
        else:
            out[key] = value
    return out, dropped


# A key that leaves things out (``excludePatterns``, ``excludeTags``, ``skip_users``), and the words with
# which a request asks to leave something out.
_EXCLUDING_KEY = re.compile(r"exclu|ignor|skip|omit|blacklist|blocklist|deny", re.I)
_EXCLUDING_SAID = re.compile(
    r"\b(?:except|exclud\w*|without|ignor\w*|skip\w*|omit\w*|leav(?:e|ing) out|other than|apart from"
    r"|but not|not (?:in|under|inside|from|matching|named)|minus)\b",
    re.I,
)


def excluded_when_said(arguments: dict[str, Any], text: str) -> tuple[dict[str, Any], list[str]]:
    """Text for a key that leaves things out stays only when the request asks to leave something out:
    the 0.5B model put the name the user looks for there ("which files have 'app' in the name" sent
    ``excludePatterns: ["app"]``, hiding the very file), or made up a list (``["*.pyc", "*.log"]``).
    A flag or a number (``skip: 20``, a page offset) is grounded as any other."""
    if _EXCLUDING_SAID.search(text):
        return arguments, []

    def leaves_out(key: str, value: Any) -> bool:
        texts = value if isinstance(value, list) else [value]
        return bool(_EXCLUDING_KEY.search(key)) and bool(texts) and all(isinstance(v, str) for v in texts)

    kept = {k: v for k, v in arguments.items() if not leaves_out(k, v)}
    return kept, [k for k in arguments if k not in kept]


# A number key that holds a rate as a fraction: named or described as a rate, return, yield or ratio, or
# "in decimal", and not "as a percentage".
_RATE_KEY = re.compile(r"rate|return|yield|ratio|decimal|fraction", re.I)
_PERCENT_KEY = re.compile(r"percent|pct", re.I)


def as_fraction(value: Any, key: str, prop: dict[str, Any], sources: _Sources) -> Any:
    """A percentage copied as said ("a return of 7%" → ``7``) becomes its fraction (``0.07``) when the key
    holds a rate: APIs take rates, returns and yields as decimals unless they say "percentage"."""
    if isinstance(value, bool) or not isinstance(value, int | float) or prop.get("type") not in ("number", None):
        return value
    said = f"{key} {prop.get('description', '')}"
    if not _RATE_KEY.search(said) or _PERCENT_KEY.search(said) or not 0 < value <= 100:
        return value
    return round(value / 100, 10) if float(value) in sources.percents else value


def _holds_zone(key: str, prop: dict[str, Any]) -> bool:
    """The key holds a time zone: its name or its description says so."""
    return bool(_ZONE_KEY.search(f"{key} {prop.get('description', '')}"))


def code_stated(value: str, text: str) -> bool:
    """Whether ``value`` is a code in capitals for words ``text`` spells out ("Canadian dollars" → CAD;
    ``abbreviates``)."""
    return bool(_ACRONYM.fullmatch(value)) and abbreviates(value, _LETTERS.findall(text.lower()))


def slashed_date(value: str) -> bool:
    """Whether ``value`` is a date in slashes, dots or dashes around its year ("10/12/2022")."""
    return bool(_SLASHED_DATE.match(value))


def zone_stated(value: str, text: str) -> bool:
    """Whether ``value`` is an IANA zone whose place ``text`` says (for the eval's leak count)."""
    return _normalised_zone(value, _Sources(text))


def time_stated(value: str, text: str) -> bool:
    """Whether ``value`` is a clock time ``text`` says in another form ("3pm" → ``15:00``; for the
    eval's leak count)."""
    return _normalised_time(value, _Sources(text))


def _normalised_zone(value: str, sources: _Sources) -> bool:
    """A time zone the model normalised ("in Tokyo" → ``Asia/Tokyo``): a real IANA name whose place the
    sources state. A zone the request does not place ("my time", "another zone") stays ungrounded."""
    if "/" not in value or value not in _iana_zones():
        return False
    place = _run_tokens(_place(value))
    return bool(place) and sources.states_run(place)


def _numbers_in(value: Any) -> Counter[str]:
    """The numbers a raw object's numeric values use, however deep."""
    if isinstance(value, bool):
        return Counter()
    if isinstance(value, int | float):
        return Counter([str(value)])
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return sum((_numbers_in(v) for v in items), Counter())


def _first_use(value: Any, sources: _Sources, used: dict[str, int]) -> bool:
    """A number the sources state once fills one argument, not two (the 0.5B model repeats an id into
    every numeric slot, or into a string one: ``run_id: 4433221100, workflow_id: "4433221100"``, ``repo:
    "512", pullNumber: 512``). Numeric slots have the first claim (``used`` starts with their uses); a
    string of digits gets a number only when the sources state it more often than they use it."""
    if isinstance(value, bool):
        return True
    if isinstance(value, str) and value.isdigit():
        used[value] = used.get(value, 0) + 1
        return used[value] <= max(sources.numbers[value], 1)
    if not isinstance(value, int | float):
        return True
    text = str(value)
    used[text] = used.get(text, 0) + 1
    return used[text] <= max(sources.numbers[text], 1)


def as_stated(value: Any, prop: dict[str, Any], sources: _Sources) -> Any:
    """A string the request states in other letters' case, spelt as the request spells it: "Rename the
    label 'bug' to 'type: bug'" came back as ``Type: bug``, a label nobody asked for. An enum's value
    is the schema's, not the request's."""
    if not isinstance(value, str) or len(value) < 2 or isinstance(prop.get("enum"), list) or value in sources.raw:
        return value
    said = re.search(rf"(?<!\w){re.escape(value)}(?!\w)", sources.raw, re.I)
    return said.group(0) if said else value


def tidy(value: Any, name: str) -> Any:
    """Trailing sentence punctuation is not part of an identifier (``ivan-p.`` → ``ivan-p``); a value that
    is nothing else (the path ``.``) is kept whole."""
    if isinstance(value, str) and not FREE_TEXT.search(name.lower()):
        return value.rstrip(".,;:!?") or value
    if isinstance(value, list):
        return [tidy(v, name) for v in value]
    return value


def ground(
    raw: dict[str, Any], schema: dict[str, Any], text: str, asked: str | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Keep the values the request or window supply; return them and the names of the dropped ones.

    ``asked``: ``text`` without what the request pastes (``pasted.split_pasted``), the only source of an
    optional value but prose. A pasted log's numbers, ids and words are what the request is about, not
    values it asks for: the 0.5B model took ``issue_number: 8`` from a Docker log's step "#8", a ``sha``
    from a curl request id and ``reaction: "-1"`` from a diff. A required value may still come from it
    ("what is this commit? <git log>"), and prose keys are where the material goes."""
    sources = _Sources(text)
    optional_sources = sources if asked is None else _Sources(asked)
    # A list's items come from the words outside any owner/repo, or are one whole: "lumen-labs/lumen-ui"
    # names no labels ``lumen`` or ``lumen-ui`` (the 0.5B model lists them after the ones the request
    # says), while "the acme-corp/backend-team team" is a reviewer.
    unlinked = URL_PATTERN.sub(" ", text)
    beside = _Sources(REPO_PATTERN.sub(" ", unlinked))
    stated_slugs = set(REPO_PATTERN.findall(unlinked))
    dropped: list[str] = []
    used_numbers: dict[str, int] = {}
    used_by_strings: dict[str, int] = dict(_numbers_in(raw))
    named = named_keys(schema, text)

    def walk(value: dict[str, Any], node: dict[str, Any], path: str, in_list: bool = False) -> dict[str, Any]:
        props = node.get("properties") or {}
        required = set(node.get("required") or [])
        kept: dict[str, Any] = {}
        for key, item in value.items():
            prop = _resolve(props.get(key) or {}, schema)
            item = as_time_zone(as_stated(tidy(item, key), prop, sources), key, prop)
            item = as_fraction(as_timestamp(as_clock_time(item, prop, sources), prop), key, prop, sources)
            where = f"{path}{key}"
            if isinstance(item, dict):
                inner = walk(item, prop, where + ".")
                if inner and set(prop.get("required") or []) <= set(inner):
                    kept[key] = inner
                else:
                    dropped.append(where)
            elif isinstance(item, list):
                item_schema = _resolve(prop.get("items") or {}, schema)
                # an object in a list is grounded key by key, like one outside it: ``fields: [{field_id,
                # delete, date_value}]`` must not carry a date the request never gave
                item = [_grounded_object(v, item_schema, f"{where}[{n}].") for n, v in enumerate(item)]
                items = [
                    v
                    for v in item
                    if v is not None
                    and _grounded(v, item_schema, key, False, optional_sources)
                    and (
                        not isinstance(v, str)
                        or _REPOSITORY_KEY.search(key)
                        or v in stated_slugs
                        or _grounded(v, {}, key, False, beside)
                    )
                ]
                if items:
                    kept[key] = items
                elif in_list and key in required and not prop.get("minItems"):
                    # a list item cannot be asked for part by part, and what the model invented for its
                    # required list is gone: "create an entity Alice of type person" sends ``observations:
                    # []``, not ``["Alice is a person."]`` and not nothing
                    kept[key] = []
                    dropped.extend([where] if item else [])
                else:
                    dropped.append(where)
            elif in_list and (key in required or isinstance(item, bool)) and not placeholder(item, sources.text):
                kept[key] = item  # a list item cannot be asked for part by part: its required keys and flags stay
            elif (
                _grounded(
                    item,
                    prop,
                    key,
                    key in required or (isinstance(item, bool) and key in named),
                    sources if key in required or PROSE.search(key.lower()) else optional_sources,
                )
                and _first_use(item, sources, used_by_strings if isinstance(item, str) else used_numbers)
                and (key in required or not _unasked_prose(item, key, named, sources))
            ):
                kept[key] = item
            else:
                dropped.append(where)
        return kept

    def _grounded_object(value: Any, node: dict[str, Any], path: str) -> Any:
        """A list item: an object keeps its required keys (unless a placeholder), its flags and its grounded
        optional values (an invented date, id or text is dropped); any other value is returned as it is,
        for the list's own checks."""
        if not isinstance(value, dict):
            return value
        inner = walk(value, node, path, in_list=True)
        return inner if inner and set(node.get("required") or []) <= set(inner) else None

    return walk(raw, schema, ""), dropped


_REPOSITORY_KEY = re.compile(r"owner|repo|org", re.IGNORECASE)
# Keys that hold an account or repository name, and the shape every forge gives those names (letters,
# digits, ``-``, ``_``, ``.``; GitLab's groups nest with ``/``): no spaces, no ``&``.
ACCOUNT_KEYS = frozenset({"owner", "repo", "repository", "org", "organization"})
ACCOUNT_NAME = re.compile(r"[\w.-]+(?:/[\w.-]+)*")


def _is_the_request(value: str, sources: _Sources) -> bool:
    """The value is the whole request (of three words or more), not a part of it."""
    return len(_words(value)) >= 3 and _normal(value).rstrip(".!?") == sources.text.rstrip(".!?")


def _unasked_prose(value: Any, key: str, named: set[str], sources: _Sources) -> bool:
    """Prose for an optional key that the request neither quotes nor asks for by the key's name."""
    return isinstance(value, str) and bool(PROSE.search(key.lower())) and key not in named and not sources.quotes(value)


# Where a value goes or comes from, by the key's name and by the word the request says before it: "and to
# Paris?" fills ``target_timezone``, "from main" ``source_branch``, "files named app.py" a search's
# ``pattern`` rather than its ``path``.
_KEY_ROLES = {"target": "to", "to": "to", "destination": "to", "dest": "to", "dst": "to"}
_KEY_ROLES |= {"source": "from", "from": "from", "origin": "from", "src": "from"}
_KEY_ROLES |= {"name": "name", "filename": "name", "pattern": "name"}
_SAID_ROLES = {"to": "to", "into": "to", "toward": "to", "towards": "to", "from": "from"}
_SAID_ROLES |= {"named": "name", "called": "name"}


def _said_role(value: str, text: str) -> str | None:
    """The role the request's word before ``value`` gives it ("to", "from", "name"), or None. A zone or a path is
    also found by its last part (``Europe/Paris`` as "Paris", ``America/New_York`` as "New York")."""
    for mention in dict.fromkeys((value, _place(value))):
        if not mention.strip():
            continue
        found = re.search(rf"\b(\w+)\s+(?:the\s+)?{re.escape(mention)}(?!\w)", text, re.I)
        if found:
            return _SAID_ROLES.get(found.group(1).lower())
    return None


def _claim_order(arguments: dict[str, Any], text: str) -> list[str]:
    """The keys in the order they claim a value said once: one whose role the request gives the value
    first, one of the opposite role last, the schema's order otherwise."""

    def rank(key: str) -> int:
        value = arguments[key]
        roles = {_KEY_ROLES[w] for w in split_identifier(key).lower().split() if w in _KEY_ROLES}
        said = _said_role(value, text) if isinstance(value, str) and len(roles) == 1 else None
        return 1 if said is None else 0 if said in roles else 2

    return sorted(arguments, key=rank)


def said_once_used_once(
    arguments: dict[str, Any], text: str, required: Collection[str] = ()
) -> tuple[dict[str, Any], list[str]]:
    """A name, path or pattern the request states once fills one argument, as a number does: the 0.5B
    model copies a search's ``pattern: "*.py"`` into ``excludePatterns`` too, which would exclude every
    match. The first key keeps it, or the key whose role the word before it says ("and to Paris?" →
    ``target_timezone``, not ``source_timezone``). Run after placement, so that a value the model put
    under the wrong key first (``repo: "main"``, moved away by ``place_stated``) does not claim it. Free text may repeat
    what another free text says (a title inside a body), and an empty list stays; but optional free text
    that is only a copy of a name another key holds says nothing of its own ("new repo 'scratchpad'" got
    ``description: "scratchpad"`` beside ``name``), unless ``required``."""
    said = _normal(text)
    used: Counter[str] = Counter()

    def first_use(value: Any, key: str) -> bool:
        if not isinstance(value, str) or value.isdigit() or FREE_TEXT.search(key.lower()):
            return True
        used[normal := _normal(value)] += 1
        return used[normal] <= max(said.count(normal), 1)

    # a key of one value claims it before a list does: a list the model over-filled (``parties: [John,
    # Alice, California]``) loses the place to ``location: California``
    claims = _claim_order(arguments, text)
    kept_scalars = {k for k in claims if not isinstance(arguments[k], list) and first_use(arguments[k], k)}
    lists = {k: [v for v in value if first_use(v, k)] for k, value in arguments.items() if isinstance(value, list)}
    copies = {
        k
        for k in kept_scalars
        if k not in required
        and isinstance(arguments[k], str)
        and FREE_TEXT.search(k.lower())
        and used[normal := _normal(arguments[k])] >= max(said.count(normal), 1)
    }
    kept_scalars -= copies
    kept = {
        k: lists.get(k, v) for k, v in arguments.items() if k in kept_scalars or (k in lists and (lists[k] or not v))
    }
    return kept, [k for k in arguments if k not in kept]
