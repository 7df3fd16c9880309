"""Local argument generation: intent + compressed IR + session window → a schema-valid arguments object.

Prompt = fixed system prefix (instructions and worked examples; warm in the engine's sequence 0, paid
once per process) + the tool's compressed IR (spliced from its compiled block right after the prefix,
where it was compiled: exact, and not computed again) + the session window + the intent. The output is decoded
under the schema's grammar (``decoding.py``), so it always parses and type-checks. Then what the
grammar cannot do:

- **grounding** (``grounding.py``): a value must come from the request or the window (strings copied
  or their words present, numbers present as digits, optional enums/booleans named). Placeholders
  (``"<owner>"``, ``"string"``, example values the request never gave) fail it and are dropped, never
  forwarded;
- **placement** (``placement.py``): the entities the request states go where they belong when the
  model left them out or put them under the wrong key (``issue #12``, "fix/tooltip -> develop");
- **validation** with ``jsonschema`` (by the caller): a required argument that is missing is reported
  back to the host as a question instead of being invented.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .decoding import SchemaDecoder, Vocabulary, a_file_for_a_folder
from .engine import ContextOverflow, GenerationBackend
from .grounding import as_globs, excluded_when_said, file_kind_globs, ground, said_once_used_once
from .ir import IR_TOKEN_BUDGET, compressed_ir, ir_is_long
from .mentions import (
    free_text_keys,
    named_keys,
    named_values,
    quoted_spans,
    stated_entities,
)
from .mood import spelled_verbs
from .pasted import Pasted, points_at_material, split_pasted
from .placement import place_stated
from .signature import with_described_options
from .window import SessionWindow, refers_back

if TYPE_CHECKING:
    from .block_store import SchemaBlocks
    from .kv_splice import SpliceReport

# Positions kept free after the prompt for the arguments object: a few strings of at most
# decoding.MAX_STRING_TOKENS each, keys and punctuation.
ARGUMENTS_ROOM = 256

SYSTEM = (
    "You turn a request into the JSON arguments of one tool call. Use only values that the request or the "
    "earlier turns state, copied exactly. Leave out every argument they do not state: never guess owners, "
    "numbers, pages or defaults. 'owner/repo' gives owner and repo separately. Numbers are bare integers."
)

# Worked examples in the fixed prefix: free at run time (the prefix stays warm), and they show the
# 0.5B model the three habits it lacks: split owner/repo, leave unstated arguments out, copy from turns.
# Their tool lines keep the IR's older form (typed, quoted, described): rewritten like today's IR
# they got 2.4 points fewer arguments right on one half of the GitHub set (session 35, docs/arguments.md).
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
        'Tool: merge_pull_request(owner: str, repo: str, pullNumber: int, merge_method?: "merge"|"squash"|"rebase")'
        " — Merge a pull request\n"
        'Earlier:\n1. "show me pull request 7 in octo/site" → get_pull_request(owner="octo", repo="site", '
        'pullNumber=7) → number=7 title="Fix nav" state=open\nRequest: squash-merge it',
        '{"owner": "octo", "repo": "site", "pullNumber": 7, "merge_method": "squash"}',
    ),
    (
        "Tool: rerun_failed_jobs(owner, repo, run_id: int) — Re-run the failed jobs of a run\n"
        'Earlier:\n1. "recent CI runs in acme/api" → list_runs(owner="acme", repo="api") → runs: [1] id=5101 '
        "conclusion=success; [2] id=5102 conclusion=failure\nRequest: rerun the failed one",
        '{"owner": "acme", "repo": "api", "run_id": 5102}',
    ),
)


def chat(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def system_prefix(system: str = SYSTEM, examples: tuple[tuple[str, str], ...] = EXAMPLES) -> str:
    """The fixed part of every prompt, up to the start of the turn's user message."""
    shots = "".join(chat("user", q) + chat("assistant", a) for q, a in examples)
    return chat("system", system) + shots + "<|im_start|>user\n"


REQUEST_LABEL = "Request:"
ASSISTANT_TURN = "<|im_end|>\n<|im_start|>assistant\n"


def turn_text(tool_text: str, intent: str, window: str) -> str:
    """A whole turn's text after the fixed prefix, the tool's form (IR or schema) given."""
    return "".join(turn_parts(f"Tool: {tool_text}\n{REQUEST_LABEL}", intent, window))


