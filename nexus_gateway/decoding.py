"""Schema-constrained decoding of an arguments object: the GBNF grammar and the local walker of it.

The language is fixed by the upstream JSON schema: an object of the schema's keys, each at most once;
required keys always written, optional ones when the model chooses them (a required value the request
does not supply is dropped by grounding afterwards and asked for, never forwarded); values typed by the
schema (enums as literals, integers as digits, bounded strings, arrays, nested objects). Two nudges from
the request itself keep the 0.5B model from closing the object too early: optional keys the request
names (``insist``) are written before it may close, and while text the request quotes is in no value
yet, the free-text keys get their turn first; an enum key some of whose values the request says is
chosen among those values (``named_values``); arrays are never empty (``docs/arguments.md`` has the
measurements).
:func:`schema_grammar` writes it as GBNF for a backend that takes grammars (llama-server), with the keys
in schema order (any order would make the grammar exponential); :class:`SchemaDecoder` walks the same
language on the local engine, required keys first and otherwise in any order (the model's habit, owner
and repo first, beat schema order), without a grammar sampler:

- where the language allows one continuation (punctuation, the rest of a key once its first token
  decided it) the tokens are fed in one batch, with no sampling at all;
- where it allows a closed set (which key next, an enum value, ``true``/``false``, a candidate tool
  name) the choice is the best-scoring token over a trie of the allowed strings; once a token leaves one
  option, that token and the option's rest are fed in one batch;
- inside a string the only constraint is "no raw control bytes"; the string ends at the first quote.
  Where a string or a number so far is text of the request (or the session window) the model is
  likely copying it, so the request's next few tokens are guessed and checked in the same batch as the
  model's own token (prompt-lookup decoding): the model keeps what it would have chosen anyway, the
  rest is taken back, and a copied ``owner/repo``, title or ten-digit id costs one decode instead of
  one per token.

llama.cpp's grammar sampler checks every one of the 151k vocabulary entries against the grammar's
stacks at each step (~40 ms a token measured here); the walker costs one argmax over a mask. The
figures are in ``docs/benchmarks.md``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .affordance import names_a_path
from .engine import Cursor, GenerationBackend
from .mentions import FREE_TEXT
from .signature import _resolve

MAX_STRING_TOKENS = 96
MAX_NUMBER_TOKENS = 12
MAX_ARRAY_ITEMS = 8
MAX_GUESS_TOKENS = 8  # a guess checked in one batch: on two CPU cores each guessed row costs ~60% of a decode
MIN_GUESS_MATCH = 3  # bytes of the string that must be request text before its continuation is guessed
_NOT_IN_STRING = re.compile(rb'["\\\x00-\x1f]')  # a JSON string would escape these: a guess stops there
_SOURCE_NUMBER = re.compile(rb"(?<![\w.])-?[0-9]+(?:\.[0-9]+)?")
_WORD_START = re.compile(rb"[^A-Za-z0-9]+(?=[A-Za-z0-9])")  # where a word starts after other bytes
_DIGITS = re.compile(rb"^[0-9]+$")
_NUMBER = re.compile(rb"^[0-9.]+$")
_SIGNED_DIGITS = re.compile(rb"^-[0-9]*$")  # "-" or "-5": a number's first token may carry its sign
_SIGNED_NUMBER = re.compile(rb"^-[0-9.]*$")
_EXPONENT = re.compile(rb"^[eE][-+]?[0-9]*$")  # "1e-9", "6.02e23"
_SIGN = re.compile(rb"^[-+]$")
_NUMBER_BYTES = b"0123456789.eE+-\n"  # every byte the patterns above can match (``$`` admits a final newline)
_UNFINISHED = (b"-", b"+", b"e", b"E")  # a number cannot end on these


class DecodeError(ValueError):
    pass


def _value_end(written: bytes, rest: bytes, prose: bool) -> int:
    """Where a value that so far is ``written`` likely ends in ``rest``, the source text after it. A guess
    past the end costs most of a decode per token and is always wrong, so it stops early: at a byte a
    JSON string would escape; at a closing single quote (``'v2 plan'``, not ``reviewer's``); at a
    sentence's end (``.``, ``?``, ``!`` before a space, and for a value that is not ``prose`` a ``,``,
    ``;`` or ``:`` too); and for a one-word value that is not prose, at a space or a ``#``, and at a ``/``
    or a ``:`` unless it already holds a ``/`` (``octo-org/app#204`` gives the owner ``octo-org`` and the
    repository ``app``, ``octo-org:feature`` the owner; a path goes on segment by segment)."""
    end = len(rest)
    found = _NOT_IN_STRING.search(rest)
    if found:
        end = found.start()
    found = re.search(rb"'(?![A-Za-z])|[.?!](?=\s|$)" if prose else rb"'(?![A-Za-z])|[.,?!;:](?=\s|$)", rest[:end])
    if found:
        end = found.start()
    if not prose and not re.search(rb"\s", written):
        found = re.search(rb"[\s#]" if b"/" in written else rb"[\s/#:]", rest[:end])
        if found:
            end = found.start()
    return end


def _closing_quote(piece: bytes) -> int:
    """Index of the first unescaped quote in a token's bytes, or -1."""
    escaped = False
    for i, byte in enumerate(piece):
        if byte == 0x22 and not escaped:
            return i
        escaped = byte == 0x5C and not escaped
    return -1


