"""Local argument generation: intent + compressed IR + session window → a schema-valid arguments object.

Prompt = fixed system prefix (instructions and worked examples; warm in the engine's sequence 0, paid
once per process) + the tool's compressed IR + the session window + the intent. The output is decoded
under the schema's grammar (``decoding.py``), so it always parses and type-checks. Then two checks the
grammar cannot make:

- **grounding**: a value must come from the request or the window (strings copied or their words
  present, numbers present as digits, optional enums/booleans named). Placeholders (``"<owner>"``,
  ``"string"``, example values the request never gave) fail it and are dropped, never forwarded;
- **validation** with ``jsonschema``: a required argument that is missing is reported back to the host
  as a question instead of being invented.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .affordance import REPO_PATTERN, URL_PATTERN, names_a_path
from .decoding import SchemaDecoder, Vocabulary
from .engine import GenerationBackend
from .ir import compressed_ir
from .lexical import STOPWORDS, split_identifier, stem
from .mentions import (
    FREE_TEXT,
    free_text_keys,
    named_keys,
    named_values,
    names_value,
    properties,
    quoted_spans,
    sayer,
    stated_entities,
    without_quotes,
)
from .signature import _resolve
from .window import SessionWindow, refers_back

if TYPE_CHECKING:
    from .block_store import SchemaBlocks
    from .kv_splice import SpliceReport

SYSTEM = (
    "You turn a request into the JSON arguments of one tool call. Use only values that the request or the "
    "earlier turns state, copied exactly. Leave out every argument they do not state: never guess owners, "
    "numbers, pages or defaults. 'owner/repo' gives owner and repo separately. Numbers are bare integers."
)

# Worked examples in the fixed prefix: free at run time (the prefix stays warm), and they show the
# 0.5B model the three habits it lacks: split owner/repo, leave unstated arguments out, copy from turns.
EXAMPLES = (
    (
        "Tool: get_issue(owner: str, repo: str, issue_number: int) — Get an issue\n"
        "Request: what's in issue 12 of acme/web?",
        '{"owner": "acme", "repo": "web", "issue_number": 12}',
    ),
    (
        "Tool: create_branch(owner: str, repo: str, branch: str, from_branch?: str) — Create a branch\n"
        "Request: make a branch 'fix-login' in my api repo",
        '{"repo": "api", "branch": "fix-login"}',
    ),
    (
        "Tool: list_commits(owner: str, repo: str, sha?: str, author?: str) — List commits\n"
        "Request: recent commits by dana-k in octo/site",
        '{"owner": "octo", "repo": "site", "author": "dana-k"}',
    ),
    (
        'Earlier:\n1. "show me pull request 7 in octo/site" → get_pull_request(owner="octo", repo="site", '
        'pullNumber=7) → number=7 title="Fix nav" state=open\n'
        'Tool: merge_pull_request(owner: str, repo: str, pullNumber: int, merge_method?: "merge"|"squash"|"rebase")'
        " — Merge a pull request\nRequest: squash-merge it",
        '{"owner": "octo", "repo": "site", "pullNumber": 7, "merge_method": "squash"}',
    ),
    (
        'Earlier:\n1. "recent CI runs in acme/api" → list_runs(owner="acme", repo="api") → runs: [1] id=5101 '
        "conclusion=success; [2] id=5102 conclusion=failure\n"
        "Tool: rerun_failed_jobs(owner, repo, run_id: int) — Re-run the failed jobs of a run\n"
        "Request: rerun the failed one",
        '{"owner": "acme", "repo": "api", "run_id": 5102}',
    ),
)

# Prose the request must give itself (quoted, or under the key's own name) when the key is optional: the
# 0.5B model otherwise writes a description nobody asked for, or pastes the whole request as a body.
PROSE = re.compile(r"body|description|content|message|comment|summary|reason|note|rationale")
# A number as a word of its own ("#318", "PR 512", "3.12", "1st", "6cm"), not the digits inside an id or
# a hash ("DC_kwDOAbCd4M4AxYz1", "5b1e9f0c").
# A number standing as a word ("#12", "issue 45", "2.5"), not a part of a version or a branch ("4.x").
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?!\.\w)(?=[A-Za-z]*(?!\w))")
# Every digit run of a URL is an id it states, anchors included (``#discussion_r1650022311``).
_URL_DIGITS = re.compile(r"\d+")
_WORDS = re.compile(r"[a-z0-9]+")
_PLACEHOLDER = re.compile(
    r"^(<.*>|\{.*\}|\[.*\]|string|example|sample|value|xxx+|todo|n/?a|none|null|your[-_ ].*)$", re.I
)


def chat(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def system_prefix(system: str = SYSTEM, examples: tuple[tuple[str, str], ...] = EXAMPLES) -> str:
    """The fixed part of every prompt, up to the start of the turn's user message."""
    shots = "".join(chat("user", q) + chat("assistant", a) for q, a in examples)
    return chat("system", system) + shots + "<|im_start|>user\n"