def turn_parts(form: str, intent: str, window: str) -> tuple[str, str]:
    """A turn's text after the fixed prefix in two parts: the tool's form, as much of it as the turn
    splices from the tool's block, and what the turn computes. The tool comes first, right after the
    fixed prefix, so its block is always spliced where it was compiled (Δpos 0: bit-exact, no repair).

    A form ends with the label of the request that follows it, constant text the block computes once
    (two tokens fewer in every turn); earlier turns shown go between the tool and the label, and then
    the turn splices the form without it, the block's head (:func:`atb.leading`)."""
    if not window:
        return form, request_text(intent, "")
    return form.removesuffix(REQUEST_LABEL), request_text(intent, window)


def ir_text(ir: str) -> str:
    """The compressed-IR form of a tool, exactly as its block compiles it (:func:`turn_parts` says how
    much of it a turn holds)."""
    return f"Tool: {ir}\n{REQUEST_LABEL}"


def ir_block_key(key: str, text: str) -> str:
    """The block key of a tool's IR form (``key`` names its full-schema form), with a digest of the IR
    text itself: the schema key does not change when a new version renders the IR differently, and a
    block found under it would then hold the old text, which a splice refuses ("the block holds other
    text"), so every call would prefill and the block would never be compiled again."""
    return f"{key}.ir-{hashlib.blake2b(text.encode(), digest_size=5).hexdigest()}"


def tool_blocks(
    key: str, name: str, schema: dict[str, Any] | None, description: str | None, *, full_schema: bool
) -> list[tuple[str, str]]:
    """The ``(block key, text)`` of each form of a tool that calls splice: its IR, and with
    ``full_schema`` (the gateway's full and auto modes) its full schema too."""
    schema = schema or {"type": "object", "properties": {}}
    ir = ir_text(compressed_ir(name, schema))
    blocks = [(ir_block_key(key, ir), ir)]
    return [*blocks, (key, schema_text(name, schema, description))] if full_schema else blocks


def schema_text(name: str, schema: dict[str, Any], description: str | None) -> str:
    """The full-schema form of a tool, exactly as its block compiles it (:func:`turn_parts` says how much
    of it a turn holds)."""
    tool = json.dumps({"name": name, "description": description or "", "inputSchema": schema})
    return f"Tool: {tool}\n{REQUEST_LABEL}"


def request_text(intent: str, window: str) -> str:
    """What a turn computes after the tool's form (:func:`turn_parts`): the request, after the earlier
    turns and their label when it shows them."""
    if not window:
        return f" {intent}{ASSISTANT_TURN}"
    return f"{window}\n{REQUEST_LABEL} {intent}{ASSISTANT_TURN}"


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
    computed_tokens: int  # of the prompt, what this turn put through the model (not the prefix or a block)
    timings_ms: dict[str, float] = field(default_factory=dict)
    chosen_tokens: int = 0
    forced_tokens: int = 0
    guessed_tokens: tuple[int, int] = (0, 0)  # request tokens guessed inside strings, and kept (decoding.py)
    decodes: int = 0  # batches the arguments took (each chosen token alone, or with what rode along)
    schema_placement: dict[str, Any] | None = None  # full-schema mode: spliced or prefilled, and why
    fallback_from: list[str] | None = None  # schema "auto": what the signature left unresolved
    from_last_call: list[str] = field(default_factory=list)  # an elided follow-up's keys kept from the last call

    def trace(self) -> dict[str, Any]:
        return {
            "arguments": self.arguments,
            "dropped": {name: self.raw.get(re.split(r"[.\[]", name)[0]) for name in self.dropped},
            "missing": self.missing,
            "prompt_tokens": self.prompt_tokens,
            "computed_tokens": self.computed_tokens,
            "tokens": {
                "chosen": self.chosen_tokens,
                "forced": self.forced_tokens,
                "guessed": self.guessed_tokens[0],
                "guesses_kept": self.guessed_tokens[1],
                "decodes": self.decodes,
            },
            "ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
            **({"schema": self.schema_placement} if self.schema_placement else {}),
            **({"auto_full_schema_after": self.fallback_from} if self.fallback_from else {}),
            **({"from_last_call": self.from_last_call} if self.from_last_call else {}),
        }


