"""Read or write: whether a request asks to look at something or to change it, and whether a tool only reads.

Many routing errors are a mood mismatch: "what milestones are defined in acme/app" wins
``update_issue_milestone`` and "show me the open PRs" wins ``update_pull_request_title``, because the
words match and bge-small barely hears the difference between asking and doing. Tools say which kind
they are: MCP's ``readOnlyHint`` annotation, or else the verb their name starts with. Requests say it
too: a verb that changes something ("assign", "merge", "rename") marks a write, even in a polite
question ("could you assign issue 67 to sofia?"); a question or a look-up verb without one marks a read.
The router lowers the score of tools of the other kind (weight in the calibration; measured in
``docs/routing.md``). When either side is unsure, nothing changes.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol, TypeVar

from .lexical import (
    STOPWORDS,
    SYNONYMS,
    VALUE_SPAN,
    one_edit_apart,
    schema_enum_values,
    split_identifier,
    tokenize,
)

READ, WRITE = 1.0, 0.0

# Verbs that only ever mean a change, wherever they stand.
_CHANGE_VERB_WORDS = (
    r"create|post|assign|unassign|close|reopen|merge|delete|remove|update|change|edit|rename|fork|"
    r"unstar|approve|submit|trigger|rerun|re-run|cancel|wipe|dismiss|lock|unlock|transfer|invite|"
    r"subscribe|unsubscribe|enable|disable|resolve|upload|archive|unpin"
)
_CHANGE_VERBS = rf"({_CHANGE_VERB_WORDS})\b"
_WRITE_VERB = re.compile(rf"\b{_CHANGE_VERBS}", re.I)
# "add" changes something when it has a destination or an article ("add fatima as a reviewer", "add a
# label"), and computes when it has neither ("add two numbers").
_ADD_SOMETHING = re.compile(
    r"\badd\b(?=[^.!?;]*\b(?:to|as|on|onto|into)\b)|\badd\s+(?:a|an|the|new|my|our|this|that|some)\b", re.I
)
# "add 2 and 3", "add 5.0 to 3.0": numbers on both sides of "add" are a sum to compute, which changes
# nothing, whatever the "to" says; the rest of the request is read as usual ("… and post it on issue 5").
_ADD_NUMBERS = re.compile(r"\badd\s+(?:up\s+)?[-+]?\d[\d.,]*\s+(?:and|to|with|plus|\+)\s+[-+]?\d[\d.,]*", re.I)
_CLAUSE_VERB_WORDS = (
    r"comment|label|tag|request|mark|set|move|push|watch|star|make|write|reply|let(?!\s+me\b)|tell(?!\s+(?:me|us)\b)|put|start|"
    r"stop|pin|kick|ping|commit|stage|unstage|forget"
)
# Words that are verbs of change only at the head of a clause ("label it bug", "tag issue 18"), and nouns
# elsewhere ("the label", "tag names", "a comment").
_CLAUSE_WRITE_VERB = re.compile(
    r"(?:^|[.!;,]\s*|\b(?:please|pls|plz|you|to|and|then|also)\s+)"
    rf"({_CLAUSE_VERB_WORDS})\b",
    re.I,
)
# What a clause that asks for a change starts with ("… and mark it ready for review"; ``compound.py``).
CHANGE_CLAUSE_HEAD = re.compile(rf"(?:{_CHANGE_VERB_WORDS}|{_CLAUSE_VERB_WORDS}|add|replace)\b", re.I)
# A change asked about after "did": "what did I change since the last commit", "when did we last update
# the README", "did anyone close #12?", "did anybody open a PR for this?" report a past change, so they
# read. The verb, not the sentence, is taken out: "why did you close it? reopen it" still writes.
_PAST_CHANGE = re.compile(rf"\bdid(?:n't|\s+not)?\s+(?:[\w'-]+\s+){{1,3}}?(?:{_CHANGE_VERB_WORDS}|open)\b", re.I)
_OPEN_SOMETHING_NEW = re.compile(r"\bopen\s+(?:a|an|new|up\s+a)\b", re.I)
# "... so I can resolve them later": what the user will do next, not what this call is.
_PURPOSE_CLAUSE = re.compile(r"\bso(?:\s+that)?\s+(?:i|we|they|you)\s+can\b[^.!?;]*", re.I)
# A question, or a look-up verb at the head of a sentence, also after a polite or first-person lead-in
# ("can you find …", "I want to see …", "let me know …").
_READ_CUE = re.compile(
    r"(?:^|[.!?]\s+)\s*(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|please\s+|pls\s+|let\s+me\s+|"
    r"i\s+(?:want|need|would\s+like|'d\s+like)\s+to\s+|i'm\s+trying\s+to\s+)?"
    r"(what|whats|which|who|whom|when|where|why|how|is|are|was|were|does|do|did|has|have|any|show|list|get|find|"
    r"search|look|check|see|view|give|fetch|display|pull\s+up|read|tell\s+me|count|know|figure\s+out)\b"
    r"|\?\s*$",
    re.I,
)
# A request that leads with a plural noun names the records it wants, with no verb: "commits touching
# src/auth/session.go", "repos tagged topic:mcp-server, most stars first", "advisories in triage state".
# An imperative verb is never plural, so the head is a noun; a change would have said its verb above.
_PLURAL_HEAD = re.compile(r"^\W*([a-z]{3,}s)(?<!ss)(?<!us)(?<!is)(?<!ys)\b", re.I)

_READ_NAME = re.compile(
    r"^(get|list|search|read|fetch|find|query|show|describe|check|view|lookup|count|download)(?:_|-|$|[A-Z])"
)
_WRITE_NAME = re.compile(
    r"^(create|add|update|delete|remove|set|post|put|patch|write|edit|rename|merge|close|assign|submit|"
    r"approve|dismiss|cancel|trigger|rerun|fork|star|unstar|move|upload|send|publish|insert|drop)"
    r"(?:_|-|$|[A-Z])"
)


# The verbs the readers of a request's mood and clauses look for, five letters or more: the words a typo
# of which would leave a request without its verb ("asign issue 45 to ravi-n", "creat a gist").
_READER_VERBS = frozenset(
    word
    for pattern in (_CHANGE_VERB_WORDS, _CLAUSE_VERB_WORDS, _READ_CUE.pattern)
    for word in re.findall(r"[a-z]+", pattern)
    if len(word) >= 5 and word not in {"would", "could", "which", "where", "trying", "please"}
)
_WORD = re.compile(r"(?<![\w/.@-])[A-Za-z]{5,}(?![\w/.@-])")


def spelled_verbs(text: str, known_words: frozenset[str]) -> str:
    """``text`` with each misspelt verb of a request's readers spelt right: a word of five letters or more
    that is no whole word of the embedder's vocabulary and is one edit from exactly one such verb, not
    its inflection ("asign" → assign, "chnage" → change, "serch" → search; "pings" stays). BM25 corrects
    its own terms against the index (``BM25Index.correct``); these readers match verbs by pattern, so
    "asign … and put it in milestone 3" had no change clause and went to ``update_issue_milestone``.
    Values (quoted text, paths, names with a dot) are left as they are."""
    values = [match.span() for match in VALUE_SPAN.finditer(text)]

    def spelled(match: re.Match[str]) -> str:
        word = match.group(0).lower()
        if word in known_words or any(start <= match.start() < end for start, end in values):
            return match.group(0)
        verbs = [verb for verb in _READER_VERBS if one_edit_apart(word, verb) and not word.startswith(verb)]
        return verbs[0] if len(verbs) == 1 else match.group(0)

    return _WORD.sub(spelled, text)


# A change the request refuses: "start a pending review, don't submit anything yet", "shut it down without
# merging", "detach it (don't delete anything)". The verb says what the call must not do, yet its word
# draws the tool named for it (``submit_pending_pull_request_review``, ``merge_pull_request``).
_REFUSAL = re.compile(
    r"\b(?:don'?t|do\s+not|never|without|no\s+need\s+to|not)\s+(?:(?:yet|actually|really|even|ever|just)\s+)?"
    r"([a-z]+(?:-[a-z]+)?)\b",
    re.I,
)
# the verbs of the patterns, without the words of their look-aheads ("tell", not "me" of "tell(?!\s+me)")
_REFUSABLE = tuple(
    re.sub(r"\(\?!(?:[^()]|\([^()]*\))*\)", "", f"{_CHANGE_VERB_WORDS}|{_CLAUSE_VERB_WORDS}|add").split("|")
)


def _inflection_of(verb: str) -> re.Pattern[str]:
    """The verb and its inflections: "merge" → merges, merged, merging; "submit" → submitting."""
    root = verb.removesuffix("e") if len(verb) > 3 else verb
    return re.compile(rf"{re.escape(root)}(?:e|es|s|ed|d|ing|[a-z]ing|[a-z]ed)?", re.I)


_REFUSABLE_FORMS = {verb: _inflection_of(verb) for verb in _REFUSABLE}


def inflects(word: str, verb: str) -> bool:
    """Whether ``word`` (lower-case) is ``verb`` or an inflection of it ("starred" for "star")."""
    form = _REFUSABLE_FORMS.get(verb) or _inflection_of(verb)
    return form.fullmatch(word) is not None


def _refused_verbs(words: Sequence[str]) -> tuple[str, ...]:
    """The verbs of change that ``words`` (each said after a refusal) inflect, in their plain form."""
    return tuple(verb for verb in _REFUSABLE if any(inflects(word, verb) for word in words))


def refused_changes(text: str) -> tuple[str, ...]:
    """The verbs of change ``text`` says not to do, in their plain form; quoted values left out."""
    words = [match.group(1).lower() for match in _REFUSAL.finditer(VALUE_SPAN.sub(" ", text))]
    return _refused_verbs(words) if words else ()


def named_for(verb: str, name: str) -> bool:
    """Whether a tool's name leads with ``verb`` (or an inflection of it): ``merge_pull_request``, not
    ``pull_request_read`` for "request"."""
    words = split_identifier(name).lower().split()
    return bool(words) and inflects(words[0], verb)


# A state the request denies: "the diff of what I haven't staged yet", "review threads that are not resolved".
_DENIAL = re.compile(
    r"\b(?:not|never|(?:have|has|is|are|was|were|did|do|does)n'?t)\s+(?:(?:yet|been|ever|really)\s+)?([a-z]+)\b",
    re.I,
)


def denied_words(text: str) -> tuple[str, ...]:
    """The words ``text`` denies, lower-cased; quoted values left out."""
    return tuple(match.group(1).lower() for match in _DENIAL.finditer(VALUE_SPAN.sub(" ", text)))


def opposed_name_words(name_words: Iterable[Iterable[str]]) -> frozenset[str]:
    """The words of tool names (each name's lower-cased words) that another name says with "un"
    ("staged" beside ``git_diff_unstaged``, "resolve" beside ``unresolve_review_thread``): where a
    registry names both states, a request that denies one wants the other."""
    words = {word for name in name_words for word in name}
    return frozenset(word for word in words if len(word) > 3 and f"un{word}" in words)


def denies(word: str, denied: Sequence[str]) -> bool:
    """Whether one of the ``denied`` words is ``word`` or an inflection of it ("starred" for "star")."""
    return any(inflects(said, word) for said in denied)


def _this_call(text: str) -> str:
    """``text`` without what asks for no change now: a change it reports ("did anyone close #12?"), one
    the user will make later ("so I can resolve them") or one it refuses ("don't delete the branch")."""
    return _REFUSAL.sub(_unless_refused, _PAST_CHANGE.sub(" ", _PURPOSE_CLAUSE.sub(" ", text)))


def _unless_refused(match: re.Match[str]) -> str:
    """A refusal (``_REFUSAL``) blanked when what it refuses is a verb of change, else left as it is."""
    return " " if _refused_verbs((match.group(1).lower(),)) else match.group(0)


def request_mood(text: str) -> float | None:
    """``READ``, ``WRITE`` or ``None`` (unsure) for a natural-language request."""
    text = _this_call(text)
    rest = _ADD_NUMBERS.sub(" ", text)
    if any(p.search(rest) for p in (_OPEN_SOMETHING_NEW, _ADD_SOMETHING, _WRITE_VERB, _CLAUSE_WRITE_VERB)):
        return WRITE
    if rest != text or _READ_CUE.search(text):
        return READ
    head = _PLURAL_HEAD.match(text)
    if head and head.group(1).lower() not in STOPWORDS:
        return READ
    return None


def tool_mood(name: str, annotations: dict[str, Any] | None) -> float | None:
    """``READ``, ``WRITE`` or ``None`` for a tool: its ``readOnlyHint`` when it declares one, else its
    name's leading verb (``list_issues``, ``issue_read`` read; ``create_issue`` writes)."""
    hint = (annotations or {}).get("readOnlyHint")
    if isinstance(hint, bool):
        return READ if hint else WRITE
    lowered = name.lower()
    if _READ_NAME.match(name) or _READ_NAME.match(lowered) or lowered.endswith(("_read", "_get", "_list")):
        return READ
    if _WRITE_NAME.match(name) or _WRITE_NAME.match(lowered) or lowered.endswith(("_write", "_update", "_delete")):
        return WRITE
    return None


class _Tool(Protocol):
    """A registry entry or an evaluation's tool: its name and the server's raw tool (for annotations)."""

    @property
    def name(self) -> str: ...

    @property
    def raw(self) -> dict[str, Any]: ...


ToolT = TypeVar("ToolT", bound=_Tool)


def not_opposed(request: str, tools: Sequence[ToolT]) -> list[ToolT]:
    """The candidates whose mood does not contradict the request's, for the local LLM judge
    (``judge_candidates``). The router has already weighed the mismatch; the 0.5B judge, shown "add 2
    and 3" with ``git_add`` beside ``get-sum``, undid it by the shared word."""
    wanted = request_mood(request)
    moods = [tool_mood(tool.name, tool.raw.get("annotations")) for tool in tools]
    return [tool for tool, mood in zip(tools, moods, strict=True) if wanted is None or mood is None or mood == wanted]


def judge_candidates(request: str, tools: Sequence[ToolT]) -> list[ToolT]:
    """What the local LLM judge chooses among: the router's best (``tools``, best first) whose mood does
    not contradict the request's (``not_opposed``), and always the router's own first choice, which
    ranked first with any mismatch already weighed. Dropping it let the judge overrule the router by a
    mood the request only seemed to have: "check out the branch feature/login" reads as a look-up
    ("check"), so ``git_checkout`` left the list and the judge chose ``git_branch`` (session 56;
    ``judge_policies.py --mood-filter``, local set with the 0.5B: 64.6% → 66.2%)."""
    kept = not_opposed(request, tools)
    return kept if not tools or tools[0] in kept else [tools[0], *kept]


# Verbs of change that tools rarely spell as the request does: each word here that a writing tool says
# stands in for the verb (a comment is posted, a log wiped, a label renamed by an update).
_SAME_OPERATION = {
    "post": ("add", "create", "comment", "send", "publish"),
    "wipe": ("delete", "remove", "clear"),
    "rename": ("update", "edit", "change"),
    "change": ("update", "edit", "set", "modify"),
    "update": ("set", "modify", "change", "edit"),
    "create": ("generate", "build", "make", "new", "add"),
    "add": ("create", "insert", "new"),
    "remove": ("delete", "drop", "clear"),
    "delete": ("remove", "drop", "clear"),
    "trigger": ("run", "start", "execute"),
    "enable": ("set", "turn", "switch"),
    "disable": ("set", "turn", "switch"),
}
_ADD = re.compile(r"\badd\b", re.I)


@lru_cache(maxsize=64)
def asked_changes(text: str) -> tuple[str, ...]:
    """The verbs of change a request asks with, its values left out ("post 'fix it, then close'" asks
    to post only); none unless one of them only ever means a change (``_WRITE_VERB``), since a word
    such as "watch" or "set" is a verb only at the head of a clause and a noun elsewhere. Cached: one
    route asks it of the same request up to three times (the mood weights, the object changes and
    the abstention's reason)."""
    text = VALUE_SPAN.sub(" ", _this_call(text))
    strong = tuple(match.group(1).lower() for match in _WRITE_VERB.finditer(text))
    if not strong:
        return ()
    clause_heads = tuple(match.group(1).lower() for match in _CLAUSE_WRITE_VERB.finditer(text))
    return strong + clause_heads + tuple(match.group(0).lower() for match in _ADD.finditer(text))


class ChangeVocabulary:
    """The words of a registry's tools that do not only read (``RouteDoc.tokens``), sorted, for asking
    whether any of them says a verb of change: a word that begins with the verb's root, so that its
    inflections and the nouns made from it count ("assign": assigned, assignees; "archive": archived).
    "Lock the conversation on issue 57" and "archive hexa-dev/prototype-2022" asked GitHub's server for
    operations it has no tool for, and the tools that do another thing to the same issue or repository
    took them (docs/routing.md). Asking is a binary search, not a scan of the vocabulary."""

    def __init__(self, words: Iterable[str]) -> None:
        self._words = sorted(set(words))

    def says(self, verb: str) -> bool:
        root = verb.replace("-", "").lower()
        if len(root) > 4:
            root = root.removesuffix("e")  # "close" → closed, closing; "wipe" keeps its e
        at = bisect_left(self._words, root)
        return at < len(self._words) and self._words[at].startswith(root)

    def makes_none_of(self, asked: Sequence[str]) -> bool:
        """Whether no tool says any of the asked verbs, or a word for the same operation."""
        if not asked:
            return False
        for verb in asked:
            words = (verb, *SYNONYMS.get(verb, ()), *_SAME_OPERATION.get(verb, ()))
            if any(self.says(word) for word in words):
                return False
        return True


# What a change is done to: the words after its verb, up to a preposition, a value, a clause's end or a
# pronoun; the last of them is the object ("Delete the branch feature/dark-mode from …": branch; "Create
# a new milestone called 'v3.0'": milestone; "add fatima-z and gus-o as reviewers": none).
_OBJECT_END = re.compile(
    r"\b(?:to|on|in|onto|into|for|from|with|at|by|as|of|under|about|between|within|across|through|via|over|"
    r"called|named|titled|saying|that|which|who|"
    r"where|and|or|but|so|then|because|since|if|before|after|without|instead|except|please|pls|now|again|too|"
    r"also|yet|it|its|them|they|he|she|is|are|was|were|be)\b|[,.;:!?()]",
    re.I,
)
# A change that brings or ends the object itself: a tool must hold the object in its name or its options,
# not as a field ("delete_file(branch)" deletes no branch). A light verb says no operation of its own
# ("make a fork", "start a pending review"): any tool that writes the object does it.
_CREATING = frozenset({"create", "add", "post"})
_DELETING = frozenset({"delete", "remove", "wipe", "forget"})
_LIGHT = frozenset({"make", "start"})


def asked_objects(text: str) -> list[tuple[str, str]]:
    """Each verb of change a request asks with (``asked_changes``) and the object it names (a stemmed
    token), where the words after the verb name one."""
    masked = VALUE_SPAN.sub(",", _this_call(text))  # a value ends the phrase: it may hold the sentence's stop
    found = []
    for verb in dict.fromkeys(asked_changes(text)):
        after = re.search(rf"\b{re.escape(verb)}\s+(.*)", masked, re.I | re.S)
        words = tokenize(_OBJECT_END.split(after.group(1), 1)[0]) if after else []
        if words:
            found.append((verb, words[-1]))
    return found


@dataclass(frozen=True)
class ToolObjects:
    """What a tool's schema says it works on: its name's words, its parameters' options
    (``label_write``'s ``method: create|update|delete``) and its parameters' names."""

    named: frozenset[str] = frozenset()
    options: frozenset[str] = frozenset()
    fields: frozenset[str] = frozenset()

    @classmethod
    def of_tool(cls, name: str, schema: dict[str, Any] | None) -> ToolObjects:
        properties = (schema or {}).get("properties")
        properties = properties if isinstance(properties, dict) else {}
        options = " ".join(schema_enum_values(schema))  # nested objects' and array items' options too
        fields = " ".join(split_identifier(str(key)) for key in properties)
        return cls(frozenset(tokenize(name)), frozenset(tokenize(options)), frozenset(tokenize(fields)))


class ObjectChanges:
    """Which changes a registry's tools make to which objects, for the change a request asks that no tool
    here makes although some tool says its verb: "Delete the branch feature/dark-mode" (GitHub's server
    deletes files and repositories and creates branches, but deletes no branch), "Create a new
    milestone" (``update_issue_milestone`` sets one on an issue). Only an object some writing tool is
    named for counts, so a request about something the registry never writes is left to the rest of the
    router. ``tools``: each tool's mood, its words (``RouteDoc.tokens``) and ``ToolObjects``."""

    def __init__(self, tools: Iterable[tuple[float | None, Sequence[str], ToolObjects]]) -> None:
        self._written: set[str] = set()
        self._writers: list[tuple[ToolObjects, ChangeVocabulary]] = []
        for mood, words, objects in tools:
            if mood == WRITE:
                self._written |= objects.named
            if mood != READ:
                self._writers.append((objects, ChangeVocabulary([*words, *objects.options])))

    def unmade(self, asked: Sequence[tuple[str, str]]) -> list[str]:
        """The asked changes that no writing tool makes to their object, as ``call`` tells the host ("No
        tool here can delete a branch")."""
        return [
            f"{verb} {'an' if thing[0] in 'aeiou' else 'a'} {thing}"
            for verb, thing in asked
            if thing in self._written and not self._made(verb, thing)
        ]

    def _made(self, verb: str, thing: str) -> bool:
        for objects, vocabulary in self._writers:
            if thing in objects.named or thing in objects.options:
                holds = True
            else:  # a field: changed ("change the title"), not brought or ended with the tool's object
                holds = thing in objects.fields and verb not in _CREATING | _DELETING | _LIGHT
            if holds and (verb in _LIGHT or not vocabulary.makes_none_of([verb])):
                return True
        return False