@dataclass
class DecodeStats:
    """What a decode cost: tokens chosen by the model vs fed without sampling, and when the first came."""

    chosen: int = 0
    forced: int = 0
    guessed: int = 0  # tokens guessed from the request inside strings and numbers, checked in a batch
    kept: int = 0  # of those, the ones the model chose too
    started: float = field(default_factory=time.perf_counter)
    first_token_ms: float | None = None

    def mark(self) -> None:
        self.chosen += 1
        if self.first_token_ms is None:
            self.first_token_ms = (time.perf_counter() - self.started) * 1000


class Vocabulary:
    """Token masks and piece look-ups, built once per engine."""

    def __init__(self, engine: GenerationBackend) -> None:
        pieces = engine.pieces()
        self.pieces = pieces
        self.by_piece: dict[bytes, int] = {}
        for token, piece in enumerate(pieces):
            if piece and piece not in self.by_piece:
                self.by_piece[piece] = token
        size = len(pieces)
        self.digits = np.zeros(size, dtype=bool)
        self.number = np.zeros(size, dtype=bool)
        self.signed_digits = np.zeros(size, dtype=bool)
        self.signed_number = np.zeros(size, dtype=bool)
        self.exponent = np.zeros(size, dtype=bool)
        self.sign = np.zeros(size, dtype=bool)
        self.closers = np.zeros(size, dtype=bool)
        self.printable = np.zeros(size, dtype=bool)
        self.opens = np.zeros(size, dtype=bool)
        for token, piece in enumerate(pieces):
            if not piece:
                continue
            self.printable[token] = min(piece) >= 0x20
            self.opens[token] = self.printable[token] and piece.lstrip(b" ").startswith(b'"')
            self.closers[token] = piece.lstrip()[:1] in (b",", b"}", b"]")
            if piece.translate(None, _NUMBER_BYTES):
                continue  # a byte no number has: none of the patterns below can match (most of the vocabulary)
            self.digits[token] = bool(_DIGITS.match(piece))
            self.number[token] = bool(_NUMBER.match(piece))
            self.signed_digits[token] = bool(_SIGNED_DIGITS.match(piece))
            self.signed_number[token] = bool(_SIGNED_NUMBER.match(piece))
            self.exponent[token] = bool(_EXPONENT.match(piece))
            self.sign[token] = bool(_SIGN.match(piece))
        self.quote = self.by_piece[b'"']