def turn_text(tool_text: str, intent: str, window: str) -> str:
    head = f"{window}\n" if window else ""
    return f"{head}Tool: {tool_text}\nRequest: {intent}<|im_end|>\n<|im_start|>assistant\n"


def schema_text(name: str, schema: dict[str, Any], description: str | None) -> str:
    """The full-schema form of a tool, exactly as a full-schema prompt holds it (and a block compiles it)."""
    return "Tool: " + json.dumps({"name": name, "description": description or "", "inputSchema": schema}) + "\n"


def request_text(intent: str, window: str) -> str:
    """What follows the full schema. The schema comes first, right after the fixed prefix, so its compiled
    block is always spliced where it was compiled (Δpos 0: bit-exact, no repair)."""
    head = f"{window}\n" if window else ""
    return f"{head}Request: {intent}<|im_end|>\n<|im_start|>assistant\n"


CHOOSER_SYSTEM = (
    "You pick the one tool that does what the user asks. Read each tool's name and what it does, then "
    "answer with the tool's name only."
)


def chooser_prefix() -> str:
    return chat("system", CHOOSER_SYSTEM) + "<|im_start|>user\n"


@dataclass
class Choice:
    index: int
    ms: float


@dataclass
class Generation:
    """A generated call: what was decoded, what survived grounding, what is still missing."""

    arguments: dict[str, Any]
    raw: dict[str, Any]
    dropped: list[str]
    missing: list[str]
    prompt_tokens: int
    timings_ms: dict[str, float] = field(default_factory=dict)
    chosen_tokens: int = 0
    forced_tokens: int = 0
    schema_placement: dict[str, Any] | None = None  # full-schema mode: spliced or prefilled, and why
    fallback_from: list[str] | None = None  # schema "auto": what the signature left unresolved

    def trace(self) -> dict[str, Any]:
        return {
            "arguments": self.arguments,
            "dropped": {name: self.raw.get(name.split(".")[0]) for name in self.dropped},
            "missing": self.missing,
            "prompt_tokens": self.prompt_tokens,
            "tokens": {"chosen": self.chosen_tokens, "forced": self.forced_tokens},
            "ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
            **({"schema": self.schema_placement} if self.schema_placement else {}),
            **({"auto_full_schema_after": self.fallback_from} if self.fallback_from else {}),
        }