class ArgumentGenerator:
    """Generates arguments on one engine; callers hold no lock, a turn takes the engine's."""

    def __init__(
        self,
        engine: GenerationBackend,
        *,
        focused: bool = False,
        ir_budget: int = IR_TOKEN_BUDGET,
        guess: bool = True,
        merge: bool = True,
        known_words: frozenset[str] = frozenset(),
    ) -> None:
        self.engine = engine
        # the words a misspelt verb is not (the router's embedder's whole words, ``embedder.whole_words``);
        # empty: requests are read as written
        self.known_words = known_words
        self.focused = focused  # the IR with only the parameters the request can fill (``ir.py``)
        self.ir_budget = ir_budget  # a tool whose IR is longer than this is shown focused (0: never)
        # Two decode-time savers (``decoding.py``), switchable for the side-by-side benchmark
        # (``bench/decode_speed.py``): values guessed from the request and checked in a batch, and a
        # choice fed together with the rest of the one option it leaves.
        self.guess = guess
        self.merge = merge
        self.vocabulary = Vocabulary(engine)
        self.prefix_tokens = engine.tokenize(system_prefix())
        self.chooser_tokens = engine.tokenize(chooser_prefix())
        self.blocks: SchemaBlocks | None = None  # set when full-schema mode splices compiled blocks

    def warm(self, *, chooser: bool = True) -> None:
        """Prefill the fixed prefix now instead of on the first call; and the chooser's, where a judge
        will use it (``nexus.judge``: off by default, and then its prompt is never read)."""
        with self.engine.lock:
            self.engine.cursor(self.prefix_tokens)
            if chooser:
                self.engine.cursor(self.chooser_tokens)

    def _focus(self, whole_ir: str, intent: str, window: SessionWindow | None) -> str | None:
        """The request the IR's parameters are chosen for, or None for all of them: the default for a tool
        whose IR fits ``ir_budget`` (``ir.IR_TOKEN_BUDGET``), and for a request that points back at earlier
        turns ("open that file"), which fills parameters it does not name."""
        if window is not None and window.turns and refers_back(intent):
            return None
        if self.focused:
            return intent
        return intent if ir_is_long(whole_ir, self.engine.tokenize, self.ir_budget) else None

    def choose_tool(self, intent: str, candidates: list[tuple[str, str]]) -> Choice:
        """Let the model pick among close candidates ``(name, ir.choice_ir)``, under a constraint to
        their names (a trie: the first tokens that tell them apart decide, the rest is fed)."""
        lines = "\n".join(f"- {name}: {ir}" for name, ir in candidates)
        text = f"Tools:\n{lines}\nRequest: {intent}<|im_end|>\n<|im_start|>assistant\n"
        started = time.perf_counter()
        with self.engine.lock:
            # the fixed prefix warm (or prefilled and kept), the request always computed after it: every
            # call takes the same batch split, so the same request gets the same choice (a prompt shared
            # warm up to its last token would be decoded in another split, and near-ties can tip)
            cursor = self.engine.cursor(self.chooser_tokens, logits=False)
            cursor.feed(self.engine.tokenize(text))
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
        given: Collection[str] = (),
    ) -> Generation:
        """``full_schema``: the whole JSON schema instead of the IR (the evaluation's oracle, or the
        gateway's full-schema mode). With ``block_key`` and compiled blocks the tool's form is spliced
        from its block (:func:`tool_blocks`); without, the oracle prefills the schema every turn, and the
        IR goes through the prefix arena with the rest of the prompt. ``given``: keys the caller fills in
        when the call leaves them out (``nexus.defaults``); the model may write them, is not made to, and
        they are not missing.

        Values may come from earlier turns only when the request points back at them (grounding), and
        shown them, the 0.5B model copies from them: after "what time is it in Tokyo" it wrote Asia/Tokyo
        into "convert 9am London time to New York" as its source, and that call became a question
        (docs/arguments.md, session 41). So a request is read alone, and again with the earlier turns
        only when it points back and leaves a required argument unsaid (one more generation, on the
        turns that need them). An elided follow-up ("and in Berlin?") is read alone, then goes on with
        the last call where it says nothing; shown that call, the model repeated it.
        Read alone it may say nothing the model can use ("what about 5pm?" became 15:00, not grounded),
        and a repeat of an earlier call is never what it asks: then it is read with the earlier turns, and
        if that repeats one too, the call asks for what the follow-up left unsaid."""
        pasted = split_pasted(intent)
        if self.known_words and not pasted.material:
            # read with its verbs spelt right, as the router reads it: "asign hexa-dev/cli-tools issue 45 to
            # ravi-n and nora-t" got no assignees, "creat a gist notes.md w/ '…'" no filename (session 64);
            # pasted material is left as written ("creat" is a system call)
            intent = spelled_verbs(intent, self.known_words)
            pasted = split_pasted(intent)
        required = list((schema or {}).get("required") or [])

        def generate(earlier: SessionWindow | None, carried: dict[str, Any] | None = None) -> Generation:
            one = functools.partial(
                self._generate,
                name,
                schema,
                description,
                earlier=earlier,
                carried=carried,
                pasted=pasted,
                full_schema=full_schema,
                block_key=block_key,
                given=given,
            )
            return _read_apart(one, intent, pasted, required, given)

        if window is None:
            return generate(None)
        carried = window.carried_call(pasted.request, name)
        if not carried:
            # most words that point back point inside their own request ("open an issue …, label it bug"):
            # read alone first, and with the earlier turns when that leaves a required argument unsaid
            alone = generate(None)
            return generate(window) if alone.missing and refers_back(pasted.request) else alone
        before = [_own(turn.arguments, given) for turn in window.turns if turn.tool == name]
        alone = generate(None, carried)
        if _own(alone.arguments, given) not in before:
            return alone
        shown = generate(window)
        if _own(shown.arguments, given) not in before:
            return shown
        said = {k: v for k, v in alone.arguments.items() if k not in alone.from_last_call}  # ask for the rest
        unsaid = [k for k in required if k not in given and k not in said]
        return dataclasses.replace(alone, arguments=said, from_last_call=[], missing=unsaid)

    def _generate(
        self,
        name: str,
        schema: dict[str, Any] | None,
        description: str | None,
        intent: str,
        *,
        earlier: SessionWindow | None,
        carried: dict[str, Any] | None,
        pasted: Pasted,
        full_schema: bool,
        block_key: str | None,
        given: Collection[str],
    ) -> Generation:
        """One generation of ``intent`` (the request, with or without its pasted material): ``earlier``
        turns shown and a source of values, or none; ``carried`` fills what the request leaves out."""
        carried = carried or {}
        schema = schema or {"type": "object", "properties": {}}
        # the tool's text (and its compiled block) stays as the server wrote it; only the decoder relaxes
        # what is required, and reads the values a description lists as an enum (as grounding does)
        required_here = [k for k in schema.get("required") or [] if k not in given]
        listed = with_described_options(schema)
        decoded_schema = {**listed, "required": required_here} if given and "required" in schema else listed
        window_text = earlier.render(intent) if earlier else ""
        timings: dict[str, float] = {}
        placement: SpliceReport | None = None
        focus = None
        if full_schema:
            form = schema_text(name, schema, description)
        else:
            whole = compressed_ir(name, schema)
            focus = self._focus(whole, intent, earlier)
            form = ir_text(whole if focus is None else compressed_ir(name, schema, intent=focus))
            block_key = ir_block_key(block_key, form) if block_key is not None and focus is None else None
        tool_part, rest = turn_parts(form, intent.strip(), window_text)
        tool_tokens, suffix = self.engine.tokenize(tool_part), self.engine.tokenize(rest)
        form_tokens = tool_tokens if tool_part == form else self.engine.tokenize(form)
        entities, quoted = stated_entities(intent), quoted_spans(intent)
        prompt_length = len(self.prefix_tokens) + len(tool_tokens) + len(suffix)
        if prompt_length + ARGUMENTS_ROOM > self.engine.context_size():
            raise ContextOverflow(
                f"the request and the tool's form take {prompt_length} tokens; the local model's context holds "
                f"{self.engine.context_size()}, {ARGUMENTS_ROOM} of them kept for the arguments"
            )
        with self.engine.lock:
            started = time.perf_counter()
            # The warm prefix, then the tool's form and the request in batches of their own, on every
            # path: spliced from a compiled block, prefilled in its place (``Splicer.place``), or computed
            # without blocks (the oracle, a form focused on the request). Batches of other lengths round
            # differently and near-ties tip; when an earlier turn's prompt in the arena decided how much
            # of this one was computed, and in which batch, a repeated request could get other
            # arguments than the first time.
            cursor = self.engine.cursor(self.prefix_tokens, logits=False)
            before = cursor.computed
            if self.blocks is not None and block_key is not None:
                placement = self.blocks.place(cursor, block_key, tool_tokens, suffix, form_tokens)
            else:
                cursor.feed(tool_tokens)
                cursor.feed(suffix)
            computed = cursor.computed - before
            decoder = SchemaDecoder(
                self.engine,
                self.vocabulary,
                cursor,
                insist=named_keys(listed, intent),
                quoted=quoted,
                text_keys=free_text_keys(schema),
                named_values=named_values(listed, intent),
                entities=entities,
                source=f"{intent}\n{window_text}" if self.guess else "",
                merge=self.merge,
            )
            decoder.stats.started = started
            timings["prefill"] = (time.perf_counter() - started) * 1000
            prompt_decodes = cursor.decodes
            raw = decoder.object(decoded_schema, decoded_schema, 0)
            decodes = cursor.decodes - prompt_decodes
            timings["decode"] = (time.perf_counter() - started) * 1000 - timings["prefill"]
            if decoder.stats.first_token_ms is not None:
                timings["first_token"] = decoder.stats.first_token_ms
        # "write a new file saying hello" after reading shopping.txt must not overwrite shopping.txt
        window_sources = earlier.sources() if earlier else ""
        sources = intent + "\n" + window_sources
        asked = pasted.request + "\n" + window_sources if pasted.material else None
        arguments, dropped = ground(raw, listed, sources, asked)
        arguments = place_stated(arguments, schema, intent, name, earlier, pasted)
        arguments, repeated = said_once_used_once(arguments, sources, required_here)
        arguments, kind_words = file_kind_globs(arguments, schema, description, intent)
        arguments, unsaid_globs = as_globs(arguments, schema, description, intent)
        arguments, unasked_exclusions = excluded_when_said(arguments, intent)
        dropped = [*dropped, *repeated, *kind_words, *unsaid_globs, *unasked_exclusions]
        from_last_call = sorted(k for k in carried if k not in arguments and k not in given)
        arguments = {**{k: carried[k] for k in from_last_call}, **arguments}
        # A configured default (``given``) yields only to a value the request states as one: a path, a
        # number, a branch or quoted text. "remember that Alice works at Acme", routed to a git tool,
        # must not send repo_path "Acme" past the repository the user configured.
        if given:
            stated = {value for _, value in entities} | set(quoted)
            stated |= {w for w in (w.strip(".,;:!?()'\"") for w in intent.split()) if re.search(r"[/\\~]", w)}
            # "what did I change in a.txt" states a file, not the repository a git tool's repo_path wants
            overridden = [
                k
                for k in given
                if k in arguments and (str(arguments[k]) not in stated or a_file_for_a_folder(k, str(arguments[k])))
            ]
            arguments = {k: v for k, v in arguments.items() if k not in overridden}
            dropped = [*dropped, *overridden]
        required = [k for k in required_here if k not in arguments]
        return Generation(
            arguments,
            raw,
            dropped,
            required,
            prompt_length,
            computed,
            timings,
            decoder.stats.chosen,
            decoder.stats.forced,
            (decoder.stats.guessed, decoder.stats.kept),
            decodes,
            placement.trace() if placement else None,
            from_last_call=from_last_call,
        )


