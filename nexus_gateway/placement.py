"""Placing what the request states: after grounding, the entities a request names go where they belong.

The 0.5B model leaves stated values out, swaps them or puts them under the wrong key; each function here
is one generic rule that puts a stated entity in its place (``owner/repo`` pairs, numbers by their cue
words, a pull request's branches by "from"/"into", quoted text by the word before it, a number or a
branch copied from an earlier turn by its kind). Each takes and returns the arguments object, so
:func:`place_stated` is their pipeline; each was measured on its own (``docs/arguments.md``).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from .affordance import (
    LONG_TEXT_KEYS,
    OWNER_KEYS,
    PAGINATION,
    REPO_PATTERN,
    SEARCH_KEYS,
    URL_PATTERN,
    free_text_word,
    named_accounts,
    names_a_path,
)
from .decoding import could_hold
from .grounding import spelled_numbers
from .lexical import QUERY_STOPWORDS, split_identifier, stem, tokenize
from .mentions import (
    FREE_TEXT,
    GENERIC_KEY_WORDS,
    branch_roles,
    named_items,
    number_cues,
    one_from_an_end_cues,
    properties,
    quoted_roles,
    quoted_spans,
    sayer,
    stated_branches,
    stated_entities,
    without_quotes,
)
from .pasted import Pasted, headline, points_at_material, points_back, split_pasted
from .window import argument_items

if TYPE_CHECKING:
    from .window import SessionWindow


_FILE_NAME = re.compile(r"\.(?:[a-z]{1,4}|[ch]pp)$", re.IGNORECASE)
_REPO_URL = re.compile(r"https?://[\w.-]+/([\w.-]+)/([\w.-]+)")


# "the next.js repo under vercel", "the api repository owned by acme-corp"
_REPO_UNDER = re.compile(
    r"\b(?:the\s+)?([\w][\w.-]*)\s+(?:repo|repository)\s+(?:under|owned\s+by|belonging\s+to)\s+(?:the\s+)?([\w][\w-]*)",
    re.IGNORECASE,
)


def repositories(text: str) -> list[tuple[str, str]]:
    """``owner/repo`` pairs a request names, in order: from URLs, then bare ``owner/repo`` shapes, then
    "the X repo under Y"."""
    found = [(m.group(1), m.group(2).removesuffix(".git")) for m in _REPO_URL.finditer(text)]
    for match in REPO_PATTERN.finditer(URL_PATTERN.sub(" ", text)):
        owner, _, repo = match.group(0).partition("/")
        found.append((owner, repo.rstrip(".")))
    for match in _REPO_UNDER.finditer(URL_PATTERN.sub(" ", text)):
        if match.group(1).lower() not in _NOT_A_NAME and match.group(2).lower() not in _NOT_A_NAME:
            found.append((match.group(2), match.group(1)))
    return list(dict.fromkeys(found))


def stated_owner(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """A login the request names as where or whose ("Get details of project 3 in octo-org", "show me field
    123456 in project 5 of dana-k") goes to the tool's one owner key when the model left it out: the 0.5B
    model did, for an optional ``owner`` beside a project number (session 64). Only when the request
    names no ``owner/repo`` (then :func:`anchor_repository` places the owner) and one such login is in no
    value."""
    props = schema.get("properties") or {}
    keys = [key for key in props if key.lower() in OWNER_KEYS and props[key].get("type", "string") == "string"]
    if len(keys) != 1 or arguments.get(keys[0]) or repositories(intent):
        return arguments
    written = " ".join(str(value) for value in arguments.values()).lower()
    logins = [login for login in dict.fromkeys(named_accounts(without_quotes(intent))) if login.lower() not in written]
    return {**arguments, keys[0]: logins[0]} if len(logins) == 1 else arguments


def own_repository_elsewhere(arguments: dict[str, Any]) -> dict[str, Any]:
    """The call's own ``owner/repo`` in another argument is the model echoing it: a branch, base or head
    equal to it, or an item of its assignees, labels or reviewers. Only the call's own pair: a branch
    such as ``hotfix/invoice-rounding`` has the same shape, and a team such as ``acme-corp/backend-team``
    is a real reviewer."""
    own = f"{arguments.get('owner')}/{arguments.get('repo')}"
    kept: dict[str, Any] = {}
    for key, value in arguments.items():
        if key == "owner" or "repo" in key.lower():  # the pair itself, or a key meant to hold repositories
            kept[key] = value
        elif isinstance(value, list):
            if items := [v for v in value if v != own]:
                kept[key] = items
        elif value != own:
            kept[key] = value
    return kept


def anchor_repository(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """Entity pre-extraction for ``owner``/``repo`` schemas: when the request names ``owner/repo``
    pairs and the model's pair is none of them, the first one the request names wins (the 0.5B model
    swaps the halves, takes a branch name, or keeps the previous turn's repository after "same for
    pallets/flask"). Where the schema also takes a file path, ``render/shader.cpp`` is a path, not a
    repository, and the model's pair stands."""
    props = schema.get("properties") or {}
    if "owner" not in props or "repo" not in props:
        return arguments
    takes_path = any(names_a_path(name) for name in props)
    pairs = [p for p in repositories(intent) if not (takes_path and _FILE_NAME.search(p[1]))]
    if not pairs or (arguments.get("owner"), arguments.get("repo")) in pairs:
        return arguments
    owner, repo = pairs[0]
    return {**arguments, "owner": owner, "repo": repo}


_OTHER_PAIR = re.compile(r"(\w+?)_?owner", re.IGNORECASE)


def other_repository(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """A second ``owner/repo`` the request names goes to the schema's other pair of repository keys
    (``related_owner``/``related_repo``, ``item_owner``/``item_repo``): "octo-org/app#10 no longer
    blocks octo-org/app-backend#15" links two repositories. Only when the call's own pair is the first
    one named, the request names exactly one more, and the other pair is empty."""
    props = schema.get("properties") or {}
    pairs = [
        (match.group(0), f"{match.group(1)}{key[len(match.group(1)) : -len('owner')]}repo")
        for key in props
        if (match := _OTHER_PAIR.fullmatch(key))
    ]
    pairs = [(owner, repo) for owner, repo in pairs if repo in props]
    named = repositories(intent)
    own = (arguments.get("owner"), arguments.get("repo"))
    if len(pairs) != 1 or len(named) != 2 or named[0] != own:
        return arguments
    owner_key, repo_key = pairs[0]
    if owner_key in arguments or repo_key in arguments:
        return arguments
    return {**arguments, owner_key: named[1][0], repo_key: named[1][1]}


_MY_REPOSITORY = re.compile(r"\bmy ([\w.-]+) (?:repo|repository)\b", re.IGNORECASE)
_LOGIN = re.compile(r"\blogin=([\w.-]+)")


def my_repository(arguments: dict[str, Any], schema: dict[str, Any], intent: str, earlier: str) -> dict[str, Any]:
    """ "my dotfiles repo" names the repository and says the owner is the user: the 0.5B model writes
    ``owner: "dotfiles"`` (or ``"develop"``, a branch from the same request) and ``repo: "repo"``. The
    repository is the named word; the owner is the user's login when an earlier result in the session
    says it (``get_me`` → ``login=dana-k``), else it is left out and asked for. A request that names an
    ``owner/repo`` pair is left to :func:`anchor_repository`."""
    props = schema.get("properties") or {}
    match = _MY_REPOSITORY.search(intent)
    if "owner" not in props or "repo" not in props or match is None or repositories(intent):
        return arguments
    fixed = {key: value for key, value in arguments.items() if key != "owner"}
    fixed["repo"] = match.group(1)
    if login := _LOGIN.findall(earlier):
        fixed["owner"] = login[-1]
    return fixed


_ORG = re.compile(r"\b([\w][\w.-]*) (?:org|organization)\b|\b(?:org|organization) ([\w][\w.-]*)", re.IGNORECASE)
_NOT_A_NAME = frozenset(["the", "an", "a", "my", "our", "your", "their", "this", "that", "whole", "entire", "same"])


# A programming language the request names for what it searches: "a Python library", "in Python files",
# "written in Rust" (not "Python 3.12", a version; "Go" only with its capital, "go" is a verb)
_LANGUAGES = (
    r"python|javascript|typescript|golang|rust|java|kotlin|swift|ruby|php|scala|elixir|haskell|dart|lua|perl|"
    r"julia|clojure|erlang|zig|c\+\+|c#"
)
_THINGS_IN_A_LANGUAGE = (
    r"librar(?:y|ies)|packages?|projects?|repos?|repositor(?:y|ies)|code|files?|modules?|frameworks?|"
    r"tools?|apps?|scripts?|sources?"
)
_NAMED_LANGUAGE = re.compile(
    rf"(?<![\w+#-])(?:(?i:{_LANGUAGES})|Go)(?![\w+#-])\s+(?i:{_THINGS_IN_A_LANGUAGE})\b"
    rf"|\b(?i:written\s+in)\s+((?i:{_LANGUAGES})|Go)(?![\w+#-])"
)
_LANGUAGE_VALUES = {"golang": "go", "c++": "cpp", "c#": "csharp"}


def named_language(intent: str) -> str | None:
    """The ``language:`` value of the programming language ``intent`` names for what it looks for."""
    match = _NAMED_LANGUAGE.search(URL_PATTERN.sub(" ", intent))
    if match is None:
        return None
    name = (match.group(1) or match.group(0).split()[0]).lower()
    return _LANGUAGE_VALUES.get(name, name)


def scope_qualifiers(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """A search whose query parameter documents the ``repo:owner/repo`` or ``org:`` qualifier (GitHub's
    code and commit search do) and whose schema has no ``owner``/``repo`` of its own gets the scope the
    request names added to the query: "find usages of useSyncExternalStore in facebook/react" otherwise
    searches all of GitHub. The 0.5B model writes the search words and leaves the scope out. So with
    ``language:``, where the query documents it (code and repository search): "a well-maintained
    open-source Python library for parsing PDFs" searched all languages."""
    props = schema.get("properties") or {}
    query, query_schema = arguments.get("query"), props.get("query")
    if not isinstance(query, str) or not isinstance(query_schema, dict) or "owner" in props or "repo" in props:
        return arguments
    documented = str(query_schema.get("description", ""))
    scopes: list[str] = []
    language = named_language(intent) if "language:" in documented and "language:" not in query.lower() else None
    if language:
        query = f"{query} language:{language}"
    if "repo:" in documented:
        scopes += [f"repo:{owner}/{repo}" for owner, repo in repositories(intent)]
    if "org:" in documented and not scopes:
        for match in _ORG.finditer(URL_PATTERN.sub(" ", intent)):
            name = match.group(1) or match.group(2)
            if name.lower() not in _NOT_A_NAME:
                scopes.append(f"org:{name}")
                break
    for scope in scopes:
        if scope.lower() in query.lower():
            continue
        bare = rf"(?<![\w:/-]){re.escape(scope.partition(':')[2])}(?![\w/-])"
        query, named = re.subn(bare, scope, query, count=1)  # named, but not as a qualifier
        if not named:
            query = f"{query} {scope}"
    return {**arguments, "query": query}


def whole_path(arguments: dict[str, Any], intent: str) -> dict[str, Any]:
    """A file the request names with its folders (``render/shader.cpp``) is meant whole: the 0.5B model
    sometimes keeps only the last part (``path: "shader.cpp"``). A path value that ends exactly one
    ``/``-joined word of the request takes that word; the ``owner/repo`` the call already names is not
    a path."""
    repository = f"{arguments.get('owner')}/{arguments.get('repo')}"
    words = {w.strip("'\"`()[]{}<>,;:!?").rstrip(".") for w in intent.split()}
    paths = [w for w in words if "/" in w and w != repository and not URL_PATTERN.match(w)]
    whole = dict(arguments)
    for key, value in arguments.items():
        if isinstance(value, str) and value.strip("/") and names_a_path(key):
            longer = [w for w in paths if w.endswith("/" + value.lstrip("/"))]
            if len(longer) == 1:
                whole[key] = longer[0]
    return whole


_REQUEST_WORD = re.compile(r"[\w.-]*\w")


def whole_word(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """An identifier the request states inside a longer word is meant whole: the 0.5B model writes
    ``owner: "astro"`` for "withastro" and ``cveId: "2024-3094"`` for "CVE-2024-3094". A top-level
    string that is no word of the request but ends exactly one takes that word; prose, enum values
    and values that are words of their own are left alone. Only a value that ends the word: one that
    begins it is a word's stem ("gas" of "gas-powered", "asc" of "ascending", "tablespoon" of
    "tablespoons"), and text without spaces between words (Chinese, Korean) holds values mid-word."""
    words = set(_REQUEST_WORD.findall(URL_PATTERN.sub(" ", intent)))
    whole = dict(arguments)
    for key, raw in properties(schema):
        value = arguments.get(key)
        if not isinstance(value, str) or len(value) < 2 or "enum" in raw or FREE_TEXT.search(key.lower()):
            continue
        if value in words or re.search(r"\s", value):
            continue
        longer = [w for w in words if w.endswith(value) and w[: -len(value)].isascii()]
        if len(longer) == 1:
            whole[key] = longer[0]
    return whole


def names_an_identifier(key: str) -> bool:
    """A key named as an id or a number (``run_id``, ``issue_number``, ``threadID``): such a key takes a
    record's id from an earlier result or call, where a key of another kind must not."""
    return bool({key, *tokenize(key)} & {"id", "number"})


def _numeric_keys(schema: dict[str, Any]) -> dict[str, tuple[set[str], bool]]:
    """Top-level keys that hold a number: each key's words and whether it takes a string of digits."""
    keys = {}
    for key, raw in properties(schema):
        kind = raw.get("type")
        words = set(tokenize(key))
        if kind in ("integer", "number") or (kind == "string" and "enum" not in raw and names_an_identifier(key)):
            keys[key] = (words, kind == "string")
    return keys


def cued_numbers(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """A number goes to the key its cue words name: "issue ID 2718281828" to ``sub_issue_id`` and "#12"
    to ``issue_number`` (the 0.5B model swaps them), "run 9876543210" to ``run_id`` rather than
    ``job_id``, "50 per page" to ``perPage`` rather than ``page``, "epic #12" to ``issue_number`` over
    the number of the previous turn's issue. A key fits a number by the cue words among its own words
    (``#`` counts for a ``…number`` key); a number moves only to the one key that fits it best, over a
    value the request does not state, and leaves the keys that fit it less."""
    keys = _numeric_keys(schema)
    if not keys:
        return arguments
    cues = number_cues(intent)
    if any(value == 1 and not isinstance(value, bool) for value in arguments.values()):
        cues += one_from_an_end_cues(intent)  # "the first line": the model's tail 1 is head 1
    stated = Counter(number for number, _ in cues)
    # how well each key fits each number: the words the cue says, then the fewest it does not ("page" is
    # ``page`` before ``perPage``); a cue word the key's description says counts half ("the first 5
    # lines" is ``head``, "returns only the first N lines", not ``tail``)
    described = {key: set(tokenize(str(raw.get("description", "")))) for key, raw in properties(schema) if key in keys}
    fit: dict[str, dict[str, float]] = {}
    cue_words: dict[str, set[str]] = {}
    for number, said in cues:
        cue_words.setdefault(number, set()).update(said)
        fits = {
            key: len(said & words)
            + len(said & (described[key] - words)) / 2
            + ("#" in said and "number" in words)
            - len(words - said) / 100
            for key, (words, _) in keys.items()
        }
        fit[number] = {key: max(value, fit.get(number, {}).get(key, value)) for key, value in fits.items()}
    wanted: dict[str, list[str]] = {}
    for number, fits in fit.items():
        ranked = sorted(fits.values(), reverse=True)
        best = [key for key, value in fits.items() if value == ranked[0]]
        if ranked[0] > 0.4 and len(best) == 1:  # a word of its name, or one of its description
            wanted.setdefault(best[0], []).append(number)
    placed = dict(arguments)
    elsewhere = {n for numbers in wanted.values() for n in numbers}
    for key, numbers in wanted.items():
        # a number its name's words cue comes before one only its description's do: "…/pull/318#discussion_
        # r1650022311" gives ``comment_id`` (described as a "pull request review comment") the anchor's id
        numbers = [n for n in numbers if keys[key][0] & cue_words[n]] or numbers
        number = numbers[0]
        current = arguments.get(key)
        if len(numbers) > 1:
            continue
        held = str(current)
        if current is not None and held not in elsewhere and fit.get(held, {}).get(key, -1.0) >= fit[number][key]:
            continue  # the key holds another number the request states, one that fits it as well
        if stated[number] == 1:  # said once, it leaves every key that does not want it most
            for other, value in list(placed.items()):
                if other != key and other in keys and str(value) == number and number not in wanted.get(other, ()):
                    del placed[other]
        placed[key] = number if keys[key][1] else int(number)
    return placed


_SOURCE_KEY = re.compile(r"head|source.*|from.*", re.IGNORECASE)
_TARGET_KEY = re.compile(r"base|target.*", re.IGNORECASE)


def _branch_role_keys(schema: dict[str, Any]) -> dict[str, str]:
    """The schema's key for each branch role (``source``: ``head``, ``source_branch``, ``from_branch``;
    ``target``: ``base``, ``target_branch``), "" where two keys could take a role."""
    keys: dict[str, str] = {}
    for key, raw in properties(schema):
        if raw.get("type") != "string" or "enum" in raw:
            continue
        for role, pattern in (("source", _SOURCE_KEY), ("target", _TARGET_KEY)):
            if pattern.fullmatch(key) and "branch" in f"{key} {raw.get('description', '')}".lower():
                keys[role] = key if role not in keys else ""
    return keys


def pull_request_branches(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """The branches a request merges from and into go to the schema's source and target keys (``head``
    and ``base``, ``source_branch`` and ``target_branch``, ``from_branch``): "fix/tooltip -> develop",
    "a PR against develop", "a branch off main". The models leave one out or swap them; a key already
    holding another branch the request states keeps it."""
    roles = branch_roles(intent)
    keys = _branch_role_keys(schema)
    placed = dict(arguments)
    for role, name in roles.items():
        key = keys.get(role, "")
        current = arguments.get(key)
        # a branch the request states for this key is kept ("- head: x … a review from ivan-p")
        if key and (not isinstance(current, str) or current in roles.values() or current not in intent):
            placed[key] = name
            # the other role's key holding this branch had it in the wrong role ("any PRs from the
            # branch x" filled ``base`` with x): one branch is not both ends of a pull request
            other = keys.get("target" if role == "source" else "source", "")
            if other and other not in (keys.get(r) for r in roles) and placed.get(other) == name:
                del placed[other]
    return placed


_BRANCH_NAMED_KEY = re.compile(r"branch|ref", re.IGNORECASE)


def stated_homes(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """A branch or a file the request states goes to the key that holds it when no value holds it yet:
    the models leave it out ("delete old/legacy_api.py from the main branch" without ``path`` and
    ``branch``) or write another word of the request ("… on the release/2.4 branch, not on main" gave
    ``ref: "main"``). Only when one such entity is unplaced and one key can take it: for a branch a
    ``branch``/``ref`` key first, else one whose description says it takes a branch (``sha`` of
    ``list_commits``), empty or holding no branch the request states; for a file an empty path key."""
    text = without_quotes(URL_PATTERN.sub(" ", intent))
    written = " ".join(str(v) for v in arguments.values()).lower()
    placed = dict(arguments)
    branches = stated_branches(text)
    paths = [name for kind, name in stated_entities(intent) if kind == "path"]
    for kind, names in (("branch", branches), ("path", paths)):
        unplaced = [name for name in names if name.lower() not in written]
        if len(unplaced) != 1:
            continue
        homes = [
            key
            for key, raw in properties(schema)
            if could_hold(kind, key, raw, unplaced[0])
            and (placed.get(key) is None or (kind == "branch" and placed.get(key) not in branches))
            and key not in ("head", "base")  # a pull request's branches are placed by their roles
        ]
        by_name = [key for key in homes if kind == "path" or _BRANCH_NAMED_KEY.search(key)]
        chosen = by_name or homes
        if len(chosen) == 1:
            placed[chosen[0]] = unplaced[0]
    return placed


# The text after a request's last colon, to its end: "search issues across all of github: memory leak
# after websocket reconnect"
_COLON_TAIL = re.compile(r":\s+([^:'\"`]+?)[.!?]?\s*$")


def whole_colon_tail(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """Text the request gives after its last colon is meant whole: the 0.5B model wrote ``query:
    "memory leak"`` for "search issues across all of github: memory leak after websocket reconnect". A
    free-text value (a query, a body, a title) that is the tail's first words, short of its end, takes
    the whole tail."""
    tail = _COLON_TAIL.search(URL_PATTERN.sub(" ", intent))
    if tail is None:
        return arguments
    text = tail.group(1).strip()
    whole = dict(arguments)
    for key, raw in properties(schema):
        value = arguments.get(key)
        if not isinstance(value, str) or "enum" in raw or not FREE_TEXT.search(key.lower()):
            continue
        if value.strip() and text.startswith(value.strip() + " "):
            whole[key] = text
    return whole


def pasted_material(arguments: dict[str, Any], schema: dict[str, Any], pasted: Pasted) -> dict[str, Any]:
    """What a request pastes (``pasted.split_pasted``: a trace, a log, code) is the value of the tool's
    long-text key: "Open an issue in acme/api titled 'KeyError on login' with this trace:" and the trace
    came out with a title and no body, and the 0.5B model left a comment's required body out the same
    way (session 58). The first of ``LONG_TEXT_KEYS`` that exactly one string key ends in takes it, when
    the model wrote no text of its own there (``_no_text_of_its_own``)."""
    if not pasted.material:
        return arguments
    for word in LONG_TEXT_KEYS:
        homes = _text_keys_named(schema, word)
        if homes:
            break
    else:
        return arguments
    if len(homes) > 1 or not _no_text_of_its_own(arguments, homes[0], pasted):
        return arguments
    return {**arguments, homes[0]: pasted.material}


_QUALIFIER = re.compile(r"(?<!\S)-?[a-z]+:\S+")  # a search qualifier: repo:acme/api, is:open, -label:bug
# How a request asks after a known problem, not what the problem is: "has anyone reported this", "any
# open bug for it", "did someone already fix this"
_ASKING_AFTER_TEXT = """anyone someone somebody anybody reported report reports known existing already fix fixed fixes
bug bugs issue issues problem problems ticket tickets open opened similar related mention mentions mentioning about
search find look looking check seen happen happens happened any one"""
_ASKING_AFTER = frozenset(_ASKING_AFTER_TEXT.split())


def searched_material(arguments: dict[str, Any], schema: dict[str, Any], tool: str, pasted: Pasted) -> dict[str, Any]:
    """A search about what the request pastes searches its headline (``pasted.headline``: the exception
    and its message). "Has anyone reported this in acme/api? <trace>" came out with no query at all,
    "Any open bug for this one?" searched ``bug`` and "Did someone already fix this in vercel/next.js?"
    ``fix-nextjs`` (0.5B model, session 60). The tool's one search key takes the headline, the query's
    qualifiers kept (``repo:acme/api``), when the request points at its material ("this", "the error
    above": ``pasted.points_back``) and the query has no word of its own (``_words_of_its_own``). A
    search key the schema leaves optional is not added."""
    line = headline(pasted.material) if pasted.material and points_back(pasted.request) else ""
    homes = [key for word in SEARCH_KEYS for key in _text_keys_named(schema, word)]
    if not line or len(homes) != 1:
        return arguments
    home = homes[0]
    query = arguments.get(home, "" if home in schema.get("required", []) else None)
    others = [str(value) for key, value in arguments.items() if key != home]
    if not isinstance(query, str) or _words_of_its_own(query, [split_identifier(tool), *others], pasted.request):
        return arguments
    return {**arguments, home: " ".join([line, *_QUALIFIER.findall(query)])}


def _words_of_its_own(query: str, others: list[str], request: str) -> bool:
    """Whether a search query says what to search for: a word besides its qualifiers, pointing and
    function words, words of asking after a problem (``_ASKING_AFTER``), and the words of ``others``
    (the tool's name, the other arguments' values), of its qualifiers' values and of the repositories
    the request names (``billing`` for "find where this is thrown in acme/billing")."""
    qualifiers = _QUALIFIER.findall(query)
    words = " ".join(word for word in query.split() if word not in qualifiers)
    named = [*others, *(word.split(":", 1)[1] for word in qualifiers)]
    named += [f"{owner} {repo}" for owner, repo in repositories(request)]
    spelt = {re.sub(r"[^a-z0-9]", "", value.lower()) for value in " ".join(named).split()}  # "nextjs": next.js
    said = QUERY_STOPWORDS | _ASKING_AFTER | set(re.findall(r"[a-z0-9]+", " ".join(named).lower())) | spelt
    return bool(words.strip()) and not points_at_material(words, said)


def _text_keys_named(schema: dict[str, Any], word: str) -> list[str]:
    """The free-text keys (strings without options) whose name ends in ``word``: ``body``, ``issue_body``."""
    return [key for key, raw in properties(schema) if free_text_word(key, raw) == word]


def _no_text_of_its_own(arguments: dict[str, Any], key: str, pasted: Pasted) -> bool:
    """Whether ``arguments[key]`` is missing or copied: part of the material, another argument's value
    (a gist's ``content`` that is its file name), or the request's own unquoted words ("with this curl
    output" gave ``content: "curl output"``). Quoted text is the user's value, and a summary the model
    wrote is its own."""
    if key not in arguments:
        return True
    value = arguments[key]
    if not isinstance(value, str):
        return False
    text = value.strip()
    if not text:
        return True
    others = {str(other).strip() for name, other in arguments.items() if name != key}
    return text in pasted.material or text in others or text.lower() in without_quotes(pasted.request).lower()


def bare_quotes(arguments: dict[str, Any], intent: str) -> dict[str, Any]:
    """A value that wraps quoted text in words of its own is the quoted text: the 0.5B model wrote
    ``content: "meeting notes.md w/ 'meeting notes 12/3: ship v2 friday'"`` for "creat a gist notes.md
    w/ 'meeting notes 12/3: ship v2 friday'". Only a value that holds the span with its quote marks and
    is not itself text of the request, and a span no other argument holds: a file's content that
    repeats the commit message quoted for ``message`` is content."""
    bare = dict(arguments)
    held = {value for value in arguments.values() if isinstance(value, str)}
    for key, value in arguments.items():
        if not isinstance(value, str) or value in intent:
            continue
        inside = [
            span for span in quoted_spans(intent) if (f"'{span}'" in value or f'"{span}"' in value) and span not in held
        ]
        if len(inside) == 1:
            bare[key] = inside[0]
    return bare


def _names_key(word: str, key: str, description: str) -> tuple[bool, bool]:
    """Does the role word name the key by its own words ("titled" → ``title``), or by its description's
    ("description" → ``body``: "New description")?"""
    by_name = any(len(w) >= 4 and (word.startswith(w) or w.startswith(stem(word))) for w in tokenize(key))
    return by_name, stem(word) in tokenize(" ".join(description.split()[:8]))


def quotes_where_named(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """Quoted text goes to the key the word before it names: "set the description to 'Implements …'"
    to ``body`` (described as "New description"), not ``title``, where the 0.5B model put it. The key
    is the one string key whose name says the word, else the one whose description does; the quote
    leaves the keys that hold it whole, and a key holding another quote, or this one inside more text,
    keeps it."""
    quotes = set(quoted_spans(intent))
    placed = dict(arguments)
    for span, word in quoted_roles(intent):
        named = [
            (key, *_names_key(word, key, str(raw.get("description", ""))))
            for key, raw in properties(schema)
            if raw.get("type") == "string" and "enum" not in raw
        ]
        by_name = [key for key, name, _ in named if name]
        # a generic word ("the host name 'pg.example.org'") names no key by description
        by_description = [key for key, _, said in named if said and word not in GENERIC_KEY_WORDS]
        homes = by_name or by_description
        held = placed.get(homes[0]) if len(homes) == 1 else None
        if len(homes) != 1 or held in quotes or (isinstance(held, str) and span in held):
            continue  # a key that holds the span already holds it in words of its own ("track:Dil Nu …")
        for key, value in arguments.items():
            if value == span and key != homes[0]:
                placed.pop(key, None)
        placed[homes[0]] = span
    return placed


# "Rename the label 'bug' to 'type: bug'", "rename branch old to new-name": the value after "to".
_RENAMED_TO = re.compile(r"""\brename\b[^.;!?]*?\bto\s+(?:'([^']+)'|"([^"]+)"|([^\s,;!?]+))""", re.I)


def renamed_to(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """The new name a request renames something to goes to the one key named for a new one (``new_name``,
    ``newName``, ``new_title``): the 0.5B model wrote "Rename the label 'bug' to 'type: bug'" into
    ``label_write``'s ``description``. The value leaves any other key that holds it whole."""
    said = _RENAMED_TO.search(intent)
    homes = [key for key, raw in properties(schema) if raw.get("type") == "string" and _names_a_new_one(key)]
    if said is None or len(homes) != 1:
        return arguments
    new = next(group for group in said.groups() if group).rstrip(".")
    placed = {key: value for key, value in arguments.items() if key == homes[0] or str(value).lower() != new.lower()}
    return {**placed, homes[0]: new}


def _names_a_new_one(key: str) -> bool:
    words = split_identifier(key).lower().split()
    return len(words) == 2 and words[0] == "new" and words[1] in ("name", "title")


def stated_kinds(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """A key that holds the kind of another key's value (``owner_type`` of ``owner``) takes the option the
    request says beside that value: "under the acme-corp org" → ``org``, "project 5 of user dana-k" →
    ``user`` (an option that begins the word counts: "organization"). The 0.5B model left it out, and
    GitHub's ``projects_write`` needs it to create a project."""
    placed = dict(arguments)
    for key, raw in properties(schema):
        words = split_identifier(key).lower().split()
        if len(words) < 2 or words[-1] != "type":
            continue
        base = next((other for other in placed if split_identifier(other).lower().split() == words[:-1]), None)
        if base is None or not isinstance(placed[base], str):
            continue
        value = re.escape(placed[base])
        for option in (option for option in raw.get("enum") or () if isinstance(option, str) and len(option) > 2):
            kind = rf"{re.escape(option)}\w*"
            beside = rf"(?<![\w/-]){kind}\s+{value}(?![\w/-])|(?<![\w/-]){value}\s+{kind}\b"
            if re.search(beside, intent, re.IGNORECASE):
                placed[key] = option
    return placed


def carried_identifiers(
    arguments: dict[str, Any], schema: dict[str, Any], last: dict[str, Any] | None
) -> dict[str, Any]:
    """An identifier the last turn's call used under the same key goes on when the request points back
    and the model left it out: "rerun just the jobs that failed" after ``get_job_logs(run_id=…)`` means
    that run (the 0.5B model closed the object before ``run_id``). Only keys named as an id or a number
    whose value fits the schema's type; a value the model wrote is never replaced."""
    if not last:
        return arguments
    carried = dict(arguments)
    for key, raw in properties(schema):
        value = last.get(key)
        if key in arguments or value is None or not names_an_identifier(key):
            continue
        kind = raw.get("type")
        if (kind in ("integer", "number") and type(value) is int) or (kind == "string" and isinstance(value, str)):
            carried[key] = value
    return carried


def window_numbers_of_their_kind(
    arguments: dict[str, Any], schema: dict[str, Any], intent: str, earlier: SessionWindow
) -> dict[str, Any]:
    """A number the request does not state, copied from an earlier turn, stays only in a key of its
    kind: "read that text file again" after "add 19 and 23" came out ``head: 23, tail: 19``. Its kind is
    the words of the keys earlier calls gave it and of what it numbers in their results
    (:meth:`SessionWindow.number_kinds`); a key named as an id or a number takes a record's number from
    a result, and a required key keeps what the model wrote (leaving it out would only ask). A number
    with no kind at all (the ``42`` of get-sum's text result) is no more a line count than one with the
    wrong kind: it too stays only in a key named as an id or a number."""
    stated = set(re.findall(r"\d+", intent)) | set(spelled_numbers(intent))
    kinds: dict[int, set[str]] = {}  # the key names earlier calls gave the number, and its kind's words
    for turn in earlier.turns:
        for key, value in turn.arguments.items():
            if type(value) is int:
                kinds.setdefault(value, set()).add(key)  # ``a`` of get-sum has no kind words
    for number, words in earlier.number_kinds().items():
        kinds.setdefault(number, set()).update(words)
    required = set(schema.get("required") or [])
    kept = dict(arguments)
    for key, value in arguments.items():
        if type(value) is not int or str(value) in stated or key in required:
            continue
        if not names_an_identifier(key) and not {key, *tokenize(key)} & kinds.get(value, set()):
            del kept[key]
    return kept


def result_values_unasked(
    arguments: dict[str, Any], schema: dict[str, Any], intent: str, earlier: SessionWindow
) -> dict[str, Any]:
    """An optional key whose value the model copied from an earlier turn's result is left out unless the
    request states the value, names the key, or points at it ("open that file" → ``path``, whose
    description says "file"): after ``create_branch`` returned the new branch's commit, "add a file
    docs/API.md on that branch …" came with ``sha`` set to that commit, which ``create_or_update_file``
    reads as the blob of a file to replace ("that branch" points at ``branch``, not at ``sha``). What
    earlier calls *sent* still carries ("same for …" repeats their filters); a key named as an id or a
    number still takes a record's id from a result ("its failing jobs" → ``run_id``), and a required
    key keeps what the model wrote (leaving it out would only ask)."""
    required = set(schema.get("required") or [])
    sent = {
        str(v)
        for turn in earlier.turns
        for v in argument_items(turn.arguments)
        if isinstance(v, str | int) and not isinstance(v, bool)
    }
    results = "\n".join(turn.result for turn in earlier.turns)
    said, pointed = sayer(intent), sayer(" ".join(" ".join(words) for words in _POINTED.findall(intent.lower())))
    kept = dict(arguments)
    for key, raw in properties(schema):
        value = arguments.get(key)
        if key in required or isinstance(value, bool) or not isinstance(value, str | int):
            continue
        text = str(value)
        if text in intent or text in sent or not re.search(rf"(?<![\w.-]){re.escape(text)}(?![\w.-])", results):
            continue
        words = tokenize(key)
        described = tokenize(str(raw.get("description") or ""))
        if names_an_identifier(key) or any(said(w) for w in words) or any(pointed(w) for w in described):
            continue
        del kept[key]
    return kept


# The noun a request points with, and the word after it: "open that file", "on that branch", "its
# failing jobs".
_POINTED = re.compile(r"\b(?:that|this|those|these|same|its|their)\s+(\w+)(?:\s+(\w+))?")


def singled_out_number(
    arguments: dict[str, Any], schema: dict[str, Any], intent: str, earlier: SessionWindow
) -> dict[str, Any]:
    """The number of the record the request singles out ("the top match", "the failed one") goes to the
    empty number key the request names: "close it as a duplicate of the top match" after a list of
    candidate duplicates → ``duplicate_of: 377``; the 0.5B model closed the issue and left the key out.
    Only one record and one such key; pagination keys are never a record's number ("the second page")."""
    numbers = {r["number"] for r in earlier.singled_out(intent) if type(r.get("number")) is int}
    if len(numbers) != 1 or next(iter(numbers)) in arguments.values():
        return arguments
    said = sayer(intent)
    homes = [
        key
        for key, raw in properties(schema)
        if key not in arguments and raw.get("type") in ("integer", "number") and key.lower() not in PAGINATION
        if any(said(word) for word in tokenize(key) if word not in {"number", "id"})
    ]
    return {**arguments, homes[0]: numbers.pop()} if len(homes) == 1 else arguments


def window_numbers_placed(
    arguments: dict[str, Any], schema: dict[str, Any], kinds: dict[int, frozenset[str]]
) -> dict[str, Any]:
    """A number copied from an earlier turn goes to the key its kind names: "why did the failed one
    fail?" after a list of workflow runs gave ``job_id: 9876543210``, a run's id, where ``run_id`` was
    meant. It moves only to an empty key that its kind's words fit better than the key holding it."""
    keys = _numeric_keys(schema)
    placed = dict(arguments)
    for key, value in arguments.items():
        kind = kinds.get(value) if type(value) is int and key in keys else None
        if not kind:
            continue
        fits = {k: len(kind & words) for k, (words, text) in keys.items() if not text}
        better = [k for k, fit in fits.items() if fit > fits.get(key, 0) and k not in placed]
        if len(better) == 1 and fits[better[0]] == max(fits.values()):
            del placed[key]
            placed[better[0]] = value
    return placed


_POINTED_BRANCH = re.compile(r"\b(?:that|this|the same|same|the new|my new|our new)\s+branch\b", re.IGNORECASE)


def pointed_branch(
    arguments: dict[str, Any], schema: dict[str, Any], intent: str, branches: list[tuple[str, str | None]]
) -> dict[str, Any]:
    """ "add a file docs/API.md on that branch" after creating ``docs/api-guide``: the branch the
    session worked on, when it worked on one. The 0.5B model wrote the file's path as the branch. Only a
    key that takes a branch and plays no pull-request role (those are :func:`source_branch_from_window`'s),
    and only where the model's value is no branch the request or the session names."""
    names = list(dict.fromkeys(name for name, _ in branches))
    if len(names) != 1 or not _POINTED_BRANCH.search(intent):
        return arguments
    roles = set(_branch_role_keys(schema).values())
    keys = [key for key, raw in properties(schema) if key not in roles and could_hold("branch", key, raw)]
    known = set(names) | set(stated_branches(intent))
    if len(keys) != 1 or arguments.get(keys[0]) in known:
        return arguments
    return {**arguments, keys[0]: names[0]}


def source_branch_from_window(
    arguments: dict[str, Any], schema: dict[str, Any], intent: str, branches: list[tuple[str, str | None]]
) -> dict[str, Any]:
    """ "open a PR for it into main" after creating and committing to ``docs/api-guide``: the source
    branch is the one the session worked on (the 0.5B model wrote the file's path there). When the
    source key holds no branch the request or the session names, the session's one branch other than
    the target takes it. A branch the session made in another owner's repository (a fork) is written
    ``owner:branch``, as GitHub wants a cross-repository head."""
    roles = _branch_role_keys(schema)
    key = roles.get("source")
    if not key or not branches:
        return arguments
    target = arguments.get(roles.get("target") or "")
    known = {name for name, _ in branches} | set(stated_branches(intent))
    current = arguments.get(key)
    placed = dict(arguments)
    if not isinstance(current, str) or current not in known or current == target:  # a PR from main into main
        others = list(dict.fromkeys(name for name, _ in branches if name != target))
        if len(others) != 1:
            return arguments
        current = placed[key] = others[0]
    owners = {owner for name, owner in branches if name == current and owner}
    owner = arguments.get("owner")
    if ":" not in current and isinstance(owner, str) and len(owners) == 1 and owner not in owners:
        placed[key] = f"{owners.pop()}:{current}"
    return placed


def listed_items(
    arguments: dict[str, Any], schema: dict[str, Any], intent: str, tool: str, earlier: str = ""
) -> dict[str, Any]:
    """A list of choices the model wrote (``fields``) holds the items this request says: it gets the
    named items the model left out ("just tag names and publish dates" came out ``["tag_name"]``) and
    loses those it copied from earlier turns (``earlier``: their text) that no word of the request
    says ("open that file" came out ``fields: ["name", "path"]``, words of an earlier result). An
    item the request says inside another argument ("history" of ``museum: "Natural History
    Museum"``) or inside a longer item of another list ("violin" of "violin lessons" for
    ``instruments`` beside ``services``) is not named; nor is one the tool's own name says ("list
    commits" and ``commit``), which is what the request lists, not a choice, and goes. Items the request does
    not say are kept without a window: a label maps synonyms ("vegetarian" to ``vegan``, "author" to
    ``user``) that no word matches. A list the model left out gets the items the request names when it
    names two or more ("Just tag names and publish dates is fine"); one alone may be the request's
    object rather than a choice ("the bug-labelled issues" names ``labels`` of ``fields``)."""
    object_words = set(tokenize(tool))
    said = sayer(intent)
    copied = sayer(earlier)
    lists = {
        key: raw["items"]["enum"]
        for key, raw in properties(schema)
        if raw.get("type") == "array" and isinstance((raw.get("items") or {}).get("enum"), list)
    }
    named = {}
    for key, enum in lists.items():
        others = [v for k, v in arguments.items() if k != key and isinstance(v, str) and len(v) >= 3]
        rest = re.sub("|".join(re.escape(v) for v in others), " ", intent) if others else intent
        named[key] = [item for item in named_items(enum, rest) if not set(tokenize(item)) <= object_words]
    stems = {key: [{stem(w) for w in tokenize(str(item))} for item in items] for key, items in named.items()}
    placed = dict(arguments)
    for key in lists:
        value = arguments.get(key)
        longer = [words for other, items in stems.items() if other != key for words in items]
        mine = [
            item for item in named[key] if not any({stem(w) for w in tokenize(str(item))} < words for words in longer)
        ]
        if value is None and len(mine) >= 2:
            placed[key] = mine  # "just tag names and publish dates": a list the model left out
            continue
        if not isinstance(value, list):
            continue
        choice_words = {item: set(tokenize(str(item))) - object_words for item in value}
        kept = [
            item
            for item, words in choice_words.items()
            if item in mine or (words and (any(map(said, words)) or not any(map(copied, words))))
        ]
        if kept or mine:
            placed[key] = kept + [item for item in mine if item not in kept]
        else:
            del placed[key]
    return placed


def number_not_id(arguments: dict[str, Any], numbers_by_id: dict[int, int]) -> dict[str, Any]:
    """A parameter named ``…number`` takes a record's number, not its id. Earlier results say
    ``number=73 id=3300112233`` side by side, and the 0.5B model copies the id into ``issue_number``
    about as often as the number; within one record the two are unambiguous
    (:meth:`SessionWindow.numbers_by_id`)."""
    return {
        key: numbers_by_id.get(value, value) if key.lower().endswith("number") and type(value) is int else value
        for key, value in arguments.items()
    }


def split_owner_repo(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``owner: "octo-org/app"`` → ``owner: "octo-org", repo: "app"`` when the schema has both."""
    props = schema.get("properties") or {}
    owner = arguments.get("owner")
    if "repo" in props and isinstance(owner, str) and owner.count("/") == 1:
        head, tail = owner.split("/")
        if head and tail:
            return {**arguments, "owner": head, "repo": tail}
    return arguments


_PAIR = re.compile(r"(?<![\w/:.-])([A-Za-z_][\w.-]*)=(\"[^\"]*\"|'[^']*'|[^\s,;]+)")


def stated_pairs(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """``name=value`` pairs the request gives go to the free-form object key it names: "pass the input
    environment=staging" → ``inputs: {"environment": "staging"}`` (a workflow's inputs). Only a key with
    no fixed properties, one of whose words the request says, that the model left out."""
    pairs = {name: value.strip("'\"").rstrip(".") for name, value in _PAIR.findall(URL_PATTERN.sub(" ", intent))}
    if not pairs:
        return arguments
    said = sayer(without_quotes(intent))
    homes = [
        key
        for key, raw in properties(schema)
        if raw.get("type") == "object" and not raw.get("properties") and key not in arguments
        if any(said(word) for word in tokenize(key))
    ]
    return {**arguments, homes[0]: pairs} if len(homes) == 1 else arguments


# A request written as a list of labelled values, one a line: "- base: release/3.2".
_DESCRIPTION_WORD = re.compile(r"[a-z]+")
_LABELLED_LINE = re.compile(r"^[ \t]*[-*•][ \t]*([A-Za-z][\w \t]{0,30}?)[ \t]*:[ \t]*(\S[^\n]*?)[ \t]*$", re.MULTILINE)


def labelled_lines(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """Each line of a listed request that labels its value gives it to the key the label names: the key
    itself ("- base: release/3.2"), or else the one key whose description says the label ("- description:
    Rounds line items …" is ``body``, "PR description"; the 0.5B model left it out). Only a string key
    the model left out; a label no key or several keys answer to places nothing."""
    lines = _LABELLED_LINE.findall(intent)
    if not lines:
        return arguments
    keys = dict(properties(schema))
    placed = dict(arguments)
    for label, value in lines:
        name = "_".join(label.lower().split())
        homes = [key for key in keys if key.lower() == name]
        if not homes:
            homes = [
                key
                for key, raw in keys.items()
                if name in _DESCRIPTION_WORD.findall(str(raw.get("description", "")).lower())
            ]
        if len(homes) == 1 and homes[0] not in placed and keys[homes[0]].get("type") == "string":
            placed[homes[0]] = value
    return placed


# A flag that returns a thing itself rather than where to fetch it: "Returns actual log content instead of
# URLs" (GitHub's ``get_job_logs``); and a request that wants the links ("the URL of the logs")
_CONTENT_NOT_LINKS = re.compile(r"\bcontent\b[^.]*\binstead\s+of\b[^.]*\b(?:urls?|links?)\b", re.IGNORECASE)
_ASKS_FOR_LINKS = re.compile(r"\b(?:urls?|links?|download\w*)\b", re.IGNORECASE)


def content_not_links(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """A request routed to a tool that can return content or links gets the content unless it asks for
    links: "pull its log output so we can see", "show me the logs of its failing jobs" want to read the
    logs, and a host handed URLs would have to fetch them itself, which an agent in a chat cannot. The
    0.5B model left ``get_job_logs``' ``return_content`` out every time; the grounding keeps a flag only
    when the request says its words."""
    if _ASKS_FOR_LINKS.search(URL_PATTERN.sub(" ", intent)):
        return arguments
    flags = [
        key
        for key, raw in properties(schema)
        if raw.get("type") == "boolean" and _CONTENT_NOT_LINKS.search(str(raw.get("description", "")))
    ]
    return {**arguments, **{key: True for key in flags if key not in arguments}}


# A key's description that says it names the record a write updates: "Issue number to update"
_NAMES_THE_UPDATED = re.compile(r"\bto\s+update\b", re.IGNORECASE)


def update_of_a_named_record(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A write told to create that names the record its schema says is the one to update updates it:
    ``issue_write(method: "create"|"update", issue_number: "Issue number to update")``. The 0.5B model
    chose "create" for "asign hexa-dev/cli-tools issue 45 to ravi-n and nora-t and put it in milestone 3",
    which would have opened a new issue. Never the other way: an update without its number fails upstream
    and asks, where a create made in its place would write a record nobody asked for."""
    props = properties(schema)
    marked = [key for key, raw in props if _NAMES_THE_UPDATED.search(str(raw.get("description", "")))]
    if len(marked) != 1 or marked[0] not in arguments:
        return arguments
    for key, raw in props:
        if arguments.get(key) == "create" and "update" in (raw.get("enum") or ()):
            return {**arguments, key: "update"}
    return arguments


def place_stated(
    arguments: dict[str, Any],
    schema: dict[str, Any],
    intent: str,
    tool: str,
    earlier: SessionWindow | None,
    pasted: Pasted | None = None,
) -> dict[str, Any]:
    """Every placement rule, in order: the call's repository first (other rules compare against it),
    then the request's own entities, then what comes from earlier turns (``earlier``: the window when
    the request points back at it, else None). ``pasted``: the whole request split, when ``intent`` is
    what the model read of it (without its pasted material, ``arguments._read_apart``); None: the
    split of ``intent``."""
    arguments = split_owner_repo(arguments, schema)
    arguments = own_repository_elsewhere(anchor_repository(arguments, schema, intent))
    arguments = other_repository(arguments, schema, intent)
    arguments = my_repository(arguments, schema, intent, earlier.sources() if earlier else "")
    arguments = stated_owner(arguments, schema, intent)
    arguments = whole_path(arguments, intent)
    arguments = whole_word(arguments, schema, intent)
    arguments = cued_numbers(arguments, schema, intent)
    arguments = pull_request_branches(arguments, schema, intent)
    arguments = quotes_where_named(bare_quotes(arguments, intent), schema, intent)
    arguments = whole_colon_tail(arguments, schema, intent)
    pasted = pasted or split_pasted(intent)
    arguments = searched_material(pasted_material(arguments, schema, pasted), schema, tool, pasted)
    arguments = renamed_to(arguments, schema, intent)
    arguments = stated_kinds(arguments, schema, intent)
    arguments = stated_homes(arguments, schema, intent)
    arguments = listed_items(arguments, schema, intent, tool, earlier.sources() if earlier else "")
    arguments = stated_pairs(arguments, schema, intent)
    arguments = labelled_lines(arguments, schema, intent)
    arguments = scope_qualifiers(arguments, schema, intent)
    arguments = content_not_links(arguments, schema, intent)
    if earlier is None:
        return update_of_a_named_record(arguments, schema)
    arguments = carried_identifiers(arguments, schema, earlier.turns[-1].arguments if earlier.turns else None)
    arguments = number_not_id(arguments, earlier.numbers_by_id())
    arguments = window_numbers_placed(arguments, schema, earlier.number_kinds())
    arguments = window_numbers_of_their_kind(arguments, schema, intent, earlier)
    arguments = result_values_unasked(arguments, schema, intent, earlier)
    arguments = singled_out_number(arguments, schema, intent, earlier)
    branches = earlier.branches()
    arguments = pointed_branch(arguments, schema, intent, branches)
    arguments = source_branch_from_window(arguments, schema, intent, branches)
    return update_of_a_named_record(arguments, schema)
