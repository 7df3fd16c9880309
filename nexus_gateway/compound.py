"""Requests that set several fields at once, and the tools that can set all of them.

"For riverbank/payments#88, update the title to 'Handle refund edge cases' and mark it ready for
review" asks two changes of one pull request. GitHub's server has a tool for each
(``update_pull_request_title``, ``update_pull_request_draft_state``) and one that does both
(``update_pull_request``, with ``title`` and ``draft`` parameters). Words and vectors favour the
single-purpose tools, each matching one half closely; routed there, the call would make one change and
silently drop the other. So when two or more clauses of a request set fields, the router's candidates
with a parameter for each clause's fields rank above those that set only some of them, the way a
retired tool's score passes to its successor (``routing.successor_rows``).

A clause's fields are its words besides the verb and the values ("set its labels to bug" → label,
bug); a tool sets them when its name or a parameter's name, description or options say one
(``issue_write.labels``: "Labels to apply to this issue"; "add it to git" is ``git_add``). Owner,
repo, paging and identifiers take no part: every tool of a family has them, and an identifier's name
says the object ("issue" for ``issue_number``), not a field.
A request that joins operations ("merge PR 5 and delete the branch") is left as the router ranks it:
a tool's words for an operation name its object as often as what it does (GitLab's
``delete_merge_request_note``); ``routed_call.changes_left_over`` reads the same clauses to tell the
host which changes the call it runs leaves undone. Measured in docs/routing.md (session 46).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .lexical import QUERY_STOPWORDS, stem, tokenize, without_values
from .mood import CHANGE_CLAUSE_HEAD, WRITE, request_mood

# Where one change clause ends and the next begins: a comma, "and", "then", a semicolon or a sentence
# end, followed by a verb of change ("…, label it bug and ui, and assign it to hana-k"). "and" before
# anything else joins values ("add fatima-z and gus-o as reviewers"), and a verb before a colon labels a
# value ("Commit message: …").
_CLAUSE_BREAK = re.compile(
    r"(?:,\s*(?:and\s+|then\s+)?|\s+and\s+(?:then\s+)?|;\s*|[.!]\s+(?:also\s+|then\s+)?)"
    rf"(?=(?:also\s+|please\s+)?{CHANGE_CLAUSE_HEAD.pattern}(?!(?:\s+\w+)?\s*:))",
    re.I,
)
# Verbs that set fields of an object, which the rest of the clause names ("update the title", "mark it
# ready for review"); "assign", "label", "tag", "rename" and "request" name their field themselves
# (assignees, labels, name, reviewers). Any other verb of change is an operation of its own ("merge",
# "close", "create", "push"): a request that joins operations is left to the router as it is, since a
# tool's words for an operation ("merge" in GitLab's ``delete_merge_request_note``) name its object as
# often as what it does.
_SETTING_VERBS = frozenset(
    stem(word) for word in ("update", "set", "change", "mark", "put", "add", "make", "edit", "replace", "give")
)
_FIELD_VERBS = frozenset(stem(word) for word in ("assign", "label", "tag", "rename", "request"))
_FILLERS = frozenset(("new", "also"))
_HEAD = re.compile(rf"^(?:also\s+|please\s+)?({CHANGE_CLAUSE_HEAD.pattern})", re.I)
# Parameters every tool of a family has, which tell nothing about what a tool changes.
_IDENTIFIER_PARAMETER = re.compile(
    r"^(?:owner|repo|repository|page|per_?page|perPage|cursor|after|before|limit)$"
    r"|(?:_id|Id|_ids|Ids|_iid|_number|Number)$"
)
_PREFIX = 5  # a word this long matches the longer words it begins: review → reviewers, assign → assignees


def _same_word(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return short == long or (len(short) >= _PREFIX and long.startswith(short))


@dataclass(frozen=True)
class ToolFields:
    """What a tool can set: per parameter (identifiers and paging left out), the words of its name,
    description and options; the words of its identifiers' names, which name the object it sets them on
    ("issue" for ``issue_number``), not a field of it; and the words that say what it does: its name's,
    and its parameters' names and options (``merge_method``, ``state: closed``)."""

    parameters: tuple[frozenset[str], ...]
    object_words: frozenset[str] = frozenset()
    operations: frozenset[str] = frozenset()

    @classmethod
    def of_tool(cls, name: str, schema: dict[str, Any] | None) -> ToolFields:
        properties = schema.get("properties") if isinstance(schema, dict) else None
        terms, objects, operations = [], set(), set(tokenize(name))
        for key, spec in properties.items() if isinstance(properties, dict) else ():
            if _IDENTIFIER_PARAMETER.search(key):
                objects.update(tokenize(key))
                continue
            terms.append(frozenset(tokenize(f"{key} {_said(spec)}")))
            options = spec.get("enum") if isinstance(spec, dict) else None
            operations.update(tokenize(" ".join([key, *(str(v) for v in options or () if isinstance(v, str))])))
        return cls(tuple(terms), frozenset(objects), frozenset(operations))

    def sets(self, fields: frozenset[str]) -> bool:
        """Whether the tool's name or one of its parameters says one of ``fields`` (when they name more
        than the object the tool works on): "add it to git" is what ``git_add`` does."""
        wanted = fields - self.object_words
        said = (t for terms in (*self.parameters, self.operations) for t in terms)
        return not wanted or any(_same_word(f, t) for t in said for f in wanted)

    def does(self, verb: str) -> bool:
        """Whether the tool's name, or a parameter's name or option, says the operation ``verb``."""
        return any(_same_word(verb, word) for word in self.operations)


