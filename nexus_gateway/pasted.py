"""Material pasted into a request: stack traces, logs, code, data.

People paste what they are looking at ("I keep getting this: <trace> — has anyone reported it?") and
agents pass it on in the intent. The pasted lines say what the request is about, not what to do: their
paths, numbers and words (a trace's ``File "/app/main.py", line 88``) took requests to ``get_file_blame``
and review-comment tools, and the GitHub dev requests with a trace, a log, code or JSON pasted before or
after them went from 138 to 78–87 of 166 right at N = 250 (session 58, ``docs/routing.md``). The router
reads a request without them (``without_pasted``), and so does argument generation, which reads them only
for a required value the request leaves unsaid (``arguments._read_apart``; shown them, the 0.5B model
copied their paths and ids over the request's own). The material (``split_pasted``) is the value of the
tool's long-text key when the model leaves it out (``placement.pasted_material``): "open an issue in
acme/api with this trace: <trace>" came out with no body at all.

A line is pasted when it sits in a fenced block; is indented under unindented text (trace frames, code
bodies); is mostly not words (``github.com/acme/q.(*C).Ack(0x0)``), unless it labels a value as a
request lists its parameters (``IP:192.168.11.33``); is bracketed like data or code (``{"status": 500}``,
``function f() {``); is what only a program writes (``_DIAGNOSTIC``: ``src/a.ts:88:15 - error TS2345``,
a line led by a timestamp or ``[ERROR]``, a table's aligned rows); opens like the lines around it (a
logger's ``npm ERR!``); is the header an indented run hangs under, or the line a pasted line announces
with its colon; is what a program, but also a person, may write at a line's start (``_PROGRAM_SAYS``:
``panic: …``, an exception and its message) next to pasted lines; or lies between pasted lines of one
paragraph. A line that only says what the block under it is ("I keep getting this:", ``_captions``) is
neither what the request asks nor material. A request of one line is never cut, nor one that would be
left empty. A search about the material ("has anyone reported this?") searches its ``headline``, the
exception and its message (``placement.searched_material``).

Each rule names formats it was read from (``bench/experiments/pasted_material.py``: five block sets, each
held out for one look); a format none names stays in the request (session 60, ``docs/routing.md``).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")  # a Markdown fence: at most three spaces before it
# data or code by its brackets: a JSON object or array, a line that opens a block or ends a statement
_STRUCTURE = re.compile(r"^\s*(?:\{|\[.*[\]},]\s*$)|[{;]\s*$")
_INDENTED = re.compile(r"^(?:\t| {2,})\S")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
# a word as prose writes it: letters with an apostrophe's clitic, in quotes or brackets, with punctuation
_WORD = re.compile(r"^[\"'(\[]*[A-Za-z]+(?:['’][A-Za-z]+)?[\"')\],.;:!?]*$")
# a line that labels a value ("IP:192.168.11.33", "base: release/3.2"): the request's own parameters
_LABELLED = re.compile(r"^[A-Za-z][\w-]*(?: [A-Za-z][\w-]*){0,2}\s*:(?!//)\s*\S")
# an exception's name and message: a dotted or capitalised-inside name and a colon
_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]*[a-z][A-Z]\w*:|^(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*:")
_EXCEPTION_NAME = r"(?:[A-Za-z_][\w$]*\.)*[A-Za-z_]\w*(?:Error|Exception|Fault)\b"  # "java.lang.NullPointerException"
# an exception's name anywhere in a line, and its message: "Exception in thread "main" java.lang.…: …"
_ERROR_NAME = re.compile(
    rf"(?:^|[\s\"'(])(?P<name>{_EXCEPTION_NAME})[^:\n]{{0,40}}:\s*\S"
    r"|\((?:[A-Z]\w*::)*[A-Z]\w*(?:Error|Exception)\)\s*$"  # Ruby's "… for nil:NilClass (NoMethodError)"
)
_ERROR_WORD = re.compile(r"\b(?:error|panic|panicked|fatal|failed|failure|ERR!)(?=\W|$)", re.I)
_LOG_FIELD = re.compile(r"^(?:#\d+|\[[^\]]*\]|\d[\d:.,/+TZ-]*|-+)$")  # a timestamp, a bracketed field
_LOG_LEVEL_TEXT = "error err! fatal critical warn warning info debug e f"
_LOG_LEVELS = frozenset(_LOG_LEVEL_TEXT.split())
# what a program writes at a line's start, and a person may too, so pasted only beside pasted lines: an
# exception with its message, Go's panic and a goroutine's header, git's and rustc's "fatal:",
# "error[E0382]:" and "note:"
_PROGRAM_SAYS = re.compile(
    rf"^\s*(?:{_EXCEPTION_NAME}(?::\s|$)|panic: |fatal: |[Ff]atal error: |error\[\w+\]: |note: "
    r"|goroutine \d+ \[[\w ,]+\]:)"
)
# what only a program writes, wherever it stands: a diagnostic led by its file and line ("src/a.ts:88:15 -
# error TS2345", "psql:x.sql:3: ERROR:", "Program.cs(12,17): error CS0103"), Python's traceback header,
# Rust's panic, PHP's errors, a line led by a date and time or by a loud level ("[ERROR]", "INFO"), and a
# table's rows, their columns aligned by runs of spaces
_DIAGNOSTIC = re.compile(
    r"^\s*\S*?\.\w{1,6}(?::\d+(?::\d+)?|\(\d+(?:,\d+)?\))(?::\s*|\s+-\s+)"
    r"(?:(?:fatal )?error|warning|note|ERROR|FATAL|in [`'])"
    r"|^Traceback \(most recent call last\):|^thread '[^']*' panicked at "
    r"|^PHP (?:Fatal error|Parse error|Warning|Notice|Deprecated): "
    r"|^\s*\[?\d{4}[-/]\d\d[-/]\d\d[ T]\d\d:\d\d"
    r"|^\s*\[?(?:ERROR|WARN|WARNING|INFO|DEBUG|TRACE|FATAL|CRITICAL|FAILURE)\b"
    r"|^.*?\S(?: {3,}\S+){2,}"
)
_RUBY_FRAME = re.compile(r"^\S+:\d+:in [`'][^']*':\s*")  # "app/models/order.rb:23:in `total': "
HEADLINE_CHARS = 120
LOG_RUN = 3  # lines in a row that open alike: a logger's prefix, not a writer's
# The words a request points at its pasted block with ("this error", "the trace below")
_POINTING_TEXT = """this that these those it the a an same following above below here pasted error errors exception
trace traceback stacktrace stack log logs output message crash panic warning failure"""
_POINTING = frozenset(_POINTING_TEXT.split())
_POINTERS = re.compile(
    r"\b(?:(?:this|these)\b(?!\s+(?:repo|repos|repository|project|org|organization|branch|file|week|month|year|"
    r"morning|afternoon|evening|time|quarter|sprint|release|one's)\b)|above|below)\b",
    re.I,
)
# A sentence that states rather than asks: it opens with its subject (a pronoun, "here", "my build") or
# a participle ("Getting", "Seeing"); a request opens with its verb ("Open …") or a modal ("Can you …").
# A wish is a request all the same ("I want to open an issue with this:").
_STATEMENT = re.compile(
    r"^(?!(?:i|we)\s+(?:really\s+)?(?:want|need|would|wanna|have to)\b)"
    r"(?:(?:i|i'm|i've|im|ive|we|we're|we've|it|it's|its|this|these|that|that's|there|there's|here|here's|heres"
    r"|my|our|got|just got)\b|[A-Za-z]{3,}ing\b)",
    re.I,
)


@dataclass(frozen=True)
class Pasted:
    """A request split: what it asks (``request``) and what it pastes (``material``, as written, fences
    and all; its blocks a blank line apart; empty when it pastes nothing)."""

    request: str
    material: str


def without_pasted(intent: str) -> str:
    """``intent`` without its pasted lines (module docstring); unchanged when it has none."""
    return split_pasted(intent).request


def split_pasted(intent: str) -> Pasted:
    """``intent`` as what it asks and what it pastes. A request that is nothing but pasted lines is read
    as it is: then they are what it asks."""
    if "\n" not in intent:
        return Pasted(intent, "")
    lines = intent.split("\n")
    pasted = _pasted_lines(lines, _fenced_lines(lines))
    request = "\n".join(line for line, cut in zip(lines, pasted, strict=True) if not cut).strip()
    if not any(pasted) or not request:
        return Pasted(intent, "")
    captions = _captions(lines, pasted)
    asked = "\n".join(line for line, cut, caption in zip(lines, pasted, captions, strict=True) if not (cut or caption))
    request = asked.strip() or request
    return Pasted(re.sub(r"\n\s*\n(?:\s*\n)+", "\n\n", request), _material(lines, pasted))


def _captions(lines: list[str], pasted: list[bool]) -> list[bool]:
    """The lines that only say what the pasted lines under them are ("I keep getting this:", "Here's
    what I'm seeing:"): a statement (``_STATEMENT``) ending in a colon, right above pasted lines. Its
    words are no operation ("getting" took requests to ``get_*`` tools: the GitHub dev requests with
    such a line before their pasted block lost 9–12 more of 166 at N = 250 than with the block bare,
    session 59). A line that asks ("Open an issue with this trace:") starts with its verb or a modal,
    and stays."""
    return [
        index + 1 < len(lines) and pasted[index + 1] and not pasted[index] and _is_caption(line)
        for index, line in enumerate(lines)
    ]


def headline(material: str) -> str:
    """The line of pasted material that a search for it would quote: the first that names an exception
    with its message (a Python traceback's last line, a JavaScript or Java error's first), else the first
    that says error, panic or fatal (``panic: runtime error: …``, a logger's ``ERROR`` line, its
    timestamp and bracketed fields dropped); empty when no line names what went wrong."""
    lines = [line.strip() for line in material.splitlines() if line.strip() and not _FENCE_LINE.match(line)]
    named = next((match for match in map(_ERROR_NAME.search, lines) if match), None)
    if named and named.group("name"):  # from the exception's name: no "Exception in thread "main" "
        line = named.string[named.start("name") :]
    else:
        line = named.string if named else next((line for line in lines if _ERROR_WORD.search(line)), "")
    tokens = line.split()
    while tokens and (_LOG_FIELD.match(tokens[0]) or tokens[0].lower().strip(":") in _LOG_LEVELS):
        tokens.pop(0)  # "2024-05-01T10:02:11Z ERROR [worker] redis: connection refused"
    text = _RUBY_FRAME.sub("", " ".join(tokens)).rstrip(":.")
    if len(text) > HEADLINE_CHARS:  # the message's head: a search engine caps its query
        text = text[:HEADLINE_CHARS].rsplit(" ", 1)[0]
    return text


def points_at_material(value: object, also: Collection[str] = ()) -> bool:
    """Whether a generated value only points at what the request pastes ("this", "the error", "error
    repo:acme/api" for "find this error in the acme/api code"): its words, search qualifiers
    (``repo:acme/api``) aside, are all pointing words, or words of ``also``."""
    if not isinstance(value, str):
        return False
    words = re.findall(r"[a-z0-9]+", " ".join(w for w in value.lower().split() if ":" not in w))
    return bool(words) and all(w in _POINTING or w in also for w in words)


def points_back(request: str) -> bool:
    """Whether a request points at something it pastes: "Has anyone reported this?", "the error above",
    not "this repo" or "this week". "It" and "that" point back at anything ("review it", "PRs that …"),
    and a line "Here's what I'm seeing:" says what follows, not what to do with it. A caption the split
    left in the request points at the block set aside after it ("We hit this in production:", a blank
    line, a log), but not when a line of the request follows it right away: that is the block's own line,
    one the rules do not read ("I keep getting this:" over an Elixir error), and what else the request
    says may be about anything."""
    lines = request.split("\n")
    return any(
        _POINTERS.search(line) and not (_is_caption(line) and index + 1 < len(lines) and lines[index + 1].strip())
        for index, line in enumerate(lines)
    )


def _is_caption(line: str) -> bool:
    """A statement ending in a colon (``_STATEMENT``): what ``_captions`` sets aside above pasted lines."""
    return line.rstrip().endswith(":") and bool(_STATEMENT.match(line.strip()))


def _fenced_lines(lines: list[str]) -> list[bool]:
    """The lines of fenced blocks, their fences included; an unclosed fence runs to the end."""
    fenced, opener = [], ""
    for line in lines:
        fence = _FENCE_LINE.match(line)
        if not opener:
            opener = fence.group(1) if fence else ""
            fenced.append(bool(fence))
            continue
        fenced.append(True)
        closing = line.strip()
        if fence and closing == closing[0] * len(closing) and closing[0] == opener[0] and len(closing) >= len(opener):
            opener = ""
    return fenced


def _pasted_lines(lines: list[str], fenced: list[bool]) -> list[bool]:
    filled = [bool(line.strip()) and not fence for line, fence in zip(lines, fenced, strict=True)]
    # indentation sets lines apart only under unindented text: a request indented as a whole is prose
    indented = [bool(_INDENTED.match(line)) and filled_line for line, filled_line in zip(lines, filled, strict=True)]
    if all(indent for indent, filled_line in zip(indented, filled, strict=True) if filled_line):
        indented = [False] * len(lines)
    pasted = [
        filled_line and (indent or bool(_STRUCTURE.search(line) or _DIAGNOSTIC.match(line)) or _mostly_not_words(line))
        for line, filled_line, indent in zip(lines, filled, indented, strict=True)
    ]
    for start, end in _log_runs([line if filled_line else "" for line, filled_line in zip(lines, filled, strict=True)]):
        pasted[start:end] = [True] * (end - start)
    for index in range(1, len(lines)):
        above, below = index - 1, index
        if indented[below] and filled[above] and not indented[above] and _heads_a_run(lines, filled, above):
            pasted[above] = True
        if indented[above] and filled[below] and not indented[below] and _EXCEPTION_LINE.match(lines[below]):
            pasted[below] = True  # the exception a trace's frames end in ("KeyError: 'a81f3c'")
    for index in range(1, len(lines)):  # what a pasted line announces with its colon: a panic's message
        if pasted[index - 1] and lines[index - 1].rstrip().endswith(":") and filled[index] and not fenced[index - 1]:
            pasted[index] = True
    for index in reversed(range(len(lines))):  # upwards: a panic's line joins its goroutine's header
        if not pasted[index] and _PROGRAM_SAYS.match(lines[index]) and _beside_pasted(pasted, filled, index):
            pasted[index] = True  # "panic: assignment to entry in nil map" over its goroutines
    # a line between pasted lines of one paragraph is theirs ("goroutine 34 [running]:")
    last = None
    for index, filled_line in enumerate(filled):
        if not filled_line:
            last = None
        elif pasted[index]:
            if last is not None:
                pasted[last:index] = [True] * (index - last)
            last = index
    return [cut or fence for cut, fence in zip(pasted, fenced, strict=True)]


def _beside_pasted(pasted: list[bool], filled: list[bool], index: int) -> bool:
    """Whether a pasted line is next to line ``index``: right above it, or below it across one blank line."""
    if index > 0 and pasted[index - 1]:
        return True
    below = next((i for i in (index + 1, index + 2) if i < len(pasted) and filled[i]), None)
    return below is not None and pasted[below] and (below == index + 1 or not filled[index + 1])


def _heads_a_run(lines: list[str], filled: list[bool], index: int) -> bool:
    """Whether the line an indented run hangs under is its header ("TypeError: …" over its frames) and
    not the request introducing it ("open an issue with this trace:"). A line that ends in a colon
    introduces, unless the line above it does already ("… with this trace:\nTraceback (most recent call
    last):")."""
    if not lines[index].rstrip().endswith(":"):
        return True
    return index > 0 and filled[index - 1] and lines[index - 1].rstrip().endswith(":")


def _material(lines: list[str], pasted: list[bool]) -> str:
    """The paragraphs that hold pasted lines: each from its first pasted line on, taking back the lines
    above it after the first that ends in a colon (the request's "with this trace:"; "Traceback (most
    recent call last):" is the trace's own first line), and whole where the paragraph before was material
    too ("goroutine 34 [running]:" after a panic's first lines)."""
    blocks, start, continuing = [], 0, False
    for index in range(len(lines) + 1):
        if index < len(lines) and (lines[index].strip() or pasted[index]):
            continue
        if index == start:  # a blank line between paragraphs
            start = index + 1
            continue
        first = next((i for i in range(start, index) if pasted[i]), None)
        if first is not None:
            lead = [] if continuing else lines[start:first]  # a paragraph right after material is more of it
            intro = next((i for i, line in enumerate(lead) if line.rstrip().endswith(":")), len(lead) - 1)
            blocks.append("\n".join(lead[intro + 1 :] + lines[start if continuing else first : index]).rstrip())
        continuing, start = first is not None, index + 1
    return "\n\n".join(blocks)


def _mostly_not_words(line: str) -> bool:
    """A line of paths, calls, numbers; not one that labels a value, nor an item of a list the request
    writes ("1. app/strings.json with content {"welcome": "Hi"}": read without it, the 0.5B model pushed
    one file of two, session 59)."""
    if _LABELLED.match(line) or _BULLET.match(line):
        return False
    tokens = line.split()
    return bool(tokens) and sum(bool(_WORD.match(token)) for token in tokens) * 2 < len(tokens)


def _shape(token: str) -> str:
    """A token with its digits as 0: a logger's timestamps and step numbers share a shape, not a value."""
    return re.sub(r"\d", "0", token)


def _log_runs(lines: list[str]) -> list[tuple[int, int]]:
    """Spans of ``LOG_RUN`` or more lines in a row that open alike (no bullet list): the same first token
    where it is no word (``#8``, a date), else the same first two (``npm ERR!``), digits aside."""
    prefixes = [_log_prefix(line) for line in lines]
    runs, start = [], 0
    for index in range(1, len(lines) + 1):
        if index == len(lines) or prefixes[index] != prefixes[start]:
            if prefixes[start] is not None and index - start >= LOG_RUN:
                runs.append((start, index))
            start = index
    return runs


def _log_prefix(line: str) -> tuple[str, ...] | None:
    tokens = [] if _BULLET.match(line) else [_shape(token) for token in line.split()[:2]]
    if tokens and not _WORD.match(tokens[0]):
        return (tokens[0],)
    return tuple(tokens) if len(tokens) == 2 else None