class ArgumentGenerator:
    """Generates arguments on one engine; callers hold no lock, a turn takes the engine's."""

    def __init__(self, engine: GenerationBackend, *, focused: bool = False) -> None:
        self.engine = engine
        self.focused = focused  # the IR with only the parameters the request can fill (``ir.py``)
        self.vocabulary = Vocabulary(engine)
        self.prefix_tokens = engine.tokenize(system_prefix())
        self.chooser_tokens = engine.tokenize(chooser_prefix())
        self.blocks: SchemaBlocks | None = None  # set when full-schema mode splices compiled blocks

    def warm(self) -> None:
        """Prefill the fixed prefix now instead of on the first call."""
        with self.engine.lock:
            self.engine.cursor(self.prefix_tokens)
            self.engine.cursor(self.chooser_tokens)

    def _focus(self, intent: str, window: SessionWindow | None) -> str | None:
        """The request the IR's parameters are chosen for, or None for all of them (the default, and a
        request that points back at earlier turns, "open that file", fills parameters it does not name)."""
        if not self.focused or (window is not None and window.turns and refers_back(intent)):
            return None
        return intent

    def choose_tool(self, intent: str, candidates: list[tuple[str, str]]) -> Choice:
        """Let the model pick among close candidates ``(name, compressed IR)``, under a constraint to
        their names (a trie: the first tokens that tell them apart decide, the rest is fed)."""
        lines = "\n".join(f"- {name}: {ir}" for name, ir in candidates)
        text = f"Tools:\n{lines}\nRequest: {intent}<|im_end|>\n<|im_start|>assistant\n"
        started = time.perf_counter()
        with self.engine.lock:
            cursor = self.engine.cursor(self.chooser_tokens + self.engine.tokenize(text))
            decoder = SchemaDecoder(self.engine, self.vocabulary, cursor)
            index = decoder.choose([name for name, _ in candidates])
        return Choice(index, (time.perf_counter() - started) * 1000)

    def generate(
        self,
        name: str,
        schema: dict[str, Any] | None,
        description: str | None,
        intent: str,
        window: SessionWindow | None = None,
        *,
        full_schema: bool = False,
        block_key: str | None = None,
    ) -> Generation:
        """``full_schema``: the whole JSON schema instead of the IR (the evaluation's oracle, or the
        gateway's full-schema mode); with ``block_key`` and compiled blocks the schema is spliced."""
        schema = schema or {"type": "object", "properties": {}}
        window_text = window.render(intent) if window else ""
        timings: dict[str, float] = {}
        placement: SpliceReport | None = None
        if full_schema:
            schema_tokens = self.engine.tokenize(schema_text(name, schema, description))
            suffix = self.engine.tokenize(request_text(intent, window_text))
        else:
            schema_tokens = []
            suffix = self.engine.tokenize(
                turn_text(
                    compressed_ir(name, schema, description, self._focus(intent, window)),
                    intent,
                    window_text,
                )
            )
        with self.engine.lock:
            started = time.perf_counter()
            if schema_tokens:
                cursor = self.engine.cursor(self.prefix_tokens, logits=False)
                if self.blocks is not None and block_key is not None:
                    placement = self.blocks.place(cursor, block_key, schema_tokens, suffix)
                else:
                    cursor.feed(schema_tokens)
                    cursor.feed(suffix)
            else:  # the whole prompt: the arena serves what an earlier turn of the session already holds
                cursor = self.engine.cursor(self.prefix_tokens + suffix)
            decoder = SchemaDecoder(
                self.engine,
                self.vocabulary,
                cursor,
                insist=named_keys(schema, intent),
                quoted=quoted_spans(intent),
                text_keys=free_text_keys(schema),
                named_values=named_values(schema, intent),
                entities=stated_entities(intent),
            )
            decoder.stats.started = started
            timings["prefill"] = (time.perf_counter() - started) * 1000
            raw = decoder.object(schema, schema, 0)
            timings["decode"] = (time.perf_counter() - started) * 1000 - timings["prefill"]
            if decoder.stats.first_token_ms is not None:
                timings["first_token"] = decoder.stats.first_token_ms
        # Values may come from earlier turns only when the request points back at them: "write a new
        # file saying hello" after reading shopping.txt must not overwrite shopping.txt.
        earlier = window if window and refers_back(intent) else None
        sources = intent + "\n" + (earlier.sources() if earlier else "")
        arguments, dropped = ground(raw, schema, sources)
        arguments = split_owner_repo(arguments, schema)
        arguments = own_repository_elsewhere(anchor_repository(arguments, schema, intent))
        arguments = my_repository(arguments, schema, intent, earlier.sources() if earlier else "")
        arguments = whole_path(arguments, intent)
        arguments = whole_word(arguments, schema, intent)
        arguments = scope_qualifiers(arguments, schema, intent)
        arguments = number_not_id(arguments, earlier.numbers_by_id() if earlier else {})
        required = [k for k in schema.get("required") or [] if k not in arguments]
        return Generation(
            arguments,
            raw,
            dropped,
            required,
            len(self.prefix_tokens) + len(schema_tokens) + len(suffix),
            timings,
            decoder.stats.chosen,
            decoder.stats.forced,
            placement.trace() if placement else None,
        )


