"""Slot affordance: entities in a request that only some tools' schemas can hold.

An intent that names ``owner/repo``, a number (``#318``, ``PR 512``), a URL or a file path can only be
served by a tool with a parameter to put it in. Retrieval by meaning alone misses this: a GitLab or
Linear tool with a similar description wins over the GitHub tool whose ``owner``/``repo`` parameters
the request fills exactly. The router adds ``w · (share of the request's slot kinds the tool can
take)`` to the fused score; the weight is in the calibration (measured in ``docs/routing.md``). A
number the request names by what it numbers ("PR 71234", "workflow run 9876543210") goes only to a
parameter about that thing (:func:`numbered_objects`), not to a search's page.

The other direction matters as much: a tool that *requires* an issue number (or a path, a URL) cannot
serve a request that gives none. "What's currently open in psf/requests' issue tracker?" is
``list_issues``, not ``issue_read(issue_number)``; "open an issue titled …" is ``create_issue``, not
``update_issue_title(issue_number, …)``. The router subtracts ``w_unfilled`` from such tools.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .lexical import FILE_PATTERN, QUERY_STOPWORDS, QUOTED_TEXT, is_code_host_link, split_identifier, tokenize

SLOT_KINDS = ("repo", "number", "url", "path", "time", "text", "account")
# Parameters that page through results: what a request's number never identifies
PAGINATION = frozenset({"page", "perpage", "per_page", "after", "cursor", "endcursor", "startcursor", "pagesize"})
# The free-text keys, by the last word of their names: what a search looks for (``query``, ``q``), and
# the long text a tool writes (``body``, ``issue_body``), the likelier home of a pasted block first (a
# file's content over a gist's description; a commit message is no place for one)
SEARCH_KEYS = ("query", "q", "search", "term", "terms", "keywords")
LONG_TEXT_KEYS = ("body", "content", "text", "comment", "description")

# A URL, without the punctuation of the sentence it ends ("…/issues/88, change the title"): its last path
# segment must stay the number it is
URL_PATTERN = re.compile(r"https?://\S*[^\s.,;:!?)\]'\"]")
REPO_PATTERN = re.compile(r"(?<![\w/.:-])[A-Za-z0-9][\w.-]*/[\w.-]*[A-Za-z0-9](?![\w/])")
_NUMBER = re.compile(r"(?:#|\b)\d+\b")
# A time of day ("10am", "3 p.m.", "17:30", "noon"): what a time parameter holds and no other slot does.
# "What is 10am Tokyo time in Berlin" is ``convert_time(time, …)``, not ``get_current_time(timezone)``.
_CLOCK_TIME = re.compile(
    r"(?<![\w:.])(?:\d{1,2}(?::[0-5]\d)?\s*(?:am|pm|a\.m\.|p\.m\.)(?!\w)|(?:[01]?\d|2[0-3]):[0-5]\d(?![\w:])"
    r"|noon\b|midnight\b)",
    re.I,
)
_LINK_PATH_NUMBER = re.compile(r"/\d+(?=[/#?]|$)")
_REPO_WORD = re.compile(r"\brepo(?:sitory|sitories|s)?\b", re.I)


def query_slots(text: str) -> frozenset[str]:
    """The slot kinds a request mentions."""
    found = set()
    for link in URL_PATTERN.findall(text):
        found.add("url")
        if is_code_host_link(link):  # ".../lumen-ui/issues/310" names a repository and an issue
            found.add("repo")
            if _LINK_PATH_NUMBER.search(link):
                found.add("number")
    rest = URL_PATTERN.sub(" ", text)
    if REPO_PATTERN.search(rest):
        found.add("repo")
    if _numbers_an_object(rest):
        found.add("number")
    if FILE_PATTERN.search(rest):
        found.add("path")
    if _CLOCK_TIME.search(rest):
        found.add("time")
    if "repo" not in found and names_an_account(rest):
        found.add("account")
    return frozenset(found)


# A login named as where or whose: "project 3 in octo-org", "project 5 of user dana-k", "in the zenith-hq
# org", "under acme-corp". Hyphenated, which no English word is (a date or a number has no letter; "the
# mobile-app repo" names a repository, not its owner); not an identifier of digits ("CVE-2024-3094")
_ACCOUNT = re.compile(
    r"\b(?:of|in|for|under|across|from)\s+(?:the\s+)?(?:(?:user|org|organization)\s+)?"
    r"((?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+)(?:\s+(?:org|organization|user))?"
    r"(?![\w/-]|\.\w|\s+(?:repo|repository|project|branch)\b)",
    re.IGNORECASE,
)
OWNER_KEYS = frozenset(["owner", "org", "organization", "username", "user"])  # the keys that hold one


def named_accounts(text: str) -> list[str]:
    """The logins ``text`` names as where or whose, outside quotes and URLs."""
    rest = _QUOTED.sub(" ", URL_PATTERN.sub(" ", text))
    return [login for login in _ACCOUNT.findall(rest) if not all(part.isdigit() for part in login.split("-")[1:])]


def names_an_account(text: str) -> bool:
    """Whether ``text`` names a login as where or whose: a slot for a tool that takes an account (an
    ``owner``, or a search's query), which a memory server's ``create_memory_project`` has not."""
    return bool(named_accounts(text))


_QUOTED = re.compile(QUOTED_TEXT)
_SLASHED_WORD = re.compile(r"[^ \n]*/[^ \n]*")


def _numbers_an_object(text: str) -> bool:
    """Whether ``text`` has a number that can be an issue's, a pull request's or a run's."""
    return bool(_object_numbers(text))


def _object_numbers(text: str) -> list[re.Match[str]]:
    """The numbers in ``text`` that can be an issue's, a pull request's or a run's: not one inside quoted
    text ("Tracking this for 2.5.") nor one inside a name with a slash ("the release/2.4 branch"), unless
    it follows a hash ("octo-org/app#204")."""
    quoted = [q.span() for q in _QUOTED.finditer(text)]
    slashed = [w.span() for w in _SLASHED_WORD.finditer(text)]

    def inside(spans: list[tuple[int, int]], at: int) -> bool:
        return any(start <= at < end for start, end in spans)

    return [
        number
        for number in _NUMBER.finditer(text)
        if not inside(quoted, number.start())
        and (number.group(0).startswith("#") or not inside(slashed, number.start()))
    ]


# Words that stand before a number without saying what it numbers: a count's ("the last 5", "top 3"), a
# page's ("page 2"), a date's ("since 2025")
_COUNTING_WORDS = frozenset({"last", "first", "top", "next", "latest", "recent", "page", "since", "per"})
_WORD_BEFORE = re.compile(r"([A-Za-z]+)\s+$")


def numbered_objects(text: str) -> list[frozenset[str]] | None:
    """What each number of a request numbers, by the word right before it ("PR 77": pull, request;
    "workflow run 9876543210": run; "issue #12": issue), or None when some number has no such word ("the
    last 5 releases", "add 2 and 3", "octo-org/app#204") or gives none (a number only inside a URL, a
    version). The router lets a number named this way fill only a parameter about that thing
    (:func:`id_parameter_words`): "has anyone approved PR 71234" fills ``pull_request_read``'s
    ``pullNumber``, not the ``page`` of ``search_pull_requests``."""
    rest = _whole_number_text(text)
    objects = []
    for number in _object_numbers(rest):
        before = _WORD_BEFORE.search(rest, 0, number.start())
        words = frozenset(tokenize(before[1], QUERY_STOPWORDS)) if before else frozenset()
        if not words or words & _COUNTING_WORDS:
            return None
        objects.append(words)
    return objects or None


def id_parameter_words(schema: dict[str, Any] | None) -> frozenset[str]:
    """The words of a tool's parameters that can hold an identifier, from their names and descriptions: a
    number's that is no page's, and one named for an id whatever its type (GitHub's ``actions_get`` takes
    a run's id as the string ``resource_id``, "The unique identifier of the resource … a workflow run
    ID")."""
    properties = (schema or {}).get("properties") or {}
    if not isinstance(properties, dict):
        return frozenset()
    words: set[str] = set()
    for name, spec in properties.items():
        last = split_identifier(str(name)).lower().split()[-1:]
        named_for_an_id = bool(last) and last[0] in ("id", "ids", "identifier", "number")
        if str(name).lower() in PAGINATION or not ("number" in _parameter_kinds(name, spec) or named_for_an_id):
            continue
        description = spec.get("description", "") if isinstance(spec, dict) else ""
        words.update(tokenize(f"{name} {description}"))
    return frozenset(words)


def filled_slots(text: str, mentioned: frozenset[str] | None = None) -> frozenset[str]:
    """The slot kinds a request can fill: those it mentions (``mentioned``, when the caller already has
    ``query_slots(text)``), and a number inside a URL it gives (``…/pull/318#discussion_r2`` carries the
    pull request's and the comment's numbers); and a repository named by a URL or only by the word
    ("my dotfiles repo", "the mobile-app repo that belongs to zenith-hq"), which the argument step can
    still resolve or ask for, so that the router does not count it as missing."""
    found = set(query_slots(text) if mentioned is None else mentioned)
    if _links_a_number(text):
        found.add("number")
    if "url" in found or _REPO_WORD.search(text):
        found.add("repo")
    return frozenset(found)


# a number that is part of a version or a decimal: "breaking in 5.3", "v11.0.x", "rated 4.5"
_DOTTED_NUMBER = re.compile(r"[\w.]*\d\.\d[\w.]*")
_IDENTIFIER_WORDS = frozenset({"number", "id", "num"})


def names_a_whole_number(text: str) -> bool:
    """Whether ``text`` gives a number an identifier can be (``requires_an_identifier``): one of its own
    or inside a URL, not one part of a version or a decimal. "Are there issues in celery/celery about
    logger imports breaking in 5.3?" went to ``issue_read(issue_number)``, whose number "5.3" seemed to
    fill; "Set 'roomHeight' to 4.2" still fills a height."""
    return _links_a_number(text) or _numbers_an_object(_whole_number_text(text))


def _whole_number_text(text: str) -> str:
    """``text`` without its URLs and its versions or decimals: what is left of it to state a whole number
    of its own ("issue 41", not ".../issues/41" nor "5.3")."""
    return _DOTTED_NUMBER.sub(" ", URL_PATTERN.sub(" ", text))


def _links_a_number(text: str) -> bool:
    """Whether a URL in ``text`` carries a number (``…/pull/318#discussion_r2``: a pull request's, a
    comment's)."""
    return any(re.search(r"\d", url) for url in URL_PATTERN.findall(text))


def requires_an_identifier(schema: dict[str, Any] | None) -> bool:
    """Whether a tool requires a number named as an identifier (``issue_number``, ``pullNumber``,
    ``comment_id``): whole, never a version or a decimal."""
    return bool(required_identifiers(schema))


def required_identifiers(schema: dict[str, Any] | None) -> tuple[frozenset[str], ...]:
    """What each required identifier number of a tool is about, by the words of its name and description
    (``issue_number``, "The issue number to update": issue, number, update). A request that names its
    numbers by what they number fills only those about the same thing: "file an issue … under milestone
    7" gives ``update_issue_milestone`` its milestone, not the issue it requires (the router's
    ``Router.identifier_unfilled``)."""
    properties = (schema or {}).get("properties") or {}
    required = (schema or {}).get("required") or []
    if not isinstance(properties, dict) or not isinstance(required, list):
        return ()
    return tuple(
        frozenset(tokenize(f"{name} {spec.get('description', '') if isinstance(spec, dict) else ''}"))
        for name in required
        if "number" in _parameter_kinds(name, spec := properties.get(name))
        and bool(_IDENTIFIER_WORDS & set(split_identifier(str(name)).lower().split()[-1:]))
    )


def argument_slots(arguments: dict[str, Any] | None) -> frozenset[str]:
    """The slot kinds a host fills itself when it calls ``call(intent, arguments)``: "add two numbers"
    with ``{"a": 19, "b": 23}`` gives the numbers that the words do not, ``{"owner", "repo"}`` the
    repository."""
    values = list((arguments or {}).values())
    found = set()
    if any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        found.add("number")
    if names_a_repository(arguments or {}):
        found.add("repo")
    return frozenset(found)


def tool_requirements(schema: dict[str, Any] | None) -> frozenset[str]:
    """The slot kinds a tool's schema requires: a required integer (an issue, pull request or alert
    number, an id), a required path or file, a required URL. The router counts a kind only where it sets
    a tool apart from most of its own server (``Router``): every ``mcp-server-git`` tool requires
    ``repo_path`` and most filesystem tools a ``path``, which requests name loosely or not at all ("the
    docs folder"), while GitHub's ``get_file_blame(path)`` is one of few (docs/routing.md). A repository
    is a required ``owner`` and ``repo`` together, or GitLab's project by its path: "list commits on
    grafanas v11.0.x branch" names no repository, and GitLab's ``list_commits(project_id)`` took it
    without paying, as GitHub's did. The router counts it unless every tool of the server requires one
    (``routing.distinguishing_requirements``). A project path is no repository *affordance*
    (``tool_affordances``): GitLab's tools would then take the ``owner/repo`` of GitHub requests
    (docs/routing.md)."""
    properties = (schema or {}).get("properties") or {}
    required = (schema or {}).get("required") or []
    if not isinstance(properties, dict) or not isinstance(required, list):
        return frozenset()
    kinds = {kind for name in required for kind in _parameter_kinds(name, properties.get(name))}
    if names_a_repository(required) or any(names_a_project_path(name, properties.get(name)) for name in required):
        kinds.add("repo")
    return frozenset(kinds)


def tool_affordances(schema: dict[str, Any] | None) -> frozenset[str]:
    """The slot kinds a tool's input schema has a parameter for."""
    properties = (schema or {}).get("properties") or {}
    if not isinstance(properties, dict):
        return frozenset()
    found = {kind for name, value in properties.items() for kind in _parameter_kinds(name, value)}
    if names_a_repository(properties):
        found.add("repo")
    if any(free_text_word(name, value) in SEARCH_KEYS + LONG_TEXT_KEYS for name, value in properties.items()):
        # material a request pastes and points at ("has anyone reported this?" above a trace) can only go to
        # a search's or a write's free text (``routing.Router.route_vector``); no tool requires it, which a
        # request without material would otherwise lack
        found.add("text")
    if any(str(key).lower() in OWNER_KEYS | {"query", "q"} for key in properties):
        found.add("account")  # a search says it in its query: ``org:quartz-ai``
    return frozenset(found)


def free_text_word(name: object, schema: object) -> str | None:
    """The last word of a free-text parameter's name (a string without options: ``issue_body`` → body), or
    None for any other parameter. What it ends in says what text it holds (``SEARCH_KEYS``,
    ``LONG_TEXT_KEYS``), for the router and for placement alike."""
    if not isinstance(schema, dict) or schema.get("type") != "string" or "enum" in schema:
        return None
    words = split_identifier(str(name)).lower().split()
    return words[-1] if words else None


def names_a_slug(text: str) -> bool:
    """Whether ``text`` names a repository as ``owner/repo`` that is no file name: "lib/response.js" and
    "src/app.py" take the repository slot as well (``query_slots``: "vercel/next.js" is spelled the same
    way), but they are no sign of a hosted repository, and a local server's tools must not pay for them.
    Nor is a date or a fraction ("12/3"): a slug has a letter."""
    rest = URL_PATTERN.sub(" ", text)
    return any(
        re.search("[A-Za-z]", slug.group(0))
        and (not (file := FILE_PATTERN.match(rest, slug.start())) or file.end() < slug.end())
        for slug in REPO_PATTERN.finditer(rest)
    )


def holds_a_repository(schema: dict[str, Any] | None) -> bool:
    """Whether a request's ``owner/repo`` has somewhere to go in this tool: ``owner`` and ``repo``
    parameters, or a search tool's free-text ``query``, which can say it (``repo:octo-org/app …``, as
    GitHub's search tools document). A local git server's ``git_blame(repo_path, file_path)`` has
    nowhere to put "expressjs/express"."""
    properties = (schema or {}).get("properties") or {}
    if not isinstance(properties, dict):
        return False
    return names_a_repository(properties) or any(str(key).lower() in ("query", "q") for key in properties)


def names_a_repository(keys: Iterable[object]) -> bool:
    """Keys that hold a repository between them: an ``owner`` and a ``repo`` (GitHub's and Gitea's way)."""
    return {"owner", "repo"} <= {str(key).lower() for key in keys}


_PATH_WORD = re.compile(r"\bpath\b", re.I)


def names_a_project_path(name: object, schema: object) -> bool:
    """A parameter for a project addressed by its path, GitLab's way to name a repository (``project_id``:
    "Project ID or URL-encoded path"). A project known only by an id or a key (Linear's, Jira's) is no
    repository."""
    description = schema.get("description") if isinstance(schema, dict) else None
    words = split_identifier(str(name)).lower().split()
    return "project" in words and isinstance(description, str) and bool(_PATH_WORD.search(description))


def _parameter_kinds(name: object, schema: object) -> set[str]:
    """The slot kinds one parameter can hold: a number by its type, a URL or a path by its name."""
    declared = schema.get("type") if isinstance(schema, dict) else None
    types = {t for t in (declared if isinstance(declared, list) else [declared]) if isinstance(t, str)}
    lowered = str(name).lower()
    kinds = set()
    if types & {"integer", "number"}:
        kinds.add("number")
    if "url" in lowered or "uri" in lowered or "link" in lowered:
        kinds.add("url")
    if names_a_path(lowered):
        kinds.add("path")
    if holds_a_time(str(name)):
        kinds.add("time")
    return kinds


def holds_a_time(key: str) -> bool:
    """A parameter named for a time of day (``time``, ``start_time``, ``meetingTime``), not a zone or a
    stamp (``timezone``, ``timestamp``, ``time_zone``)."""
    words = split_identifier(key).lower().split()
    return "time" in words and not {"zone", "stamp"} & set(words)


def names_a_path(key: str) -> bool:
    """A parameter whose name says it holds a path or a file (``path``, ``file_path``, ``filename``)."""
    lowered = key.lower()
    return "path" in lowered or "file" in lowered
