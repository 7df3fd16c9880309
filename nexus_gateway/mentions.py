"""What a request names of a tool's schema: the optional keys it mentions ("label it bug" → ``labels``)
and the enum values it says in words ("rerun just the jobs that failed" → ``rerun_failed_jobs``).

Argument generation uses it to make the decoder write keys the 0.5B model would skip and to narrow an
enum to the values said; the compressed IR uses it to show the optional parameters a request needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .affordance import URL_PATTERN
from .lexical import (
    FILE_NAME,
    FROM_ROOT,
    NOT_INSIDE_A_NAME,
    NUMBER_WORDS,
    STOPWORDS,
    one_edit_apart,
    split_identifier,
    stem,
    tokenize,
)

_WORDS = re.compile(r"[a-z0-9]+")
# Keys that hold free text (a body, a title, a search query): the home of a quoted span.
FREE_TEXT = re.compile(r"body|description|content|message|text|comment|title|query|summary|reason|note")
_QUOTED = re.compile(r"""(?:^|(?<=[\s(:]))(['"‘“])(.{2,}?)['"’”](?=$|[\s.,;:!?)])""")


def quoted_spans(intent: str) -> list[str]:
    """Text the request quotes ('Thanks for the report!'): a value, word for word, of some argument."""
    return [m.group(2) for m in _QUOTED.finditer(intent)]


def without_quotes(text: str) -> str:
    """The text with every quoted span blanked: quoted text is a value, not an instruction."""
    for span in quoted_spans(text):
        text = text.replace(span, " ")
    return text


_ROLE_LEAD = re.compile(r"(?:\b(?:to|as|of|is|be)|[:=])\s*$", re.IGNORECASE)
_LAST_WORD = re.compile(r"([A-Za-z]{4,})\s*$")
_LISTED_QUOTE = re.compile(r"""\s*(?:,|\band\b|\bor\b)\s*(?:and\s+|or\s+)?['"‘“]""")


def quoted_roles(intent: str) -> list[tuple[str, str]]:
    """Each quoted span with the word that says what it is: "set the description to 'Implements …'" →
    ``("Implements …", "description")``, "commit message 'fix typo'" → ``("fix typo", "message")``,
    "titled 'Crash …'" → ``("Crash …", "titled")``. Spans without such a word are left out, and so
    is a list of quotes ("variables 'Age', 'Income' and 'Education'"): the word names them all."""
    roles = []
    for match in _QUOTED.finditer(intent):
        if _LISTED_QUOTE.match(intent, match.end()):
            continue  # the head of a list ("predictors 'Age', 'Income' and 'Education'") is one of several
        before = _ROLE_LEAD.sub("", intent[: match.start()].rstrip()).rstrip()
        word = _LAST_WORD.search(before)
        if word and word.group(1).lower() not in STOPWORDS:
            roles.append((match.group(2), word.group(1).lower()))
    return roles


# Key words that name the place of a value, not the value: every GitHub call has an owner and a repo,
# and "issue 12" names an issue, not the optional `number` filter of a search.
GENERIC_KEY_WORDS = frozenset(
    ["owner", "repo", "name", "number", "type", "page", "per", "sort", "order", "direction", "method", "query"]
)


def named_keys(schema: dict[str, Any], intent: str) -> set[str]:
    """Optional top-level keys the request names: by a word of the key ("label it bug" → ``labels``,
    "line 41" → ``line``) or by one of its enum values ("as a duplicate" → ``state_reason``). The 0.5B
    model often closes the object before such a key; the decoder writes them before it may close, and
    grounding still drops a value the request does not supply."""
    said = sayer(intent)
    names = key_word_namer(intent, said)

    def by_words(words: list[str]) -> bool:
        return bool(words) and not any(w in GENERIC_KEY_WORDS for w in words) and all(names(w) for w in words)

    return _keys_named(schema, by_words, sayer(affirmed(intent, keep_quotes=True))) | set(said_flags(schema, intent))


def key_word_namer(intent: str, said: Callable[[str], bool]) -> Callable[[str], bool]:
    """A key word is named when said, or when it begins with a request word of 5+ letters: "assign"
    names ``assignees``."""
    stems = [stem(w) for w in _WORDS.findall(intent.lower()) if len(w) >= 5]
    return lambda word: said(word) or any(word.startswith(s) for s in stems)


def identifier_words(identifier: str) -> list[str]:
    """``issue_number`` → ``["issue", "number"]``, ``pullNumber`` → ``["pull", "number"]``."""
    return _WORDS.findall(split_identifier(identifier).lower())


def _keys_named(schema: dict[str, Any], by_words: Callable[[list[str]], bool], said: Callable[[str], bool]) -> set[str]:
    """Optional keys whose words (3+ letters) pass ``by_words`` or one of whose enum values is said."""
    keys = set()
    for key, raw in optional_properties(schema):
        key_words = [w for w in identifier_words(key) if len(w) >= 3]
        enum = raw.get("enum")
        if by_words(key_words) or (isinstance(enum, list) and any(names_value(v, said) for v in enum)):
            keys.add(key)
    return keys


def named_values(schema: dict[str, Any], intent: str) -> dict[str, list[Any]]:
    """Top-level enum keys with the values the request says in words: "rerun just the jobs that
    failed" → ``method: rerun_failed_jobs``, "close it as a duplicate" → ``state_reason: duplicate``.
    The 0.5B model picks ``cancel_workflow_run`` or ``completed`` there; the decoder chooses among the
    named values only."""
    wanted = affirmed(intent, keep_quotes=True)
    said, typed, whole = sayer(wanted), sayer(wanted, typos=True), sayer(intent)
    named: dict[str, list[Any]] = dict(said_flags(schema, intent))
    required = set(schema.get("required") or [])
    for key, raw in properties(schema):
        enum = raw.get("enum")
        if isinstance(enum, list):
            values = [v for v in enum if names_value(v, said) or (_negative(v) and names_value(v, whole))]
            values = values or (best_said(enum, typed) if key in required else [])
            if values:
                named[key] = values
    return named


# What a request says it does not want: "the general comments (not the code review ones)", "don't
# submit anything yet". Its words name no value.
_NEGATED = re.compile(
    r"(?:\b(?:not|never|without|except)\b|n't\b)(?:(?!\b(?:and|but|or|so|then)\b)[^,.;:!?()\n])*", re.IGNORECASE
)


def without_negations(text: str) -> str:
    return _NEGATED.sub(" ", text)


# "Open an issue …" asks to create one, not for ``state: open``
_OPEN_SOMETHING = re.compile(r"\bopen(?=\s+(?:a|an|new|up\s+a)\b)", re.IGNORECASE)


def affirmed(text: str, keep_quotes: bool = False) -> str:
    """The text whose words may name a value: outside what the request says it does not want, without
    "open" used as the verb of creating something ("Open an issue titled …"), and outside quotes unless
    ``keep_quotes`` ("with the status 'concluded'" names ``concluded`` to the decoder; grounding, which
    must not read "Closes #130" in a quoted body as ``state: closed``, accepts a quoted value only whole)."""
    return _OPEN_SOMETHING.sub(" ", without_negations(text if keep_quotes else without_quotes(text)))


def _negative(value: Any) -> bool:
    """A value that itself says "not" (``not_planned``) is said by a negation."""
    return isinstance(value, str) and "not" in _WORDS.findall(split_identifier(value).lower())


def named_items(enum: list[Any], intent: str) -> list[Any]:
    """The items of a list-of-choices parameter (``fields``) the request names: "just tag names and
    publish dates" → ``tag_name``, ``published_at`` (a value's function words, "at", need not be
    said), not ``name``, whose words a longer named item says. A value of several words is named by
    those words said together."""
    spoken = [w for w in _WORDS.findall(affirmed(intent).lower()) if w not in STOPWORDS]
    sayers = [sayer(w) for w in spoken]
    words = {
        value: [w for w in _WORDS.findall(split_identifier(value).lower()) if w not in STOPWORDS]
        for value in enum
        if isinstance(value, str) and len(value) >= 4
    }
    named = [v for v, ws in words.items() if ws and _said_as_phrase(ws, sayers)]
    return [v for v in named if not any(set(words[v]) < set(words[o]) for o in named)]


def _said_as_phrase(words: list[str], sayers: list[Callable[[str], bool]]) -> bool:
    """The words said one after another (function words aside): "violin lessons" says ``Violin
    Lessons``, "a guitar shop that offers violin lessons" does not say ``Guitar Lessons``."""
    return any(
        all(_says_value_word(word, sayers[start + i]) for i, word in enumerate(words))
        for start in range(len(sayers) - len(words) + 1)
    )


def best_said(enum: list[Any], said: Callable[[str], bool]) -> list[Any]:
    """For a required choice no value of which the request says whole: the values most of whose words
    it says, if at least half ("what fields does project 5 have" → ``list_project_fields`` and
    ``get_project_field``, not ``list_project_items``). The model must choose one anyway; this keeps it
    from the values the request does not describe."""
    shares: dict[int, float] = {}
    for index, value in enumerate(enum):
        words = _WORDS.findall(split_identifier(value).lower()) if isinstance(value, str) else []
        if words:
            shares[index] = sum(_says_value_word(w, said) for w in words) / len(words)
    best = max(shares.values(), default=0.0)
    return [enum[i] for i, share in shares.items() if share == best] if best >= 0.5 else []


# A boolean's description that says what each value means: "Mark pull request as draft (true) or ready for
# review (false)", "Set to true to convert to draft, false to mark as ready for review".
_FLAG_MEANINGS = re.compile(r"([^,;.()]+?)\s*\((true|false)\)|\b(true|false),?\s+to\s+([^,;.()]+)", re.IGNORECASE)


def said_flags(schema: dict[str, Any], intent: str) -> dict[str, list[bool]]:
    """Top-level booleans whose description gives each value a meaning, and the one meaning the request
    says: "mark it ready for review" → ``draft: false``; or, without such a description, the opposite of
    the flag's one word ("public" → ``private: false``). The flag's own name is not said there, so the
    model writes ``draft: true`` or nothing."""
    said, asserted = sayer(intent), sayer(affirmed(intent))
    flags: dict[str, list[bool]] = {}
    for key, raw in properties(schema):
        if raw.get("type") != "boolean":
            continue
        meanings: dict[bool, list[str]] = {}
        for match in _FLAG_MEANINGS.finditer(str(raw.get("description", ""))):
            phrase, value = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
            phrase = re.sub(r"^(?:or|and)\s+", "", phrase.strip(), flags=re.IGNORECASE)
            meanings[value.lower() == "true"] = [w for w in _WORDS.findall(phrase.lower()) if w not in STOPWORDS]
        chosen = [value for value, words in meanings.items() if words and all(said(w) for w in words)]
        if len(meanings) == 2 and len(chosen) == 1:
            flags[key] = chosen
        elif not meanings and _says_the_opposite(key, asserted):
            flags[key] = [False]
        elif False not in meanings:
            words = meanings.get(True) or _meaning_of_true(str(raw.get("description", "")))
            if words and all(asserted(w) for w in words):
                flags[key] = [True]
    return flags


_TRUE_LEAD = re.compile(r"^\s*(?:if|when)\s+(?:set\s+to\s+)?true,?\s+(.*)", re.IGNORECASE | re.DOTALL)
_STATE_LEAD = re.compile(r"^\s*(?:whether|the|an?|is|if|when)\b", re.IGNORECASE)


def _meaning_of_true(description: str) -> list[str]:
    """The words of what ``true`` does, where a flag's description says only that: "If true, reparent
    the sub-issue …", or a short phrase of four words at most, "Initialize with README", "Create as draft
    PR", "Allow maintainer edits". A description of a state ("Whether the gist is public") gives none."""
    lead = _TRUE_LEAD.match(description)
    if not lead and _STATE_LEAD.match(description):
        return []
    clause = re.split(r"[.;,(]", lead.group(1) if lead else description)[0]
    words = [w for w in _WORDS.findall(clause.lower()) if len(w) >= 3 and w not in STOPWORDS]
    return words if lead or len(words) <= 4 else []


# Flags named for one side of a pair whose other side people say: "public pls" → ``private: false``.
FLAG_OPPOSITES = {
    "private": "public",
    "public": "private",
    "hidden": "visible",
    "visible": "hidden",
    "enabled": "disabled",
    "disabled": "enabled",
    "locked": "unlocked",
}


def _says_the_opposite(key: str, said: Callable[[str], bool]) -> bool:
    """The flag's one word has an opposite that the request says, and the request does not say the word."""
    words = [w for w in identifier_words(key) if w not in ("is", "set")]
    return len(words) == 1 and words[0] in FLAG_OPPOSITES and said(FLAG_OPPOSITES[words[0]]) and not said(words[0])


# The verbs of operation enums (``create_project``, ``update``) and the everyday words people use for them
# instead: "set up a new project", "change the title". Generic CRUD vocabulary, no tool's own words; not
# "start", which is as often "start over" as "start a new one" (measured in docs/arguments.md).
VERB_SYNONYMS = {
    "create": ("new", "add", "make"),
    "update": ("change", "edit", "modify", "rename", "replace"),
    "delete": ("remove", "drop", "erase"),
    "ignore": ("mute", "silence"),
    # an approval is a review: "has anyone approved PR 71234 yet?" asks for ``get_reviews``
    "reviews": ("approve", "approved", "approval", "approvals"),
}


# Sort directions, said as the order people want: "oldest first", "most stars first", "newest first".
ORDER_SYNONYMS = {
    "asc": ("oldest", "earliest", "ascending", "least", "fewest", "lowest", "smallest"),
    "desc": ("newest", "latest", "descending", "recent", "most", "highest", "largest", "biggest"),
}


def names_value(value: Any, said: Callable[[str], bool]) -> bool:
    """An enum value the request says in words ("false positive" for ``false_positive``; "a new project"
    for ``create_project``)."""
    if isinstance(value, str) and value.lower() in ORDER_SYNONYMS:
        return any(said(s) for s in ORDER_SYNONYMS[value.lower()])
    words = _WORDS.findall(split_identifier(value).lower()) if isinstance(value, str) and len(value) >= 4 else []
    return bool(words) and all(_says_value_word(w, said) for w in words)


def _says_value_word(word: str, said: Callable[[str], bool]) -> bool:
    """A word of an enum value, said as itself or by an everyday verb for it ("new" for ``create``)."""
    return said(word) or any(said(s) for s in VERB_SYNONYMS.get(word, ()))


# Everyday words for the words of boolean flags: "just the jobs that failed" asks for ``failed_only``.
_KEY_WORD_SYNONYMS = {"only": frozenset(["just", "solely", "exclusively"])}


# States said only as themselves: "open" is the state, "opened" the event ("issues opened or touched
# since March", "the pull requests nora-t has opened" ask for no ``state: open``, which would leave out
# the ones closed since). For "closed", "merged", "dismissed" the state and the event are one word.
_STATE_WORDS = {"open": frozenset(("open", "opens"))}


def sayer(intent: str, typos: bool = False) -> Callable[[str], bool]:
    """Does the request say this word (its stem, or a word it begins with, for 4+ letters; with
    ``typos``, also a word of 5+ letters one edit away)? A past participle counts as its verb: enum
    values are states ("closed", "dismissed", "fixed") that requests say as commands ("close it",
    "dismiss the alert"), except a state said otherwise than its event (``_STATE_WORDS``)."""
    words = set(_WORDS.findall(intent.lower()))
    words |= {key for key, synonyms in _KEY_WORD_SYNONYMS.items() if words & synonyms}
    stems = {stem(w) for w in words}

    def said(word: str) -> bool:
        if word.lower() in _STATE_WORDS:
            return bool(words & _STATE_WORDS[word.lower()])
        root = stem(word)
        if root in stems or (len(root) >= 4 and any(w.startswith(root) for w in words)):
            return True
        # a silent e drops before -ing: "including" says ``include``, "updating" ``update``
        if len(root) >= 6 and root.endswith("e") and any(w.startswith(root[:-1] + "ing") for w in words):
            return True
        if typos and len(word) >= 5 and any(one_edit_apart(word, w) for w in words):
            return True  # typed requests: "feild" says ``field``
        past = len(root) >= 5 and root.endswith("ed")  # "failing jobs" says ``failed``
        if past and len(root) >= 6 and any(w.startswith(root[:-2]) for w in words):
            return True  # and its noun: "by creation date" says ``created``, "the failure" ``failed``
        return past and bool({root[:-1], root[:-2]} & (words | stems))

    return said


def properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The schema's top-level keys with their (dict) property schemas."""
    props = schema.get("properties") or {}
    items = props.items() if isinstance(props, dict) else ()
    return [(key, raw) for key, raw in items if isinstance(raw, dict)]


def optional_properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The schema's top-level keys that are not required, with their (dict) property schemas."""
    required = set(schema.get("required") or [])
    return [(key, raw) for key, raw in properties(schema) if key not in required]


def mentioned_keys(schema: dict[str, Any], intent: str, ignore: frozenset[str] = frozenset()) -> set[str]:
    """Optional top-level keys a request may need, more loosely than ``named_keys``: any word of the key
    (not only all of them, and not one of ``ignore``, the tool's own name words: "issue" in a request for
    ``issue_write`` names no ``issue_fields``) or one of its enum values. For what the model is shown
    (the compressed IR), not what the decoder makes it write."""
    said = sayer(intent)
    names = key_word_namer(intent, said)

    def by_words(words: list[str]) -> bool:
        return any(names(w) for w in words if w not in GENERIC_KEY_WORDS and w not in ignore)

    return _keys_named(schema, by_words, said)


def free_text_keys(schema: dict[str, Any]) -> set[str]:
    """Optional top-level string keys that hold prose (a body, a title, a message)."""
    return {
        key
        for key, raw in optional_properties(schema)
        if raw.get("type") == "string" and "enum" not in raw and FREE_TEXT.search(key.lower())
    }


# A number that stands as a value ("issue 45", "#88", "top 5", "run 11223344556"), or with its unit
# ("a 1kg ice block", "50mH"), not one inside a date, a version ("4.x", "v11.0.x", "3.12"), a URL, an
# identifier ("5b1e9f0c") or quoted text, nor a time glued to its am or pm ("10am", which ``grounding``
# reads as a time; "at 7 p.m." states a 7, as it always did).
_GLUED_UNIT = re.compile(r"[^\W\d_]+")
_STATED_NUMBER = re.compile(r"(?<![\w.#/:-])#?(\d+)(?![^\W\d_]*+[\w/-]|:\d|\.\w|[ap]\.?m\b)")
# A file path: a file name ("pyproject.toml", ``affordance.FILE_NAME``), a path from the root or home
# ("/var/log", "~/projects") or one of three or more parts ("src/auth/session"); two parts ("fix/tooltip",
# "octo-org/app") are as often a branch or a repository.
_STATED_PATH = re.compile(
    rf"{FILE_NAME}|{NOT_INSIDE_A_NAME}(?:{FROM_ROOT}[\w.-]+(?:/[\w.-]+)*|[\w.-]+(?:/[\w.-]+){{2,}})(?<!\.)(?![\w/])"
)


# A branch the request names: "the develop branch", "on branch feat/onboarding", "fix/tooltip -> develop",
# "a PR against develop", "merge it into main". Words that only describe a branch ("the new branch",
# "the default branch") are no name.
_BRANCH_NAME = r"([A-Za-z0-9][\w./-]*\w|\w)"
# "fix/tooltip -> develop": a pull request's two branches, from and into
_FROM_TO = re.compile(rf"(?<![\w./-]){_BRANCH_NAME}\s*(?:->|→|=>)\s*{_BRANCH_NAME}(?![\w./-])")
_BRANCH_PHRASES = [
    # "X branch" after an article or a preposition ("on the develop branch"), or X shaped like a branch
    # name ("release/2.4 branch"); not a verb ("delete branch x", "list branches")
    re.compile(rf"\b(?:the|on|from|to|into|of|my|our|its|your|their)\s+{_BRANCH_NAME}\s+branch\b", re.IGNORECASE),
    re.compile(r"(?<![\w./-])([A-Za-z0-9][\w./-]*[/.\d-][\w./-]*\w)\s+branch\b", re.IGNORECASE),
    re.compile(rf"\bbranch\s+(?:named\s+|called\s+)?{_BRANCH_NAME}(?![\w./-])", re.IGNORECASE),
    _FROM_TO,
    re.compile(rf"\b(?:against|into|onto)\s+{_BRANCH_NAME}(?![\w./-])", re.IGNORECASE),
]
_NOT_BRANCH_TEXT = """the a an new this that same default my your our its their another which what each every one any
all base head feature remote local current other separate release to in on of from for and or with is was it them
me pr prs pull request issue repo repository into onto against"""
_NOT_BRANCH_NAMES = frozenset(_NOT_BRANCH_TEXT.split())


def _may_name_a_branch(word: str) -> bool:
    """Not a function word, and not a participle ("on that branch containing …")."""
    return word.lower() not in _NOT_BRANCH_NAMES and not re.fullmatch(r"[a-z]+(?:ing|ed)", word)


def stated_branches(text: str) -> list[str]:
    """Branch names a request states (``develop``, ``release/2.4``), in order."""
    found: list[str] = []
    for pattern in _BRANCH_PHRASES:
        for match in pattern.finditer(text):
            found += [name for name in match.groups() if name and _may_name_a_branch(name)]
    return [name for name in dict.fromkeys(found) if not name.isdigit()]


# The words just before a stated number say whose number it is ("issue 45", "run 9876543210", "issue ID
# 2718281828", "project 2"); "#12" is an issue or pull request number; "50 per page" is a page size.
_CUE_WORD = re.compile(r"(?<![\w/.-])([A-Za-z][A-Za-z-]*)\s+$")
_PER_UNIT = re.compile(r"\s+per\s+([a-z]+)", re.IGNORECASE)
# "the last 5 releases", "give me the top 5": a page size or a limit
_HOW_MANY = frozenset(["top", "last", "first", "latest", "recent"])
_PAGE_SIZE_WORDS = frozenset(["per", "limit", "count", "max", "size"])
# What a key that takes "the first line" or "the last commit" says: an end, or a count of results.
COUNT_OR_END = frozenset(
    tokenize(" ".join(_HOW_MANY | _PAGE_SIZE_WORDS | {"head", "tail", "newest", "oldest", "maximum"}))
)
_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
_ORDINAL_PAGE = re.compile(rf"\b({'|'.join(_ORDINALS)})\s+page\b", re.IGNORECASE)
# "the first line", "the last commit", "the most recent run": one of them, counted from an end. Not a span
# of time ("the last week"), a page ("the first page" is page 1, above), an occasion ("the first time") or
# a quantity word ("the last few commits").
_ONE_FROM_AN_END = re.compile(
    r"\b(?:the|my|its|your|their)\s+(first|last|latest|newest|oldest|most recent)\s+"
    r"(?!(?:few|several|couple|many|dozen|hundred|page|time|one|and|or|of|to|in|on|at|for|with|from|by|is|was)\b)"
    r"(?!(?:milli)?(?:seconds?|minutes?|hours?|days?|weeks?|months?|quarters?|years?|decades?)\b)"
    r"([a-z][a-z-]*[a-rt-z])\b(?!\s+(?:and|or)\b)",
    re.IGNORECASE,
)
# "a 5% yield after 3 years": a word of time before a number ends its cue, as a function word does
_TIME_WORDS = frozenset(["after", "before", "within", "during", "since", "until", "over", "in", "for", "every"])
# "the last 3600 seconds" is a span of time, not a count of things
_TIME_UNIT = re.compile(
    r"\s+(?:milli)?(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\b", re.IGNORECASE
)


def ones_from_an_end(text: str) -> list[str]:
    """The end ("first", "last", "most recent" …) of each thing a text counts one of from an end: "the
    first line", "the last commit"; not "the last six months"."""
    return [m.group(1) for m in _ONE_FROM_AN_END.finditer(text) if m.group(2).lower() not in NUMBER_WORDS]


def one_from_an_end_cues(intent: str) -> list[tuple[str, frozenset[str]]]:
    """A 1 for each "the first line", "the last commit", with its cue words (its end, and those of a page
    size or a limit), in the form of :func:`number_cues`. Only for a 1 the model wrote: an implied
    count says where a 1 goes (``head``, not ``tail``), not that a call must limit its results."""
    return [("1", frozenset([*tokenize(end), *_PAGE_SIZE_WORDS])) for end in ones_from_an_end(intent)]


def number_cues(intent: str) -> list[tuple[str, frozenset[str]]]:
    """Each stated number with the words that say what it numbers: up to two words right before it
    (stopping at a function word, so "a sub-issue of #12" gives none), ``#`` when it is written
    ``#12``, and "per X" after it; "top 5" and "the last 5" are a page size or a limit (not "the last
    3600 seconds", a span of time), "the second page" is page 2. The words are tokenised as key names
    are (stemmed, ``PR`` → "pull request"), so they can be matched against a schema's keys
    (:func:`placement.cued_numbers`)."""
    text = _STATED_PATH.sub(" ", without_quotes(URL_PATTERN.sub(" ", intent)))
    cues: list[tuple[str, frozenset[str]]] = []
    for match in _STATED_NUMBER.finditer(text):
        words = {"#"} if match.group(0).startswith("#") else set()
        before = text[: match.start()]
        for _ in range(2):
            word = _CUE_WORD.search(before)
            said = tokenize(word.group(1)) if word else []
            if not word or not said or word.group(1).lower() in _TIME_WORDS:
                break
            words.update(said)
            before = before[: word.start()]
        unit = _GLUED_UNIT.match(text, match.end())  # "1kg" numbers what a key "in kg" holds
        if unit:
            words.update(word for word in tokenize(unit.group(0).lower()) if len(word) > 1)
        per = _PER_UNIT.match(text, match.end())
        if per:
            words.update(["per", *tokenize(per.group(1))])
        if words & _HOW_MANY and not _TIME_UNIT.match(text, match.end()):
            words |= _PAGE_SIZE_WORDS
        cues.append((match.group(1), frozenset(words)))
    for match in _ORDINAL_PAGE.finditer(text):  # "the second page"
        cues.append((str(_ORDINALS.index(match.group(1).lower()) + 1), frozenset(["page"])))
    for url in URL_PATTERN.findall(intent):
        cues += _url_number_cues(url)
    return cues


# ``…/pull/318`` numbers a pull request, ``…/actions/runs/99`` a run; ``#discussion_r1650022311`` and
# ``#issuecomment-42`` anchor a comment by its id.
_URL_PATH_NUMBER = re.compile(r"/([A-Za-z][\w-]*)/(\d+)(?=[/#?]|$)")
_URL_ANCHOR_NUMBER = re.compile(r"#([A-Za-z][A-Za-z_-]*?)[_-]?r?(\d+)$")


def _url_number_cues(url: str) -> list[tuple[str, frozenset[str]]]:
    """The numbers of a URL with the words that say what each numbers: the path segment before it, and
    for the anchor, its words and "id"."""
    cues = [(m.group(2), frozenset(tokenize(m.group(1)))) for m in _URL_PATH_NUMBER.finditer(url)]
    anchor = _URL_ANCHOR_NUMBER.search(url)
    if anchor:
        cues.append((anchor.group(2), frozenset([*tokenize(anchor.group(1)), "id"])))
    return cues


# A pull request's two branches: "fix/tooltip -> develop", "from feature-x into main", "a PR against develop".
_ROLE_NAME = r"([A-Za-z0-9][\w./:-]*\w|\w)"  # ``octo-org:feature/dark-mode`` names a fork's branch
_TARGET = re.compile(
    rf"\b(?:against|into|onto)\s+(?:the\s+)?{_ROLE_NAME}(?![\w./:-])"
    # "from that branch to upstream main": "to" names a target only after a "from" in the same clause
    rf"|\bfrom\b[^,;.]*?\bto\s+(?:the\s+)?(?:upstream\s+|origin\s+|base\s+)?{_ROLE_NAME}(?![\w./:-])",
    re.IGNORECASE,
)
_SOURCE = re.compile(r"\b(?:from|off(?:\s+of)?)\s+((?:\S+\s+){0,3}\S+|\S+)", re.IGNORECASE)


def _source_name(words: list[str]) -> str:
    """The branch in the words after "from"/"off": "the develop branch", "teh branch octo-org:x", "main"."""
    words = [w.strip(",.;:!?()'\"") for w in words]
    if words and words[0].lower() == "the":
        words = words[1:]
    if len(words) >= 3 and words[1].lower() == "branch" and words[2].lower() not in _NOT_BRANCH_NAMES:
        return words[2]
    if len(words) >= 2 and words[0].lower() == "branch":
        return words[1]
    return words[0] if words else ""


def branch_roles(intent: str) -> dict[str, str]:
    """The branch a request merges from (``source``) and into (``target``), where its words say so. A
    request that names a target and exactly one other branch ("I pushed to the refactor/db-layer branch
    … open a PR against develop") names the source too."""
    text = without_quotes(URL_PATTERN.sub(" ", intent))
    roles: dict[str, str] = {}

    def named(name: str) -> bool:
        return bool(name) and _may_name_a_branch(name) and not name.isdigit() and not name.startswith("/")

    arrow = _FROM_TO.search(text)
    if arrow and named(arrow.group(1) or "") and named(arrow.group(2) or ""):
        roles = {"source": arrow.group(1), "target": arrow.group(2)}
    targets = [name for m in _TARGET.finditer(text) if named(name := m.group(1) or m.group(2))]
    sources = [name for m in _SOURCE.finditer(text) if named(name := _source_name(m.group(1).split()))]
    for role, found in (("target", targets), ("source", sources)):
        if len(found) == 1 and role not in roles:
            roles[role] = found[0]
    if "target" in roles and "source" not in roles:
        others = [name for name in stated_branches(text) if name != roles["target"]]
        if len(others) == 1:
            roles["source"] = others[0]
    return roles


def stated_entities(intent: str) -> list[tuple[str, str]]:
    """The numbers, file paths and branches a request states as values, as ``("number", "45")``,
    ``("path", "src/auth/session.go")`` and ``("branch", "develop")``. The 0.5B model often closes the
    arguments object before writing them ("commits touching src/auth/session.go" without ``path``;
    "items in project #3" without ``project_number``); the decoder keeps the object open while one of
    them is in no value and a key that could hold it is left (``SchemaDecoder``, measured in ``docs/arguments.md``)."""
    text = without_quotes(URL_PATTERN.sub(" ", intent))
    found: list[tuple[str, str]] = []
    found += [("path", match.group(0)) for match in _STATED_PATH.finditer(text)]
    for match in _STATED_NUMBER.finditer(_STATED_PATH.sub(" ", text)):
        found.append(("number", match.group(1)))
    found += [("branch", name) for name in stated_branches(text)]
    return list(dict.fromkeys(found))