# --- grounding ----------------------------------------------------------------------------------------------
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


class _Sources:
    def __init__(self, text: str) -> None:
        self.text = _normal(text)
        tokens = _run_tokens(text)
        self.words = set(tokens) - {"/", "."}
        self._runs = " " + " ".join(tokens) + " "
        # each stated number and how often
        self.numbers = Counter(_NUMBER.findall(URL_PATTERN.sub(" ", text)))
        for url in URL_PATTERN.findall(text):
            self.numbers.update(_URL_DIGITS.findall(url))
        self.quoted = [_normal(span) for span in quoted_spans(text)]
        # an enum value said as the decoder reads it ("by creation date" → ``created``), outside quoted
        # text: "Closes #130" in a quoted PR body asks for no ``state: closed``
        self.said = sayer(without_quotes(text))

    def quotes(self, value: str) -> bool:
        """The value is text the request quotes (or holds a quoted span whole)."""
        value = _normal(value)
        return any(value in span or span in value for span in self.quoted)

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
        return text in sources.numbers or (text.endswith(".0") and text[:-2] in sources.numbers)
    if isinstance(value, str):
        if not value.strip() or _PLACEHOLDER.match(value.strip()) or value.strip().lower() in PRONOUNS:
            return False
        if isinstance(prop.get("enum"), list):  # "in" does not name ``in_progress``
            said = bool((_words(value) - STOPWORDS) & sources.words) or names_value(value, sources.said)
            return required or said
        if (words := _words(value)) and words <= _words(name):
            return False  # the key's own name echoed as its value: ``labels: ["label"]`` from "bug-labelled"
        if _normal(value) in sources.text:
            return True
        if prop.get("format") in ("date", "date-time") or "iso 8601" in str(prop.get("description", "")).lower():
            # a date the model normalised ("March 1st, 2025" → 2025-03-01): its year must be stated
            return value[:4] in sources.numbers
        if FREE_TEXT.search(name.lower()):
            words = _words(value)
            return bool(words) and len(words & sources.words) / len(words) >= 0.5
        # an identifier the model re-spelled (``docs-refresh`` from "docs refresh") is stated when its
        # words stand together in the sources; words from all over the request glued into one value
        # (``inventory-api.py``, ``lumen-ui/src/Button.tsx``), a path made of words ("docs folder" →
        # ``docs/folder``) or a possessive (``my-blog``) are not. A path is never re-spelled: "the top
        # level of psf/requests" names no ``top-level`` file
        if "path" in name.lower():
            return False
        run = _run_tokens(value)
        return bool(run) and run[0] not in PRONOUNS and sources.states_run(run)
    return True


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


def tidy(value: Any, name: str) -> Any:
    """Trailing sentence punctuation is not part of an identifier (``ivan-p.`` → ``ivan-p``)."""
    if isinstance(value, str) and not FREE_TEXT.search(name.lower()):
        return value.rstrip(".,;:!?")
    if isinstance(value, list):
        return [tidy(v, name) for v in value]
    return value