def _numeric(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    """A number, or a list of numbers: its lead-in (space, bracket) and sign are chosen together."""
    kind = _type_of(schema)
    if kind == "array":
        return _type_of(_branch(schema.get("items") or {}, root)) in ("integer", "number")
    return kind in ("integer", "number")


def _type_of(schema: dict[str, Any]) -> str:
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return "enum"
    if "const" in schema:
        return "const"
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if not kind:
        if "properties" in schema:
            return "object"
        return "string"
    return str(kind)


def _branch(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """The schema a value is generated for: ``$ref`` followed, the first non-null ``anyOf``/``oneOf`` arm."""
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            arms = [_resolve(o, root) for o in options]
            arm = next((a for a in arms if _type_of(a) != "null"), arms[0])
            merged = {k: v for k, v in schema.items() if k != key}
            return {**merged, **arm}
    return schema


class SchemaDecoder:
    """Greedy decoding of one JSON value of a schema on an engine cursor.

    Structural text is not fed the moment it is known: it waits in ``pending`` and joins the next
    choice, so the model sees the tokens it would have produced itself (``{"``, ``",`` are single
    tokens in Qwen's vocabulary; feeding ``{`` and ``"`` apart makes ``}`` look likely). ``carry`` is
    text the model already produced past a value's end (the ``",`` that closed a string), which the
    next choice must continue.
    """

    def __init__(
        self,
        engine: GenerationBackend,
        vocabulary: Vocabulary,
        cursor: Cursor,
        insist: Collection[str] = (),
        quoted: Collection[str] = (),
        text_keys: Collection[str] = (),
        named_values: Mapping[str, list[Any]] | None = None,
        entities: Collection[tuple[str, str]] = (),
        source: str = "",
        merge: bool = True,
    ) -> None:
        self.engine = engine
        # Text values are copied from (the request, then the window); empty: no guessing.
        self.source = source.encode()
        self.prose = False  # the string being written is prose (a title, a body): guesses run across words
        self.values: set[bytes] = set()  # string values written so far: a guess does not repeat one
        # A choice that leaves one option feeds its token and the option's rest in one batch (one decode)
        self.merge = merge
        self.vocab = vocabulary
        self.cursor = cursor
        self.insist = frozenset(insist)  # top-level optional keys the request names: written before closing
        # Quoted text of the request that no value holds yet: one of the free-text keys must take it first.
        self.quoted = [" ".join(q.lower().split()) for q in quoted]
        self.text_keys = frozenset(text_keys)
        # Top-level enum keys some of whose values the request says in words: the choice is among those.
        self.named_values = dict(named_values or {})
        # Numbers, file paths and branches the request states (``mentions.stated_entities``): while one is in no
        # value and a key that could hold it is left, the object stays open, once per entity.
        self.entities = list(entities)
        self.stats = DecodeStats()
        self.pending = b""
        self.carry = b""
        self._carry_undo: tuple[np.ndarray, bytes] | None = None

    # --- primitives -----------------------------------------------------------------------------------------
    def force(self, text: str) -> None:
        self.pending += text.encode()

    def flush(self) -> None:
        """Feed what is pending (before free generation, which has no options to join)."""
        if self.carry:
            self.pending = self._undo_carry() + self.pending
        if self.pending:
            tokens = self.engine.tokenize(self.pending.decode("utf-8", errors="ignore"))
            self.stats.forced += len(tokens)
            self.cursor.feed(tokens)
            self.pending = b""

    def _undo_carry(self) -> bytes:
        """Step back over the token that closed a string; return the text to feed in its place."""
        assert self._carry_undo is not None
        logits, replacement = self._carry_undo
        self.cursor.rewind(1, logits)
        self.carry = b""
        self._carry_undo = None
        return replacement

    def _step(self, token: int) -> None:
        self.stats.mark()
        self.cursor.feed([token])

    def choose(self, options: list[str]) -> int:
        """The option the model prefers, decided token by token over their trie; once one option is
        left its remaining tokens are fed without sampling."""
        encoded = [self.pending + o.encode() for o in options]
        if self.carry and not any(e.startswith(self.carry) for e in encoded):
            replacement = self._undo_carry()
            encoded = [replacement + e for e in encoded]
        emitted = self.carry
        self.pending = self.carry = b""
        self._carry_undo = None
        alive = list(range(len(encoded)))
        while True:
            alive = [i for i in alive if encoded[i].startswith(emitted)]
            if not alive:
                raise DecodeError("the decoder left the grammar")
            exact = [i for i in alive if encoded[i] == emitted]
            rests = {encoded[i][len(emitted) :] for i in alive}
            if len(rests) == 1:
                rest = rests.pop()
                if rest:
                    tokens = self.engine.tokenize(rest.decode("utf-8", errors="ignore"))
                    self.stats.forced += len(tokens)
                    self.cursor.feed(tokens)
                return alive[0]
            allowed: set[int] = set()
            for i in alive:
                rest = encoded[i][len(emitted) :]
                for j in range(1, len(rest) + 1):
                    token = self.vocab.by_piece.get(rest[:j])
                    if token is not None:
                        allowed.add(token)
            logits = self.cursor.logits
            assert logits is not None
            ids = np.fromiter(allowed, dtype=np.int64, count=len(allowed))
            if exact and (not len(ids) or float(logits.max()) > float(logits[ids].max())):
                return exact[0]
            if not len(ids):
                raise DecodeError("no token continues the allowed options")
            best = int(ids[int(np.argmax(logits[ids]))])
            after = emitted + self.vocab.pieces[best]
            left = [i for i in alive if encoded[i].startswith(after)]
            rests = {encoded[i][len(after) :] for i in left}
            if self.merge and len(rests) == 1 and (rest := rests.pop()):
                # the choice leaves one option: its remaining tokens ride in the same batch (one decode)
                tokens = self.engine.tokenize(rest.decode("utf-8", errors="ignore"))
                self.stats.mark()
                self.stats.forced += len(tokens)
                self.cursor.feed([best, *tokens])
                return left[0]
            self._step(best)
            emitted = after

    # --- values ---------------------------------------------------------------------------------------------
    def string_body(self, opening: bool = False, max_tokens: int = MAX_STRING_TOKENS) -> str:
        """Characters up to the closing quote. With ``opening`` the first token must open the string
        (`` "/`` is one token: a path's first character often rides with the quote), else the opening
        quote is already in the context. The token that holds the closing quote is kept (with whatever
        follows the quote, as ``carry``)."""
        self.flush()
        out = b""
        written = 0
        printable = self.vocab.printable
        while written < max_tokens:
            logits = self.cursor.logits
            assert logits is not None
            first = opening and written == 0
            token = int(np.argmax(np.where(self.vocab.opens if first else printable, logits, -np.inf)))
            piece = self.vocab.pieces[token]
            head = b""
            if first:
                start = piece.index(b'"') + 1
                head, piece = piece[:start], piece[start:]
            quote = _closing_quote(piece)
            if quote >= 0:
                out += piece[:quote]
                self._step(token)
                self.carry = piece[quote:]
                self._carry_undo = (logits, head + piece[: quote + 1])
                break
            out += piece
            guess = self._string_guess(out)[: max_tokens - written - 1]
            kept = self._step_guessing(token, guess, lambda row, _: int(np.argmax(np.where(printable, row, -np.inf))))
            out += b"".join(self.vocab.pieces[k] for k in kept)
            written += 1 + len(kept)
        try:
            return str(json.loads(b'"' + out + b'"'))
        except ValueError:
            return out.decode("utf-8", errors="replace")

    def _step_guessing(
        self, token: int, guess: list[int], choose: Callable[[np.ndarray, list[int]], int | None]
    ) -> list[int]:
        """Feed ``token`` and, in the same batch, a ``guess`` of what follows it; keep the guessed tokens
        the model would have chosen itself, one by one: ``choose(row, kept)`` is the decoder's own
        choice from a row of the batch's logits (None: it would end the value there). Returns the kept
        tokens; the cursor stands after them, with the logits that follow them."""
        if not guess:
            self._step(token)
            return []
        self.stats.mark()
        rows = self.cursor.feed_every([token, *guess])
        kept: list[int] = []
        for row, guessed in zip(rows, guess, strict=False):
            if choose(row, kept) != guessed:
                break
            kept.append(guessed)
            self.stats.mark()
        if len(kept) < len(guess):
            self.cursor.rewind(len(guess) - len(kept), rows[len(kept)])
        self.stats.guessed += len(guess)
        self.stats.kept += len(kept)
        return kept

    def _string_guess(self, written: bytes) -> list[int]:
        """The tokens that continue ``written`` where the source says the same text, up to where the value
        likely ends (:func:`_value_end`). The text matched is the longest tail of ``written`` that starts
        a word (at least :data:`MIN_GUESS_MATCH` bytes, "ing" of "launching" is no match for "billing")
        and is found where a word starts in the source; of its places, the first whose continuation is not
        a value already written ("lumen" of the repository after the owner ``lumen-labs`` goes on "-ui")."""
        if not self.source or len(written) < MIN_GUESS_MATCH:
            return []
        starts = [0, *(m.end() for m in _WORD_START.finditer(written))]
        for start in starts:
            tail = written[start:][-48:]
            if len(tail) < MIN_GUESS_MATCH:
                break
            for found in re.finditer(rb"(?<![A-Za-z0-9])" + re.escape(tail), self.source):
                rest = self.source[found.end() : found.end() + 64]
                rest = rest[: _value_end(written, rest, self.prose)]
                if rest.strip() and written[start:] + rest not in self.values:
                    tokens = self.engine.tokenize(rest.decode("utf-8", errors="ignore"))[:MAX_GUESS_TOKENS]
                    unprintable = [i for i, token in enumerate(tokens) if not self.vocab.printable[token]]
                    return tokens[: unprintable[0]] if unprintable else tokens
        return []

    def _number_guess(self, text: bytes) -> list[int]:
        """The remaining digits of the first number of the source that starts with the digits written."""
        if not self.source or not text.strip(b"-"):
            return []
        for match in _SOURCE_NUMBER.finditer(self.source):
            number = match[0]
            if len(number) > len(text) and number.startswith(text):
                return self.engine.tokenize(number[len(text) :].decode())[:MAX_NUMBER_TOKENS]
        return []

    def number(self, integer: bool) -> int | float:
        """A JSON number: an optional minus sign, digits, and for ``number`` a fraction and an exponent
        (a dropped sign would turn -74.006 into 74.006, a dropped exponent 1e-9 into 1)."""
        vocab = self.vocab
        text = b""
        # The tokenizer writes ": -4" as `:`, ` -`, `4` but ": 4" as `:`, ` `, `4` (and ": [-5" with ` [-`):
        # forcing the space or bracket alone would leave the model only an unnatural `-` after it, and it
        # drops the sign. So the lead-in and the sign are one choice.
        lead = next((end for end in (b" [", b" ", b"[") if self.pending.endswith(end)), b"")
        plain = vocab.by_piece.get(lead) if lead else None
        if plain is not None:
            self.pending = self.pending[: -len(lead)]
        self.flush()
        if plain is not None:
            logits = self.cursor.logits
            assert logits is not None
            signed = vocab.by_piece.get(lead + b"-")
            negative = signed is not None and float(logits[signed]) > float(logits[plain])
            self._step(signed if negative and signed is not None else plain)
            text = b"-" if negative else b""
        steps = 0
        while steps < MAX_NUMBER_TOKENS:
            logits = self.cursor.logits
            assert logits is not None
            token = self._number_choice(logits, text, integer, steps > 0)
            if token is None:
                break
            text += vocab.pieces[token]
            start = text

            def choose(row: np.ndarray, kept: list[int], start: bytes = start) -> int | None:
                return self._number_choice(row, start + b"".join(vocab.pieces[k] for k in kept), integer, True)

            guess = self._number_guess(text)[: MAX_NUMBER_TOKENS - steps - 1]
            kept = self._step_guessing(token, guess, choose)
            text += b"".join(vocab.pieces[k] for k in kept)
            steps += 1 + len(kept)
        try:
            return int(text) if integer or not re.search(rb"[.eE]", text) else float(text)
        except ValueError:
            digits = re.sub(rb"[^0-9]", b"", text) or b"0"
            return -int(digits) if text.startswith(b"-") else int(digits)

    def _number_choice(self, logits: np.ndarray, text: bytes, integer: bool, may_stop: bool) -> int | None:
        """The next token of a number written so far as ``text``, or None where the model would end it."""
        body = np.where(self._number_mask(text, integer), logits, -np.inf)
        token = int(np.argmax(body))
        if may_stop and not text.endswith(_UNFINISHED):
            stop = float(np.max(np.where(self.vocab.closers, logits, -np.inf)))
            if stop > float(body[token]):
                return None
        return token

    def _number_mask(self, text: bytes, integer: bool) -> np.ndarray:
        """The tokens that may continue a number written so far as ``text``."""
        vocab = self.vocab
        if not text:
            return vocab.digits | vocab.signed_digits if integer else vocab.number | vocab.signed_number
        if text.endswith((b"e", b"E")):
            return vocab.digits | vocab.sign
        if integer or text.endswith((b"-", b"+")) or re.search(rb"[eE]", text):
            return vocab.digits  # no fraction or exponent in an integer, nor a second one in a number
        return vocab.number | vocab.exponent if re.search(rb"[0-9]", text) else vocab.number

    def value(self, schema: Any, root: dict[str, Any], depth: int, quote_open: bool = False) -> Any:
        schema = _branch(schema, root)
        kind = _type_of(schema)
        if quote_open:
            return self._string()
        if kind == "string":
            return self._string(opening=True)
        if kind == "enum":
            values = schema["enum"]
            return values[self.choose([json.dumps(v) for v in values])]
        if kind == "const":
            self.force(json.dumps(schema["const"]))
            return schema["const"]
        if kind == "boolean":
            return self.choose(["true", "false"]) == 0
        if kind in ("integer", "number"):
            return self.number(kind == "integer")
        if kind == "array":
            return self.array(schema, root, depth)
        if kind == "object":
            return self.object(schema, root, depth)
        if kind == "null":
            self.force("null")
            return None
        return self._string(opening=True)

    def _string(self, opening: bool = False) -> str:
        text = self.string_body(opening)
        self.values.add(text.encode())
        if not self.carry:
            self.force('"')
        return text

    def array(self, schema: dict[str, Any], root: dict[str, Any], depth: int) -> list[Any]:
        items = _branch(schema.get("items") or {"type": "string"}, root)
        kind = _type_of(items)
        self.force("[")
        out: list[Any] = []
        # No empty arrays: `[]` states nothing a request could have said (and `labels: []` would clear
        # an issue's labels); the 0.5B model writes it for a key it was made to write ("label it bug").
        # The first item is written, and grounding drops it when the request does not supply it.
        while len(out) < MAX_ARRAY_ITEMS:
            separator = ", " if out else ""
            close = ["]"] if out else []
            if kind == "enum":
                values = items["enum"]
                pick = self.choose([separator + json.dumps(v) for v in values] + close)
                if pick == len(values) or values[pick] in out:
                    return out
                out.append(values[pick])
                continue
            if kind == "string":
                if self.choose([separator + '"', *close]) == 1:
                    return out
                item = self._string()
                if item in out:  # a repeated item: the model is looping, the list is over
                    break
                out.append(item)
                continue
            numeric = kind in ("integer", "number")
            if out and self.choose([",", "]"] if numeric else [", ", "]"]) == 1:
                return out
            if out and numeric:
                self.force(" ")
            out.append(self.value(items, root, depth + 1))
        self.force("]")
        return out

    def object(self, schema: dict[str, Any], root: dict[str, Any], depth: int) -> dict[str, Any]:
        props = schema.get("properties")
        self.force("{")
        out: dict[str, Any] = {}
        if not isinstance(props, dict) or not props or depth > 3:
            self.force("}")
            return out
        entries = [(name, _branch(prop, root)) for name, prop in props.items()]
        required = set(schema.get("required") or [])
        while len(out) < len(entries):
            # Required keys come first and cannot be skipped: the 0.5B model otherwise closes the object
            # before a required `query`. What it writes for a key the request does not supply is
            # dropped by grounding and asked for, never forwarded.
            must = required | self.insist if depth == 0 else required
            remaining = [(name, prop) for name, prop in entries if name not in out and name in must]
            if not remaining and depth == 0 and self._unplaced_quote(out):
                remaining = [(name, prop) for name, prop in entries if name not in out and name in self.text_keys]
            if not remaining and depth == 0 and self.entities:
                remaining = self._homes_of_unplaced_entity(out, [(n, p) for n, p in entries if n not in out])
            closable = not remaining
            if not remaining:
                remaining = [(name, prop) for name, prop in entries if name not in out]
            separator = ", " if out else ""
            # a number's space is its own choice (``number``): `": -4"` is written `:`, ` -`, `4`, and
            # `": [-5"` is `:`, ` [-`, `5`
            options = [
                f"{separator}{json.dumps(name)}:" + ("" if _type_of(prop) == "string" or _numeric(prop, root) else " ")
                for name, prop in remaining
            ]
            pick = self.choose(options + (["}"] if closable else []))
            if pick == len(remaining):
                return out
            name, prop = remaining[pick]
            if depth == 0 and name in self.named_values and _type_of(prop) in ("enum", "boolean"):
                prop = {**prop, "enum": self.named_values[name]}  # a flag's said meaning: one value
            if _numeric(prop, root):
                self.force(" ")
            self.prose = bool(FREE_TEXT.search(name.lower()))  # how far a guessed copy may run (_value_end)
            out[name] = self.value(prop, root, depth + 1)
        self.force("}")
        return out

    def _homes_of_unplaced_entity(
        self, out: dict[str, Any], left: list[tuple[str, dict[str, Any]]]
    ) -> list[tuple[str, dict[str, Any]]]:
        """The keys left that could hold the first stated entity no value holds yet (a branch is placed
        when a string holds it, as a path is). Each entity gets one forced key: if the model writes
        something else there, the entity is let go."""
        written = _strings(out)
        numbers = {str(v) for v in _leaves(out) if isinstance(v, int | float) and not isinstance(v, bool)}
        numbers |= {digits for s in written for digits in re.findall(r"\d+", s)}
        text = " ".join(written).lower()
        while self.entities:
            kind, entity = self.entities.pop(0)
            if (kind == "number" and entity in numbers) or (kind != "number" and entity.lower() in text):
                continue
            homes = [(n, p) for n, p in left if could_hold(kind, n, p, entity)]
            if homes:
                return homes
        return []

    def _unplaced_quote(self, out: dict[str, Any]) -> bool:
        """Is a quoted span of the request in no string written so far?"""
        if not self.quoted:
            return False
        written = " ".join(_strings(out)).lower()
        written = " ".join(written.split())
        return any(q not in written for q in self.quoted)


_ID_KEY = re.compile(r"id$|_id|Id|number|num$", re.IGNORECASE)
_BRANCH_KEY = re.compile(r"branch|ref|head|base", re.IGNORECASE)
# a repository's description lists what it is required for ("labels, branches, …"); a search query
# takes a branch only inside its own syntax; a key about branches is no branch name (``branch_type``:
# "local", "remote" or "all"; ``contains``: a commit)
_NOT_A_BRANCH_KEY = re.compile(r"owner|repo|query|path|message|title|body|type|kind|filter|contains", re.IGNORECASE)
# a file ("src/a.py") is no repository or folder path (``repo_path`` of git's tools, ``directory``)
_NOT_A_FILE_KEY = re.compile(r"repo|dir|folder", re.IGNORECASE)
_HAS_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,4}$")


def could_hold(kind: str, name: str, prop: dict[str, Any], entity: str = "") -> bool:
    """A number goes to a numeric key or a string id (``resource_id``); a path to a path or file key, a
    file (``entity`` with an extension) not to a repository's or folder's path."""
    shape = _type_of(prop)
    if kind == "number":
        return shape in ("integer", "number") or (shape == "string" and bool(_ID_KEY.search(name)))
    if kind == "branch":  # ``branch``, ``base``, ``ref``, or a key whose description says it takes one
        said = _BRANCH_KEY.search(name) or "branch" in str(prop.get("description", "")).lower()
        return shape == "string" and "enum" not in prop and bool(said) and not _NOT_A_BRANCH_KEY.search(name)
    if a_file_for_a_folder(name, entity):
        return False
    return shape == "string" and names_a_path(name)


def a_file_for_a_folder(key: str, value: str) -> bool:
    """A file name (``a.txt``, ``src/app.py``) as the value of a repository's or folder's key (``repo_path``,
    ``directory``); a bare repository (``proj.git``) is none."""
    return bool(_HAS_EXTENSION.search(value)) and not value.endswith(".git") and bool(_NOT_A_FILE_KEY.search(key))


def _leaves(value: Any) -> list[Any]:
    """The scalar values of a generated object, however deep."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _strings(value: Any) -> list[str]:
    return [leaf for leaf in _leaves(value) if isinstance(leaf, str)]


# --- GBNF ---------------------------------------------------------------------------------------------------
_GBNF_BASE = r"""
ws ::= [ ]?
string ::= "\"" ( [^"\\\x00-\x1f] | "\\" ["\\/bfnrt] ){0,400} "\""
integer ::= "-"? [0-9]{1,18}
number ::= "-"? [0-9]{1,18} ( "." [0-9]{1,12} )? ( [eE] [-+]? [0-9]{1,3} )?
boolean ::= "true" | "false"
null ::= "null"
value ::= string | number | boolean | null | array | object
array ::= "[" ws ( value ( "," ws value )* )? "]"
object ::= "{" ws ( string ":" ws value ( "," ws string ":" ws value )* )? "}"
"""


class _Grammar:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.rules: dict[str, str] = {}

    def rule(self, hint: str, body: str) -> str:
        name = re.sub(r"[^a-zA-Z0-9-]+", "-", hint).strip("-").lower() or "r"
        base, n = name, 1
        while name in self.rules and self.rules[name] != body:
            n += 1
            name = f"{base}-{n}"
        self.rules[name] = body
        return name

    def value(self, schema: Any, hint: str, depth: int) -> str:
        schema = _branch(schema, self.root)
        kind = _type_of(schema)
        if kind == "enum":
            return self.rule(hint, " | ".join(_gbnf_literal(json.dumps(v)) for v in schema["enum"]))
        if kind == "const":
            return self.rule(hint, _gbnf_literal(json.dumps(schema["const"])))
        if kind in ("string", "integer", "number", "boolean", "null"):
            return kind
        if kind == "array":
            item = self.value(schema.get("items") or {}, hint + "-item", depth + 1)
            return self.rule(hint, f'"[" ws {item} ( "," ws {item} )* "]"')  # never empty, as in the walker
        if kind == "object" and depth <= 3 and isinstance(schema.get("properties"), dict):
            return self.object(schema, hint, depth)
        return "value"

    def object(self, schema: dict[str, Any], hint: str, depth: int) -> str:
        """Keys in schema order, each optional: ``{`` (kv_i rest_i)? ``}`` with rest_i = ("," kv_j rest_j | …)?"""
        names = list(schema.get("properties") or {})
        if not names:
            return self.rule(hint, '"{" ws "}"')
        pairs = []
        for name in names:
            value = self.value(schema["properties"][name], f"{hint}-{name}", depth + 1)
            pairs.append(self.rule(f"{hint}-{name}-kv", f'{_gbnf_literal(json.dumps(name))} ":" ws {value}'))
        rests: list[str] = [""] * len(names)
        for i in range(len(names) - 1, -1, -1):
            alternatives = [f'"," ws {pairs[j]} {rests[j]}' for j in range(i + 1, len(names))]
            rests[i] = (
                self.rule(f"{hint}-rest-{i}", " | ".join(f"( {a} )" for a in alternatives) + ' | ""')
                if (alternatives)
                else ""
            )
        first = " | ".join(f"( {pairs[i]} {rests[i]} )" for i in range(len(names)))
        return self.rule(hint, f'"{{" ws ( {first} )? "}}"')


def _gbnf_literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def schema_grammar(schema: dict[str, Any] | None) -> str:
    """GBNF for the arguments object of ``schema`` (keys in schema order; every key optional, so a
    server-side sampler may leave out what the request does not give)."""
    grammar = _Grammar(schema or {})
    top = grammar.object(schema or {}, "args", 0) if (schema or {}).get("properties") else "obj-any"
    lines = [f"root ::= {top if top != 'obj-any' else chr(34) + '{' + chr(34) + ' ws ' + chr(34) + '}' + chr(34)}"]
    lines += [f"{name} ::= {body}" for name, body in grammar.rules.items()]
    return "\n".join(lines) + _GBNF_BASE
