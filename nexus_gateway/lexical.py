"""BM25 over tool names, descriptions and parameter names.

Names are split on ``_``, ``-``, ``.`` and camelCase, so ``list_pullRequests`` matches "list pull
requests". This is the gateway's lexical signal; dense retrieval fuses with it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2,})")
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORD_TEXT = """
a an the of to in on for and or with by from at as is are be this that it its into via
me my i you your we our please can could would should will do does
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# A request's function words ("what", "which", "have", "been", "there") match nothing a tool does, yet a
# long description that happens to contain one (``list_notifications`` says "what") took the whole
# lexical signal for "whats in the docs folder". Dropped from queries only; the documents keep their words.
# Interrogatives, auxiliaries, pronouns and fillers of the usual English stop-word lists, but not the
# prepositions and quantifiers an API can mean ("between", "under", "only", "not", "all"). "Show" and
# "display" frame a request the way "what" does ("show me the last five commits" asks to read commits),
# yet "show" is half of ``git_show``'s name: it took "show the last five commits" and "show me which files
# changed" from git_log and git_status (session 25; GitHub, BFCL and the dialogues do not move). The
# framing verbs of a request ("I need to see", "I want", "tell me", "let me know", "what … will be like")
# say that something is asked, not what: ``list_notifications`` says "needs to check" and "wants to see",
# and a weather question's "like" matched whichever function says "like" (session 34; BFCL 6 of 956
# requests better, none worse; GitHub, the irrelevant requests and the local servers do not move). Its
# inflections too: "remember that Bob likes tea" searched the file system with path "Bob", as
# ``search_files`` says "Use pattern like '*.ext'" (session 57: it abstains now; nothing else moves).
_QUERY_STOPWORD_TEXT = """
what whats which who whom when where why how am was were been being have has had having did doing didn doesn
don isn aren wasn weren hasn haven hadn won wouldn couldn shouldn mustn shan he him his she her hers herself
himself they them their theirs themselves these those there here myself ours ourselves yours yourself
yourselves itself just so very too then now once if because while such some other own ought cannot than
further again nor show display need needs needed want wants wanted wanna like likes liked see know tell let
"""
QUERY_STOPWORDS = STOPWORDS | frozenset(_QUERY_STOPWORD_TEXT.split())


# Short forms people type for words tool descriptions spell out (generic software vocabulary only).
ABBREVIATIONS = {
    "pr": "pull request",
    "prs": "pull requests",
    "mr": "merge request",
    "mrs": "merge requests",
    "repo": "repository",
    "repos": "repositories",
    "org": "organization",
    "orgs": "organizations",
    "dir": "directory",
    "dirs": "directories",
    "env": "environment",
    "msg": "message",
    "info": "information",
    "config": "configuration",
    "db": "database",
}


# Plain words for operations and things that tool descriptions name otherwise (generic software
# vocabulary only). Used for a query word the registry never says, as the abbreviations are: each word of
# its group that the registry says stands in for it ("plus" for get-sum's "sum" and for "add").
SYNONYMS = {
    "folder": ("directory",),
    "forget": ("delete",),
    "erase": ("delete",),
    "history": ("log",),
    "remove": ("delete",),
    "rename": ("move",),
    "fetch": ("get",),
    "retrieve": ("get",),
    "modify": ("update",),
    "make": ("create",),
    "sum": ("add",),
    "plus": ("add", "sum"),
    "bug": ("issue",),  # an issue tracker's bug report: "is this a known bug in acme/api?"
}