def _said(spec: Any, depth: int = 0) -> str:
    """A parameter's description and options, and those of the fields of an object it takes
    (``new_preferences: {size, milk_type, …}``): what a clause can name to set it."""
    if not isinstance(spec, dict) or depth > 3:
        return ""
    options = " ".join(str(v) for v in spec.get("enum") or () if isinstance(v, str))
    nested = spec.get("properties")
    nested = nested if isinstance(nested, dict) else {}
    inner = " ".join(f"{key} {_said(value, depth + 1)}" for key, value in nested.items())
    return f"{spec.get('description') or ''} {options} {inner} {_said(spec.get('items'), depth + 1)}"


NOTHING = ToolFields(())  # a tool seen without its schema


def change_clauses(request: str) -> list[str]:
    """The request's clauses that each ask for a change, when it has two or more (else ``[]``)."""
    clauses = [clause.strip() for clause in _CLAUSE_BREAK.split(request) if clause.strip()]
    changes = [clause for clause in clauses if request_mood(clause) == WRITE]
    return changes if len(changes) > 1 else []


def clause_operation(clause: str) -> str | None:
    """The operation a change clause asks for ("merge", "close", "delete"; stemmed), or ``None`` when it
    sets fields instead ("update the title", "assign it to carol")."""
    head = _HEAD.match(clause)
    verb = stem(head.group(1).lower()) if head else None
    return None if verb is None or verb in _SETTING_VERBS or verb in _FIELD_VERBS else verb


def clause_fields(clause: str) -> frozenset[str] | None:
    """The fields a change clause sets: its words besides the verb and the values; ``None`` when its
    verb is an operation of its own (``clause_operation``)."""
    if clause_operation(clause) is not None:
        return None
    return frozenset(
        term
        for term in tokenize(without_values(clause), QUERY_STOPWORDS)
        if term not in _SETTING_VERBS and term not in _FILLERS and len(term) > 2 and not term.isdigit()
    )


def requested_fields(request: str) -> list[frozenset[str]]:
    """Per change clause, the fields it sets, when the request sets fields in two clauses or more and
    does nothing else (else ``[]``)."""
    changes = []
    for clause in change_clauses(request):
        fields = clause_fields(clause)
        if fields is None:
            return []
        if fields:
            changes.append(fields)
    return changes if len(changes) > 1 else []


def lift_complete_tools(
    request: str, fused: np.ndarray, tools: Sequence[ToolFields], reach: int, step: float
) -> np.ndarray:
    """``fused`` with the tools among the best ``reach`` that set every clause's fields raised, in their
    own order, to ``step`` above the best tool that sets only some of them. Unchanged for a request of
    one change, or when no candidate (or every one) sets them all."""
    changes = requested_fields(request)
    if not changes:
        return fused
    top = np.argpartition(-fused, reach - 1)[:reach] if reach < len(fused) else np.arange(len(fused))
    complete = np.array([all(tools[i].sets(fields) for fields in changes) for i in top], dtype=bool)
    if not complete.any() or complete.all():
        return fused
    best_partial = float(fused[top[~complete]].max())
    best_complete = float(fused[top[complete]].max())
    if best_complete > best_partial:
        return fused
    lifted = fused.copy()
    lifted[top[complete]] += np.float32(best_partial - best_complete + step)
    return lifted
