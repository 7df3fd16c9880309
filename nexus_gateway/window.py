"""The session window: the last few routed turns of one host session, kept small.

Each turn is kept verbatim (intent, tool, arguments) with the bulky upstream result replaced by a
short surrogate: the identifying fields (numbers, ids, names, titles, states, URLs, SHAs) pulled from
the result, at most ~64 tokens. That is what lets "now open an issue there" resolve ``owner``/``repo``
and "close it as a duplicate of the top match" find ``377`` without putting whole results in the prompt.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .affordance import query_slots
from .lexical import STOPWORDS, tokenize
from .mood import WRITE, request_mood

if TYPE_CHECKING:
    from .routing import RouteResult

SURROGATE_CHARS = 240  # ~64 tokens
TURNS = 3
# What identifies a record, and what tells the records of a list apart ("the failed one", "the critical
# one", "the one where I was mentioned"), in the order they are kept when the budget runs out.
KEY_FIELDS = (
    "number",
    "id",
    "name",
    "full_name",
    "title",
    "login",
    "state",
    "conclusion",
    "status",
    "reason",
    "severity",
    "sha",
    "ref",
    "head_branch",
    "path",
    "html_url",
    "url",
)
DESCRIPTIVE_FIELDS = frozenset(["title", "state", "conclusion", "status", "reason", "severity"])
ID_SUFFIXES = ("_id", "_number", "_name")  # run_id, job_id, job_name: identifiers by their name
NESTED_NAME = ("login", "full_name", "name")  # how a nested owner/user/repository is named
MAX_ITEMS = 3
# "the top match", "the second one": a list item by its place.
ORDINALS = {"first": 0, "top": 0, "second": 1, "third": 2}
# "the other one", "the rest": a request that means a record the conversation has not used yet.
NOT_THE_USED = frozenset(["other", "others", "another", "rest", "remaining", "next", "all", "each", "every", "both"])
_WORD = re.compile(r"[a-z0-9]+")
_CLAUSE_HEAD = re.compile(r"(?:^|[,.;:!?]|\b(?:and|then|please|now|yep|yes|ok|okay)\b)\s*([a-z]+)")


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str) and value and len(value) <= 80:
        return json.dumps(value) if (" " in value or not value.isascii()) else value
    return None


def _is_key(key: str) -> bool:
    return key in KEY_FIELDS or key.endswith(ID_SUFFIXES)


def _fields(record: dict[str, Any]) -> list[str]:
    parts = []
    keys = [k for k in KEY_FIELDS if k in record] + [k for k in record if k not in KEY_FIELDS and _is_key(k)]
    for key in keys:
        text = _scalar(record.get(key))
        if text is not None:
            parts.append(f"{key}={text}")
    for key, value in record.items():  # one level down: owner=dana-k, subject.title=…, commit.sha=…
        if not isinstance(value, dict):
            continue
        name = next((value[n] for n in NESTED_NAME if isinstance(value.get(n), str)), None)
        if name is not None:
            parts.append(f"{key}={name}")
        for inner, inner_value in value.items():
            text = _scalar(inner_value) if _is_key(inner) and inner not in NESTED_NAME else None
            if text is not None:
                parts.append(f"{key}.{inner}={text}")
    return parts


def _parsed(result: Any) -> Any:
    """A result as data: upstream text that is JSON is parsed, other text stays text."""
    if isinstance(result, str):
        try:
            return json.loads(result)
        except ValueError:
            return result
    return result


def _record_lists(result: Any) -> list[tuple[str | None, list[dict[str, Any]]]]:
    """The lists of records a result holds, each cut to :data:`MAX_ITEMS`: ``(key, records)``, with key
    None for a result that is itself a list."""
    if isinstance(result, list):
        return [(None, [item for item in result[:MAX_ITEMS] if isinstance(item, dict)])]
    if isinstance(result, dict):
        return [
            (key, [item for item in value[:MAX_ITEMS] if isinstance(item, dict)])
            for key, value in result.items()
            if isinstance(value, list) and value and isinstance(value[0], dict)
        ]
    return []


def surrogate(result: Any, intent: str | None = None, used: frozenset[str] = frozenset()) -> str:
    """Identifying fields of a result, first records first, cut to about 64 tokens. Given the request
    that refers back to it, a list shows only the record the request singles out (:func:`referent`),
    else the one record a later call used (``used``: the values of later calls' arguments)."""
    result = _parsed(result)
    if isinstance(result, str):
        return " ".join(result.split())[:SURROGATE_CHARS]
    parts = _fields(result) if isinstance(result, dict) else []
    for key, records in _record_lists(result):
        fields = [_fields(record) for record in records]
        chosen = referent(intent, fields) if intent else None
        if chosen is None and intent:
            chosen = used_record(intent, fields, used)
        shown = [chosen] if chosen is not None else range(len(records))
        entries = "; ".join(f"[{i + 1}] {' '.join(fields[i])}" for i in shown)
        parts.append(f"{key}: {entries}" if key is not None else entries)
    text = " ".join(p for p in parts if p)
    return text[:SURROGATE_CHARS]


def _alike(word: str, other: str) -> bool:
    """The same word in another form: "failed" / "failure", "mentioned" / "mention"."""
    shared = 0
    for a, b in zip(word, other, strict=False):
        if a != b:
            break
        shared += 1
    return shared >= 4 and min(len(word), len(other)) - shared <= 3


def referent(intent: str, records: list[list[str]]) -> int | None:
    """The record of a list that a request singles out, by place ("the top match") or by a value only
    it has ("the failed one" → ``conclusion=failure``, "the one where I was mentioned" →
    ``reason=mention``); None when the request names none or several. The 0.5B model otherwise picks
    the wrong item of a list about as often as the right one."""
    if len(records) < 2 or not refers_back(intent):
        return None
    words = [w for w in _WORD.findall(intent.lower()) if w not in STOPWORDS]
    for word in words:
        if word in ORDINALS and ORDINALS[word] < len(records):
            return ORDINALS[word]
    common = set.intersection(*(set(fields) for fields in records))
    # the verb a clause starts with is what to do, not which record: "close it as a duplicate" is no
    # reference to the closed one
    describing = set(words) - set(_CLAUSE_HEAD.findall(intent.lower()))
    scores = []
    for fields in records:
        values = {v for field in fields if field not in common for v in _WORD.findall(field.split("=", 1)[-1].lower())}
        scores.append(sum(any(_alike(word, value) for value in values) for word in describing))
    best = max(scores)
    return scores.index(best) if best > 0 and scores.count(best) == 1 else None


def used_record(intent: str, records: list[list[str]], used: frozenset[str]) -> int | None:
    """The one record of an earlier list that a later call used, for a request that points back without
    singling a record out: after "mark the one where I was mentioned as done" took thread 2 of a list of
    notifications, "and mute that thread too" means thread 2, and the 0.5B model took the first of the
    list. A request for "the other one" or "the rest" means what was not used, so it sees the list."""
    words = set(_WORD.findall(intent.lower()))
    if len(records) < 2 or not used or not refers_back(intent) or words & NOT_THE_USED:
        return None
    hits = [i for i, fields in enumerate(records) if any(_identifier(field) in used for field in fields)]
    return hits[0] if len(hits) == 1 else None


def _identifier(field: str) -> str | None:
    """The value of a surrogate field that names its record (an id, number, name, SHA or URL), not one
    that describes it (a state or a title many records may share)."""
    key, _, value = field.partition("=")
    return value if key.rsplit(".", 1)[-1] not in DESCRIPTIVE_FIELDS else None


def argument_items(arguments: dict[str, Any]) -> list[Any]:
    """A call's argument values with each list's items in its place: what a later turn may copy."""
    return [item for value in arguments.values() for item in (value if isinstance(value, list) else [value])]


def _argument_values(arguments: dict[str, Any]) -> set[str]:
    """Each scalar value of a call's arguments as the surrogate writes it (``id=12345``)."""
    return {text for item in argument_items(arguments) if (text := _scalar(item)) is not None}


def _integer(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


def numbers_by_id(result: Any) -> dict[int, int]:
    """``id → number`` of every record of a result that carries both (an issue's database id and its
    number), one level of nesting included, as the surrogate shows them."""
    result = _parsed(result)
    records = ([result] if isinstance(result, dict) else []) + [r for _, rs in _record_lists(result) for r in rs]
    records += [value for record in records for value in record.values() if isinstance(value, dict)]
    pairs = ((_integer(r.get("id")), _integer(r.get("number"))) for r in records)
    return {ident: number for ident, number in pairs if ident is not None and number is not None}


def _kind_words(key: str) -> list[str]:
    """``run_id`` → ["run"]: what a key's number counts, without the words every such key has."""
    return [w for w in tokenize(key) if w not in ("id", "number")]


def number_kinds(tool: str, arguments: dict[str, Any], result: Any) -> dict[int, frozenset[str]]:
    """What each number of a turn numbers, in words: a record's ``id`` in ``workflow_runs`` is a
    {workflow, run}, a ``job_id`` field a {job}, an argument ``run_id`` a {run}; a single record's own
    ``id``/``number`` takes the tool's words (``get_issue`` → {get, issue}). A later turn that copies
    the number into the wrong key (``job_id`` for "the failed one" of a run list) can be set right."""
    result = _parsed(result)
    kinds: dict[int, set[str]] = {}

    def note(value: Any, words: list[str]) -> None:
        number = _integer(value)
        if number is not None and words:
            kinds.setdefault(number, set()).update(words)

    for key, value in arguments.items():
        note(value, _kind_words(key))
    lists = _record_lists(result)
    singles = [result] if isinstance(result, dict) else []
    for record in singles:
        for field in ("id", "number"):
            note(record.get(field), tokenize(tool))
    for name, records in lists:
        for record in records:
            for field in ("id", "number"):
                note(record.get(field), tokenize(name) if name else [])
    for record in singles + [r for _, rs in lists for r in rs]:
        for field, value in record.items():
            if field.lower().endswith(("_id", "_number")):
                note(value, _kind_words(field))
    return {number: frozenset(words) for number, words in kinds.items()}


@dataclass(frozen=True)
class Turn:
    intent: str
    tool: str
    arguments: dict[str, Any]
    result: str  # the surrogate
    numbers: dict[int, int]  # id → number of the result's records
    raw: Any = None  # the parsed result, for a surrogate focused on a later request
    kinds: dict[int, frozenset[str]] | None = None  # what each number numbers (:func:`number_kinds`)


REFERRING = frozenset(
    [
        "it",
        "its",
        "that",
        "this",
        "those",
        "these",
        "them",
        "they",
        "there",
        "here",
        "same",
        "again",
        "previous",
        "earlier",
        "above",
        "one",
        "ones",
        "my",
        "mine",
        "too",
    ]
)


def refers_back(intent: str) -> bool:
    """Does the request point at something said before ("close it", "that branch", "same for …")?"""
    return bool(REFERRING & set(_WORD.findall(intent.lower())))


# "and in Tokyo?", "what about docs?", "same for main": the operation is the last turn's. The leads besides
# "and" name no operation of their own whatever follows them.
_POINTS_BACK = r"what about|how about|(?:the )?same(?: thing)? for|now for|also for"
_ELLIPSIS = re.compile(rf"\s*(?:and|{_POINTS_BACK})\b", re.I)
ELLIPSIS_WORDS = 6
JOINED_REACH = 3  # how deep among a joined route's candidates a bare follow-up looks for the last tool
# The forms that cannot say an operation of their own: "and mute that thread too" can, "and in Tokyo?",
# "same thing for pallets/flask" cannot, so routed alone they only match stray words ("same" is in
# ``move_file``'s description) and may do so by a wide margin.
_BARE_ELLIPSIS = re.compile(rf"\s*(?:and\s+(?:in|on|at|for|from|with|to|of|by)|{_POINTS_BACK})\b", re.I)


def _call_text(tool: str, arguments: dict[str, Any]) -> str:
    body = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{tool}({body})"


@dataclass(frozen=True)
class HeldCall:
    """A routed call waiting for the host's confirmation."""

    tool_id: str
    tool: str
    intent: str


class SessionWindow:
    """The last :data:`TURNS` turns of one session."""

    def __init__(self, turns: int = TURNS) -> None:
        self.turns: deque[Turn] = deque(maxlen=turns)
        self.held: HeldCall | None = None

    def hold(self, tool_id: str, tool: str, intent: str) -> None:
        """``call`` held this routed choice back for the host to confirm (``confirmation.py``): when the
        host runs it with ``call_tool``, the turn still belongs here, under the request it answers, or
        "now open an issue there" would have nothing to point back to."""
        self.held = HeldCall(tool_id, tool, intent)

    def release(self, tool_id: str) -> HeldCall | None:
        """The held call, if the host has now run that very tool; any other call ends the hold."""
        held, self.held = self.held, None
        return held if held is not None and held.tool_id == tool_id else None

    def carried_slots(self, intent: str) -> frozenset[str]:
        """The slot kinds a follow-up refers back to, for routing: "close it", "open that file" name no
        repository, number or path of their own, so among many servers they go to whatever tool shares a
        word (Playwright's ``browser_close``). When the intent points back and names no slot itself, the
        kinds its window's requests named count as its own (docs/routing.md: among 1,317 tools 3 of 18
        dialogue follow-ups fixed, none broken; 1 of 166 requests after an unrelated turn lost). A number
        counts too when the last turn's result numbers its records: "label it bug" after "open an issue
        …" points at the new issue's number, which ``label_write`` (a repository's labels) cannot take."""
        if not self.turns or not refers_back(intent) or query_slots(intent):
            return frozenset()
        numbered = frozenset({"number"}) if self.turns[-1].numbers else frozenset()
        return numbered.union(*(query_slots(turn.intent) for turn in self.turns))

    def last_tool(self) -> str | None:
        """The name of the tool the session called last."""
        return self.turns[-1].tool if self.turns else None

    def is_elided(self, intent: str) -> bool:
        """Is the intent a short follow-up that leaves its operation out ("and in Tokyo?"), in a session
        with a turn before it? Not one that asks for a change of its own ("and delete notes.txt")."""
        short = bool(_ELLIPSIS.match(intent)) and len(intent.split()) <= ELLIPSIS_WORDS
        return bool(self.turns) and short and request_mood(intent) != WRITE

    def names_no_operation(self, intent: str) -> bool:
        """Is the intent an elided follow-up that cannot say an operation of its own ("and in Tokyo?",
        "same thing for pallets/flask")? Such a one is routed as its ``elided_request`` even when it
        alone seems to fit a tool."""
        return self.is_elided(intent) and bool(_BARE_ELLIPSIS.match(intent))

    def elided_request(self, intent: str) -> str | None:
        """A short follow-up that leaves its operation out ("and in Tokyo?" after "what time is it in
        Berlin") joined to the requests before it, back to the one that says the operation, for routing
        when the follow-up alone fits no tool; None when the intent is no such follow-up or the session is
        new."""
        if not self.is_elided(intent):
            return None
        said = [intent]
        for turn in reversed(self.turns):  # back to the request that said the operation
            said.insert(0, turn.intent.rstrip(" .?!"))
            if not _ELLIPSIS.match(turn.intent):
                break
        return ". ".join(said)

    def joined_choice(self, intent: str, names: Sequence[str]) -> int | None:
        """Which of the candidates (their tool names, best first) of an elided follow-up routed as its
        ``elided_request`` it goes on with: the tool the session called last, when that route puts it
        first ("same thing for pallets/flask" after ``list_issues``), or, for a follow-up that cannot name
        an operation of its own, among the best three ("same for the last 5" after ``git_log``, whose joined
        request is as close to ``git_diff``); None when it is another tool: the follow-up may ask for
        something else after all."""
        last = self.last_tool()
        reach = JOINED_REACH if self.names_no_operation(intent) else 1
        return next((i for i, name in enumerate(names[:reach]) if name == last), None)

    def rejoined_request(self, intent: str, unsure: bool) -> str | None:
        """The ``elided_request`` to route again, when the follow-up's own route was ``unsure`` or it
        cannot name an operation; None otherwise."""
        return self.elided_request(intent) if unsure or self.names_no_operation(intent) else None

    def joined_route(
        self, intent: str, joined: RouteResult | None, name_of: Callable[[str], str]
    ) -> RouteResult | None:
        """``joined`` (the route of ``rejoined_request``) settled on the candidate ``joined_choice`` takes,
        or None when it takes none; ``name_of`` gives a candidate id's tool name. One rule for
        ``routed_call`` and the eval."""
        if joined is None or joined.abstained:
            return None
        best = joined.candidates[:JOINED_REACH]
        choice = self.joined_choice(intent, [name_of(c.id) for c in best])
        return None if choice is None else replace(joined, chosen=best[choice].id)

    def carried_call(self, intent: str, tool: str) -> dict[str, Any]:
        """The arguments an elided follow-up of ``tool`` goes on with: "and in Berlin?" after
        ``get_current_time(timezone="Asia/Tokyo")`` changes what it says and keeps the rest of the last call.
        Empty unless the intent is such a follow-up and the last call was of that very tool."""
        if not self.is_elided(intent) or self.last_tool() != tool:
            return {}
        return dict(self.turns[-1].arguments)

    def add(self, intent: str, tool: str, arguments: dict[str, Any], result: Any) -> None:
        parsed = _parsed(result)
        kinds = number_kinds(tool, arguments, parsed)
        self.turns.append(Turn(intent, tool, dict(arguments), surrogate(parsed), numbers_by_id(parsed), parsed, kinds))

    def render(self, intent: str | None = None) -> str:
        """The prompt's ``Earlier:`` block (empty when the session is new); given the new request, each
        listed result shows only the record it singles out, if it singles one out, or else the record a
        later turn went on with (:func:`used_record`)."""
        if not self.turns:
            return ""
        lines = ["Earlier:"]
        turns = list(self.turns)
        for i, turn in enumerate(turns, 1):
            line = f'{i}. "{turn.intent}" → {_call_text(turn.tool, turn.arguments)}'
            used = frozenset().union(*(_argument_values(later.arguments) for later in turns[i:]))
            result = surrogate(turn.raw, intent, used) if intent else turn.result
            if result:
                line += f" → {result}"
            lines.append(line)
        return "\n".join(lines)

    def singled_out(self, intent: str) -> list[dict[str, Any]]:
        """The records of earlier lists that the request singles out by place or by a value only they
        have (:func:`referent`), the latest turn's last."""
        found = []
        for turn in self.turns:
            for _, records in _record_lists(turn.raw):
                chosen = referent(intent, [_fields(record) for record in records])
                if chosen is not None:
                    found.append(records[chosen])
        return found

    def numbers_by_id(self) -> dict[int, int]:
        """``id → number`` over the turns' results, the latest turn last."""
        return {ident: number for turn in self.turns for ident, number in turn.numbers.items()}

    def number_kinds(self) -> dict[int, frozenset[str]]:
        """What each number of the turns numbers, the latest turn's words first in line."""
        return {number: words for turn in self.turns for number, words in (turn.kinds or {}).items()}

    def branches(self) -> list[tuple[str, str | None]]:
        """The branches the turns worked on (their ``branch`` or ``head`` argument), each with the
        owner of the repository it was in."""
        found = []
        for turn in self.turns:
            owner = turn.arguments.get("owner")
            for key in ("branch", "head"):
                name = turn.arguments.get(key)
                if isinstance(name, str) and name:
                    found.append((name, owner if isinstance(owner, str) else None))
        return found

    def sources(self) -> str:
        """Everything a generated value may be copied from, besides the intent."""
        return "\n".join(f"{t.intent} {json.dumps(t.arguments, ensure_ascii=False)} {t.result}" for t in self.turns)