# Cardinal numbers as words; not "one", which mostly points at a record ("the one where I was mentioned").
# A number is never a typo ("five" is not "file").
_SMALL = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_TEENS = ("thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
NUMBER_WORDS = {word: n for n, word in enumerate((*_SMALL, *_TEENS), 2)} | {
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "hundred": 100,
    "dozen": 12,
}


def split_identifier(text: str) -> str:
    """``list_pullRequests`` → ``list pull Requests``."""
    return _CAMEL.sub(" ", re.sub(r"[_\-./:]+", " ", text))


def stem(word: str) -> str:
    """A deliberately light stemmer: plural and common verb endings only ("-ing" with its silent e put
    back, ``_silent_e``)."""
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "es" and not word.endswith(("ches", "shes", "xes", "sses", "zes")):
                continue
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                continue
            root = word[: len(word) - len(suffix)] + keep
            return _silent_e(root) if suffix == "ing" else _undergoer(root)
    return _undergoer(word)


def _undergoer(word: str) -> str:
    """The verb a noun of who undergoes it ends in "-ee" on: "assignee" → assign, "attendee" → attend,
    "employee" → employ. A request says the verb ("assign issue 67 to sofia-g") where a tool names the
    field (``update_issue_assignees``), and the two never met: ``assign_copilot_to_issue`` took it by its
    name alone. A root of five letters or more only: "degree", "agree", "coffee" stay."""
    if word.endswith("ee") and not word.endswith("eee") and len(word) - 2 >= 5:
        return word[:-2]
    return word


_VOWELS = frozenset("aeiou")
_KEPT_DOUBLES = _VOWELS | {"l", "s", "z"}  # "calling" call, "passing" pass, "buzzing" buzz


def _silent_e(root: str) -> str:
    """The verb an "-ing" came off, as Porter's step 1b rebuilds it: "staging" → stage (it was "stag",
    so "stage src/app.py" found nothing in ``git_add``'s "staging area"), "creating" → create, "running"
    → run; "opening" stays open (two syllables), "listing" list. "-ed" is left alone: stripping it as
    well moved as many decisions one way as the other (docs/routing.md)."""
    if root.endswith(("at", "bl", "iz")):
        return root + "e"
    if len(root) >= 4 and root[-1] == root[-2] and root[-1] not in _KEPT_DOUBLES:
        return root[:-1]
    # Porter's measure: how many times a run of vowels is followed by a run of consonants ("stag" 1,
    # "open" 2); a one-measure root that ends consonant-vowel-consonant lost an e ("stag", "clos", "writ")
    pattern = "".join("v" if c in _VOWELS else "c" for c in root)
    measure = pattern.count("vc")
    if measure == 1 and pattern.endswith("cvc") and root[-1] not in "wxy":
        return root + "e"
    return root


# The clitic of a contraction or possessive ("what's", "Alice's", "don't"): split off, it was a term of
# its own, "s" or "t", which matched every description with a possessive ("what's the date today" went to
# ``read_multiple_files``).
_CLITIC = re.compile(r"(?<=[a-z])['’](?:s|t|d|m|ll|re|ve)\b")


def tokenize(text: str, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """Lower-cased, identifier-split, abbreviation-expanded, stop-word-free, lightly stemmed tokens."""
    words: list[str] = []
    for word in _WORD.findall(_CLITIC.sub("", split_identifier(text).lower())):
        words.extend(ABBREVIATIONS[word].split() if word in ABBREVIATIONS else (word,))
    return [stem(w) for w in words if w not in stopwords]


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def one_edit_apart(a: str, b: str) -> bool:
    """True when one insertion, deletion, substitution or swap of neighbours turns ``a`` into ``b``.

    Two words that share a one-deletion form can be two edits apart ("look" and "logo" both give "loo"),
    so every candidate the deletion neighbourhoods propose is checked with this."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


# Names typed as they are spelled: ``octo-org/app``, ``lumen-ui``, ``useSyncExternalStore``, ``release/2.4``.
# Their parts are not misspelt words ("octo" is not "onto", "lumen" not "luden").
_IDENTIFIER = re.compile(r"\S*[A-Za-z][/_.\-][A-Za-z0-9]\S*|\S*[a-z][A-Z]\S*")


# A file name (``database.ts``, ``src/app.min.js``, ``/tmp/log.txt``, ``~/notes.md``): its extension starts
# with a letter and the name before it has one, so a decimal ("rated 4.5 or more", "Python 3.12"), a version
# ("v2.1.0", "v11.0.x", "4.x") and a release branch ("release/3.2") are none, nor "i.e.", "e.g.", "D.C." or
# an email's domain, nor a dotted repository's name ("the next.js repo"); a build file that has no extension
# by convention ("Dockerfile", "Makefile", "Dockerfile.dev") is one. One rule for the readers of file
# names in a request: the path slot (``affordance``), the paths the decoder waits for
# (``mentions.stated_entities``) and the word a file name leaves in the routed request (``without_values``).
NOT_INSIDE_A_NAME = r"(?<![\w/.:@-])"
FROM_ROOT = r"(?:~|\.{1,2})?/"
# Build and project files that by convention have no extension, spelled as their tools spell them.
CONVENTIONAL_FILES = (
    "Dockerfile|Containerfile|Makefile|GNUmakefile|Justfile|Jenkinsfile|Vagrantfile|Gemfile|Rakefile|"
    "Podfile|Brewfile|Pipfile|Procfile|Snakefile|Earthfile|Tiltfile|CODEOWNERS"
)
FILE_NAME = (
    rf"{NOT_INSIDE_A_NAME}(?![A-Za-z]\.[A-Za-z]\b)(?:{FROM_ROOT})?(?:[\w.-]+/)*(?:"
    r"(?:[\w-]+\.)*[\w-]*[A-Za-z][\w-]*\.[A-Za-z][A-Za-z0-9]{0,4}"
    rf"|(?:{CONVENTIONAL_FILES})(?:\.[\w-]+)?)(?![\w/])(?!\s+repo(?:sitory)?\b)"
)
FILE_PATTERN = re.compile(FILE_NAME)


# Argument values inside a request: quoted text, paths and URLs, globs and any word with a dot inside
# (file names, hosts, emails, "v11.0.x"). Their words name the things a call acts on, not the operation
# ("print log.txt" is not about ``git_log``). Wider than a file name on purpose: "D.C." and "a.m."
# blanked here leave no one-letter terms behind (session 37 measured the narrower rule: 15 BFCL requests
# gained "d", "c", "example", "com" as terms).
QUOTED_TEXT = r"""(?<!\w)'[^']+'(?!\w)|"[^"]+"|`[^`]+`|“[^”]+”"""
VALUE_SPAN = re.compile(
    QUOTED_TEXT + r"""|\S*[/\\]\S*|\S*\w\.[A-Za-z]\w{0,4}\b|\S*\*\S*"""
    rf"|\b(?:{CONVENTIONAL_FILES})\b"
)


# A link into a code host's repository, and the words for what its path points at: a pasted
# ".../lumen-ui/issues/310" says "issue" as plainly as the words "issue 310" would, and "Post 'Thanks!'
# on <link>" read as "Post on" without them (session 57).
_CODE_HOST_LINK = re.compile(
    r"(?:https?://)?(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)"
    r"/(?P<path>[\w.-]+/[\w./-]*[\w-])?[^\s#]*(?:#(?P<anchor>[a-z_-]+))?"
)
_LINK_KINDS = {
    "issues": "issue",
    "pull": "pull request",
    "pulls": "pull requests",
    "merge_requests": "merge request",
    "commit": "commit",
    "commits": "commits",
    "blob": "file",
    "raw": "file",
    "tree": "folder",
    "releases": "release",
    "tags": "tags",
    "discussions": "discussion",
    "wiki": "wiki",
    "branches": "branches",
    "labels": "label",
    "milestone": "milestone",
    "milestones": "milestones",
    "compare": "compare",
    "actions": "workflow",
}
_LINK_SUBKINDS = {
    "runs": "run",
    "jobs": "job",
    "dependabot": "dependabot alert",
    "code-scanning": "code scanning alert",
}
_LINK_ANCHORS = {"discussion_r": "comment", "issuecomment": "comment", "pullrequestreview": "review"}


def is_code_host_link(link: str) -> bool:
    """Whether ``link`` points into a repository on a code host (it names the repository)."""
    match = _CODE_HOST_LINK.match(link)
    return match is not None and match.group("path") is not None


def _link_words(link: str) -> str:
    """The words for what a code host's link points at ("issue", "pull request comment", "workflow run"),
    or "" for any other link; the repository and the numbers it holds count as slots elsewhere
    (``affordance.query_slots``). The kind is the segment after ``owner/repo``, or after GitLab's ``-``
    (``group/subgroup/project/-/merge_requests/5``)."""
    match = _CODE_HOST_LINK.match(link)
    if match is None or match.group("path") is None:
        return ""
    segments = match.group("path").split("/")
    rest = segments[segments.index("-") + 1 :] if "-" in segments else segments[2:]
    kind, sub = [*rest, "", ""][:2]
    words = [_LINK_KINDS.get(kind, "") if rest else "repository"]
    if kind in ("actions", "security"):
        words.append(_LINK_SUBKINDS.get(sub, ""))
    anchor = match.group("anchor") or ""
    words += [word for prefix, word in _LINK_ANCHORS.items() if anchor.startswith(prefix)]
    return " ".join(w for w in words if w)


def _value_word(value: re.Match[str]) -> str:
    """What a value leaves in the request: the word "file" for a file name (unquoted: "show me logo.png"
    asks about a file, where "save 'notes.md'" may be any text), what a code host's link points at
    ("issue" for ``…/issues/310``), nothing for any other value."""
    links = _link_words(value.group(0))
    if links:
        return f" {links} "
    file = FILE_PATTERN.match(value.string, value.start())
    whole = value.group(0).rstrip(".,;:!?)")
    return " file " if file is not None and file.end() >= value.start() + len(whole) else " "


# Two neighbouring words (a space or a hyphen apart), for the compounds a registry writes as one word.
_WORD_PAIR = re.compile(r"(?<![a-z0-9])(?=([a-z]{2,})[ -]([a-z]{2,})(?![a-z0-9]))")


def without_values(query: str, *, value_kinds: bool = True) -> str:
    """``query`` with its argument values blanked out, for the lexical signal and the embedded query
    (``routing.embedded_intent``): the slot detectors still read them (a path says that the tool takes
    one). A file name leaves the word "file": the value's words say nothing of the operation, but that
    the request names a file says what it acts on ("print the contents of /tmp/log.txt" went to
    ``git_show``, whose description says "contents"; session 47, ``docs/routing.md``).
    ``value_kinds=False`` leaves nothing of any value."""
    return VALUE_SPAN.sub(_value_word if value_kinds else " ", query)


# A phrase that places the request ("on the develop branch", "in my dotfiles repo", "to the
# refactor/db-layer branch"): its noun says where the operation happens, not what it acts on, so it is no
# term of the lexical signal or of name coverage. "the most recent commit on the develop branch" went to
# ``list_commits``, whose description says "branch", over ``get_commit``. "org" and "organization" are
# not places here: "fork it into the quartz-ai organization" names where the result goes, and an org's
# tools (``list_issue_types(owner)``) want the word (session 51, docs/routing.md).
PLACE_PHRASE = re.compile(
    r"\b(?:on|in|from|against|off|of|under|to|into|within|across)\s+"
    r"(?:(?:the|a|my|our|their|its|this|that|your)\s+)?(?:[\w./:@-]+\s+){0,2}?(branch|repo|repository)\b",
    re.I,
)


def without_place_nouns(query: str) -> str:
    """``query`` without the nouns of its placing phrases (``PLACE_PHRASE``); everything else stays."""
    return PLACE_PHRASE.sub(lambda place: place.group(0)[: place.start(1) - place.start(0)], query)


@dataclass(frozen=True)
class LexicalDocument:
    """The text fields of one tool, weighted: the name counts twice.

    Enum values are part of a tool's vocabulary: "heart" is an option of
    ``add_issue_comment_reaction``'s ``content``, "squash" of ``merge_pull_request``'s ``merge_method``,
    and requests say them (measured in docs/routing.md)."""

    name: str
    description: str
    parameters: Sequence[str]
    enum_values: Sequence[str] = ()

    @classmethod
    def of_tool(cls, name: str, description: str, schema: Any) -> LexicalDocument:
        properties = schema.get("properties") if isinstance(schema, dict) else None
        parameters = list(properties) if isinstance(properties, dict) else []
        return cls(name, description, parameters, schema_enum_values(schema))

    def tokens(self) -> list[str]:
        name = tokenize(self.name)
        return (
            name
            + name
            + tokenize(self.description)
            + tokenize(" ".join(self.parameters))
            + tokenize(" ".join(self.enum_values))
        )


def schema_enum_values(schema: Any, depth: int = 0) -> list[str]:
    """The string enum values of a schema's properties, nested objects and array items included."""
    if not isinstance(schema, dict) or depth > 3:
        return []
    properties = schema.get("properties")
    values: list[str] = []
    for prop in properties.values() if isinstance(properties, dict) else []:
        if not isinstance(prop, dict):
            continue
        enum = prop.get("enum")
        if isinstance(enum, list):
            values += [v for v in enum if isinstance(v, str)]
        values += schema_enum_values(prop, depth + 1) + schema_enum_values(prop.get("items"), depth + 1)
    return values


class BM25Index:
    """Okapi BM25 over an inverted index: one (documents, weights) posting pair per term.

    k1 = 0.8, not the textbook 1.2: a tool's document is a few dozen words with its name counted twice,
    so a term said again is little more evidence. Session 22, with the shipped fusion weights over all
    dev requests: BFCL 668 → 676 of 956 top-1 (12 fixed, 4 broken; 0.6 and 1.0 gave 678 and 672),
    GitHub with the pool 247 → 249 of 332 (6 fixed, 4 broken) at N = 250 and all (docs/routing.md).
    """

    def __init__(
        self,
        documents: Sequence[list[str]],
        k1: float = 0.8,
        b: float = 0.75,
        known_words: frozenset[str] = frozenset(),
    ) -> None:
        self.size = len(documents)
        self.known_words = known_words
        lengths = np.array([len(t) for t in documents], dtype=np.float32)
        average = float(lengths.mean()) if self.size and lengths.mean() > 0 else 1.0
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for column, tokens in enumerate(documents):
            norm = k1 * (1 - b + b * lengths[column] / average)
            for token, count in Counter(tokens).items():
                docs, weights = postings.setdefault(token, ([], []))
                docs.append(column)
                weights.append(count * (k1 + 1) / (count + norm))
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for token, (docs, weights) in postings.items():
            frequency = len(docs)
            idf = math.log(1 + (self.size - frequency + 0.5) / (frequency + 0.5))
            self.postings[token] = (
                np.asarray(docs, dtype=np.int32),
                np.asarray(weights, dtype=np.float32) * np.float32(idf),
            )
        # Built with the index, not on the first typed request: that request would pay for it (tens of
        # ms at 250 tools), and the index is built off the request path (router_service's worker).
        self._neighbours: dict[str, set[str]] = {}
        for term in self.postings:
            if len(term) >= 3:
                for key in _deletions(term) | {term}:
                    self._neighbours.setdefault(key, set()).add(term)

    def correct(self, token: str) -> str | None:
        """The indexed term one edit away (insert, delete, substitute, swap) from an unknown token.

        Typed requests carry typos ("brnach", "fodler") that would otherwise match nothing; among several
        candidates the most frequent term wins. Deletion neighbourhoods (SymSpell) keep this a few dict
        look-ups rather than a pass over the vocabulary. Short tokens are left alone: too ambiguous. A word
        of ``known_words`` (the embedder's whole words) is no typo: it only loses the last letter of "-ed" to
        a term it inflects ("named" → name, "titled" → title), where the light stemmer leaves it; otherwise
        "keep" became "deep", "note" "node", "date" "data" and "ship" "skip" (docs/routing.md).
        """
        if len(token) < 4 or not token.isalpha() or token in NUMBER_WORDS:
            return None
        candidates: set[str] = set()
        for key in _deletions(token) | {token}:
            candidates |= self._neighbours.get(key, set())
        candidates = {term for term in candidates if one_edit_apart(token, term)}
        if token in self.known_words:  # "named" → name, but "note" is not "not"
            candidates = {term for term in candidates if token.endswith("ed") and term == token[:-1]}
        if not candidates:
            return None
        return min(candidates, key=lambda term: (-len(self.postings[term][0]), term))

    def query_terms(self, query: str, *, value_kinds: bool = True) -> list[str]:
        """The query's distinct terms; each one the registry never says replaced by its plain synonyms that
        the registry says (``SYNONYMS``: "folder" → directory), else by its one-edit correction when
        there is one, except the parts of names typed as identifiers (``octo-org/app``). Argument values
        (quoted text, paths, file names: ``without_values``) are no terms, but a file name leaves the
        term "file" unless ``value_kinds`` is false."""
        query = without_values(query, value_kinds=value_kinds)
        names = {token for match in _IDENTIFIER.finditer(query) for token in tokenize(match.group(0))}
        terms = []
        for token in dict.fromkeys(tokenize(query, QUERY_STOPWORDS)):
            known = token in self.postings or token in names
            synonyms = [] if known else [t for t in map(stem, SYNONYMS.get(token, ())) if t in self.postings]
            if known:
                terms.append(token)
            elif synonyms:
                terms.extend(synonyms)  # "create a folder" → directory, where the tools never say folder
            else:
                terms.append(self.correct(token) or token)
        return list(dict.fromkeys(terms + self._closed_compounds(query)))

    def _closed_compounds(self, query: str) -> list[str]:
        """Neighbouring words the registry writes as one ("check out" checkout, "set up" setup, "look
        up" lookup, "time zone" timezone), the first no function word ("in it" is no init)."""
        found = []
        for a, b in _WORD_PAIR.findall(_CLITIC.sub("", query.lower())):
            joined = stem(a + b)
            if a not in QUERY_STOPWORDS and joined in self.postings and joined not in (stem(a), stem(b)):
                found.append(joined)
        return found

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (zeros where nothing matches)."""
        return self.term_scores(self.query_terms(query))

    def term_scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every document for terms already taken from a query (``query_terms``), which
        the router also hands to name coverage instead of splitting and correcting the query twice."""
        scores = np.zeros(self.size, dtype=np.float32)
        for token in terms:
            posting = self.postings.get(token)
            if posting is not None:
                scores[posting[0]] += posting[1]
        return scores

    def top(self, query: str, limit: int) -> list[tuple[int, float]]:
        """The ``limit`` best (document index, score) pairs with a positive score, best first."""
        scores = self.scores(query)
        candidates = np.argpartition(-scores, limit)[:limit] if limit < self.size else np.arange(self.size)
        ranked = sorted(candidates.tolist(), key=lambda i: (-scores[i], i))
        return [(i, float(scores[i])) for i in ranked if scores[i] > 0]


class NameCoverage:
    """The share of each tool's name words that a request says: ``search_issues`` for "search issues
    across all of github", ``list_pull_requests`` for "open PRs in facebook/react".

    BM25 already reads the names, but it is scaled by its best match, and a long description that shares
    one rare word with the request can take the whole lexical weight; a name is what the tool does, in
    two to four words. Measured in ``docs/routing.md``.
    """

    def __init__(self, names: Sequence[str]) -> None:
        self.size = len(names)
        postings: dict[str, list[int]] = {}
        shares = np.zeros(self.size, dtype=np.float32)
        for row, name in enumerate(names):
            words = set(tokenize(name))
            shares[row] = 1.0 / len(words) if words else 0.0
            for word in words:
                postings.setdefault(word, []).append(row)
        self._postings = {word: np.asarray(rows, dtype=np.int32) for word, rows in postings.items()}
        self._shares = shares

    def scores(self, terms: Sequence[str]) -> np.ndarray:
        """0..1 per tool, for a request's terms (``BM25Index.query_terms``)."""
        scores = np.zeros(self.size, dtype=np.float32)
        for term in set(terms):
            rows = self._postings.get(term)
            if rows is not None:
                scores[rows] += self._shares[rows]
        return scores