def ground(raw: dict[str, Any], schema: dict[str, Any], text: str) -> tuple[dict[str, Any], list[str]]:
    """Keep the values the request or window supply; return them and the names of the dropped ones."""
    sources = _Sources(text)
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

    def walk(value: dict[str, Any], node: dict[str, Any], path: str) -> dict[str, Any]:
        props = node.get("properties") or {}
        required = set(node.get("required") or [])
        kept: dict[str, Any] = {}
        for key, item in value.items():
            item = tidy(item, key)
            prop = _resolve(props.get(key) or {}, schema)
            where = f"{path}{key}"
            if isinstance(item, dict):
                inner = walk(item, prop, where + ".")
                if inner and set(prop.get("required") or []) <= set(inner):
                    kept[key] = inner
                else:
                    dropped.append(where)
            elif isinstance(item, list):
                item_schema = _resolve(prop.get("items") or {}, schema)
                items = [
                    v
                    for v in item
                    if _grounded(v, item_schema, key, False, sources)
                    and (
                        not isinstance(v, str)
                        or _REPOSITORY_KEY.search(key)
                        or v in stated_slugs
                        or _grounded(v, {}, key, False, beside)
                    )
                ]
                if items:
                    kept[key] = items
                else:
                    dropped.append(where)
            elif (
                _grounded(item, prop, key, key in required or (isinstance(item, bool) and key in named), sources)
                and _first_use(item, sources, used_by_strings if isinstance(item, str) else used_numbers)
                and (key in required or not _unasked_prose(item, key, named, sources))
            ):
                kept[key] = item
            else:
                dropped.append(where)
        return kept

    return walk(raw, schema, ""), dropped


_REPOSITORY_KEY = re.compile(r"owner|repo|org", re.IGNORECASE)


def _unasked_prose(value: Any, key: str, named: set[str], sources: _Sources) -> bool:
    """Prose for an optional key that the request neither quotes nor asks for by the key's name."""
    return isinstance(value, str) and bool(PROSE.search(key.lower())) and key not in named and not sources.quotes(value)


_FILE_NAME = re.compile(r"\.(?:[a-z]{1,4}|[ch]pp)$", re.IGNORECASE)
_REPO_URL = re.compile(r"https?://[\w.-]+/([\w.-]+)/([\w.-]+)")


def repositories(text: str) -> list[tuple[str, str]]:
    """``owner/repo`` pairs a request names, in order: from URLs, then bare ``owner/repo`` shapes."""
    found = [(m.group(1), m.group(2).removesuffix(".git")) for m in _REPO_URL.finditer(text)]
    for match in REPO_PATTERN.finditer(URL_PATTERN.sub(" ", text)):
        owner, _, repo = match.group(0).partition("/")
        found.append((owner, repo.rstrip(".")))
    return list(dict.fromkeys(found))


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


def scope_qualifiers(arguments: dict[str, Any], schema: dict[str, Any], intent: str) -> dict[str, Any]:
    """A search whose query parameter documents the ``repo:owner/repo`` or ``org:`` qualifier (GitHub's
    code and commit search do) and whose schema has no ``owner``/``repo`` of its own gets the scope the
    request names added to the query: "find usages of useSyncExternalStore in facebook/react" otherwise
    searches all of GitHub. The 0.5B model writes the search words and leaves the scope out."""
    props = schema.get("properties") or {}
    query, query_schema = arguments.get("query"), props.get("query")
    if not isinstance(query, str) or not isinstance(query_schema, dict) or "owner" in props or "repo" in props:
        return arguments
    documented = str(query_schema.get("description", ""))
    scopes: list[str] = []
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
    string that is no word of the request but part of exactly one takes that word; prose, enum values
    and values that are words of their own are left alone."""
    words = set(_REQUEST_WORD.findall(URL_PATTERN.sub(" ", intent)))
    whole = dict(arguments)
    for key, raw in properties(schema):
        value = arguments.get(key)
        if not isinstance(value, str) or len(value) < 2 or "enum" in raw or FREE_TEXT.search(key.lower()):
            continue
        if value in words or re.search(r"\s", value):
            continue
        longer = [w for w in words if value in w]
        if len(longer) == 1:
            whole[key] = longer[0]
    return whole


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