def _read_apart(
    generate: Callable[[str], Generation],
    intent: str,
    pasted: Pasted,
    required: Collection[str],
    given: Collection[str],
) -> Generation:
    """The request without what it pastes, and with it only when that leaves a required argument
    unsaid (one the caller fills in itself, ``given``, is never unsaid). Shown a pasted trace or log, the
    0.5B model copied its values over the request's own: ``path: /app/server/main.py`` for "open the
    README.md in my dotfiles repo", ``sha: a81f3c`` for "commit a1b2c3d" (session 59). The material
    still becomes the long text (``placement.pasted_material``), and a request that asks about it
    ("search the code for this error: <error>") reads it."""
    alone = generate(pasted.request)
    if not pasted.material:
        return alone
    # a required value that only points at the material ("error" for "find this error in the code") is
    # no value: the material says it
    own = {k: v for k, v in alone.arguments.items() if k not in required or not points_at_material(v)}
    if all(k in own or k in given for k in required):
        return alone
    shown = generate(intent)
    # the request's own values win: the material supplies only what the request leaves unsaid
    arguments = {**{k: v for k, v in shown.arguments.items() if k not in own}, **own}
    missing = [k for k in shown.missing if k not in arguments]
    return dataclasses.replace(shown, arguments=arguments, missing=missing)


def _own(arguments: dict[str, Any], given: Collection[str]) -> dict[str, Any]:
    """The arguments but the keys the gateway fills in itself (``nexus.defaults``)."""
    return {k: v for k, v in arguments.items() if k not in given}
