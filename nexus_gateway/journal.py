"""The call journal: one JSON line when a call is sent upstream and one when it is answered.

A gateway acts for its host, and with ``call(intent)`` it picks the tool and writes the arguments itself,
so a user needs to see afterwards what went where: which tool, with what, because of which request, and
how it ended. The journal also keeps the one thing a crash would otherwise lose: a call whose ``sent``
line has no ``done`` line was in flight when its gateway stopped, and may have run
(``nexus-gateway journal`` says so).

Each line is written with a single ``write`` on a file opened for appending, so lines from several
gateway processes sharing the file (two hosts on one machine) interleave whole. Arguments are kept as
sent except for values under keys that look like credentials (``token``, ``password``, …), which are
replaced, and long strings, which are cut: the journal is for reading, not for replaying a file's
contents. Results are not kept; an error's message is. The file is rotated (to ``journal.jsonl.1``)
once it passes ``max_bytes`` (looked at every few lines, so it may pass by a few). A rotation drops the
generation before, except the ``sent`` lines in it that no ``done`` line answers: those are copied
into the new file (marked ``carried``), so a call that may have run unseen stays listed however many
rotations later it is looked for.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import orjson

from .cache import updating

logger = logging.getLogger(__name__)

JOURNAL_FILE = "journal.jsonl"
MAX_BYTES = 16 * 1024 * 1024
MAX_STRING = 200  # characters of a string argument kept; the rest is counted, not written
MAX_ERROR = 500
REDACTED = "[redacted]"
ROTATION_CHECK_EVERY = 16  # lines between looks at the file's size and identity (three system calls)
MAX_CARRIED = 10_000  # unanswered calls copied forward at a rotation; beyond it the oldest are dropped
_EVENT_CALL = re.compile(rb'"event":\s*"(sent|done)",\s*"call":\s*"([^"]*)"')
_SECRET_KEY = re.compile(r"token|secret|password|passwd|api[_-]?key|authorization|credential|cookie", re.I)


def redacted(value: Any, depth: int = 0) -> Any:
    """``value`` as the journal keeps it: credentials replaced, long strings cut, deep nesting summarised."""
    if isinstance(value, str):
        return value if len(value) <= MAX_STRING else f"{value[:MAX_STRING]}…(+{len(value) - MAX_STRING} chars)"
    if depth >= 4 and isinstance(value, dict | list):
        return f"…({len(value)} items)"
    if isinstance(value, dict):
        return {
            key: REDACTED if _SECRET_KEY.search(str(key)) else redacted(item, depth + 1) for key, item in value.items()
        }
    if isinstance(value, list):
        return [redacted(item, depth + 1) for item in value]
    return value


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class JournalCall:
    """One call being journalled: :meth:`answered` records its result before the ``done`` line."""

    call_id: str
    outcome: str = "failed"  # until the upstream answers: the call raised
    error: str | None = None
    started: float = field(default_factory=time.perf_counter)

    def seconds(self) -> float:
        return time.perf_counter() - self.started

    def answered(self, result: dict[str, Any]) -> None:
        """The upstream answered; an ``isError`` result is a tool error, not a lost call."""
        if result.get("isError"):
            self.outcome = "error"
            self.error = _result_text(result)
        else:
            self.outcome = "ok"


class CallJournal:
    """Append-only JSON lines at ``path``; see the module docstring. With no ``path`` (``nexus.journal:
    false``) nothing is written, but each call's record still says how it ended (for the metrics)."""

    def __init__(self, path: Path | None, max_bytes: int = MAX_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._prefix = f"{os.getpid()}-{int(time.time())}"
        self._numbers = itertools.count(1)
        self._fd: int | None = None
        self._broken = False
        self._writes = 0

    @contextmanager
    def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        via: str,
        host: str | None = None,
        intent: str | None = None,
        ended: Callable[[JournalCall], None] | None = None,
    ) -> Iterator[JournalCall]:
        """Journal the call the body makes: ``sent`` now, ``done`` with its outcome when the body ends,
        however it ends (an upstream error, the host cancelling, the gateway stopping); ``ended`` then
        gets the finished record (the gateway's metrics count calls by the same outcome)."""
        record = JournalCall(f"{self._prefix}-{next(self._numbers)}")
        writing = self.path is not None  # a disabled journal keeps only the record, on the hot path
        if writing:
            line: dict[str, Any] = {"at": now_iso(), "event": "sent", "call": record.call_id, "pid": os.getpid()}
            line |= {"tool": tool, "via": via, "arguments": redacted(arguments)}
            if intent is not None:
                line["intent"] = intent
            if host is not None:
                line["host"] = host
            self._write(line)
        try:
            yield record
        except anyio.get_cancelled_exc_class():
            record.outcome, record.error = "cancelled", "the host cancelled the call or the gateway stopped"
            raise
        except BaseException as exc:
            record.outcome, record.error = "failed", str(exc) or type(exc).__name__
            raise
        finally:
            if writing:
                done: dict[str, Any] = {"at": now_iso(), "event": "done", "call": record.call_id}
                done |= {"outcome": record.outcome, "ms": round(record.seconds() * 1000, 1)}
                if record.error:
                    done["error"] = record.error[:MAX_ERROR]
                self._write(done)
            if ended is not None:
                ended(record)

    def _write(self, line: dict[str, Any]) -> None:
        """One ``write`` per line. A journal that cannot be written is logged once and never fails a call."""
        path = self.path
        if self._broken or path is None:
            return
        try:
            data = orjson.dumps(line) + b"\n"
        except orjson.JSONEncodeError:  # an integer past 64 bits: JSON allows it, orjson does not
            data = json.dumps(line, default=str).encode() + b"\n"
        self._writes += 1
        try:
            if self._fd is None or (self._writes % ROTATION_CHECK_EVERY == 0 and self._rotated(path)):
                self._open(path)
            assert self._fd is not None
            os.write(self._fd, data)
        except OSError as exc:
            self._broken = True
            logger.warning("call journal %s cannot be written (%s); calls go on without it", path, exc)

    def _open(self, path: Path) -> None:
        self.close()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def _rotated(self, path: Path) -> bool:
        """Whether the open file must be left: it grew past ``max_bytes`` (then this process rotates it),
        or another gateway process rotated it away."""
        assert self._fd is not None
        open_file = os.fstat(self._fd)
        try:
            current = os.stat(path)
        except FileNotFoundError:
            return True
        if current.st_ino != open_file.st_ino:
            return True
        if open_file.st_size < self.max_bytes:
            return False
        # Another gateway may be rotating the same file this instant: without the lock, one that had
        # seen the old file would move the other's fresh journal over the generation just rotated.
        with updating(path):
            try:
                if os.stat(path).st_ino == open_file.st_ino:
                    _rotate(path)
            except FileNotFoundError:
                pass
        return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _rotate(path: Path) -> None:
    """Move ``path`` to ``.1`` and start the new file with the unanswered ``sent`` lines of the ``.1`` it
    replaces. Lines are matched by their event and call id without parsing them (a rotation reads up to
    two whole generations, while a call waits for its line to be written)."""
    older, newer = path.with_name(path.name + ".1"), path
    try:
        dropped = older.read_bytes()
    except FileNotFoundError:
        dropped = b""
    events = _EVENT_CALL.findall(dropped)  # (event, call id) pairs: no match objects, a third faster
    waiting = {call for event, call in events if event == b"sent"} - {
        call for event, call in events if event == b"done"
    }
    if waiting:
        waiting -= {call for event, call in _EVENT_CALL.findall(newer.read_bytes()) if event == b"done"}
    unanswered = _sent_lines(dropped, waiting) if waiting else []
    if len(unanswered) > MAX_CARRIED:
        logger.warning("call journal %s: %d unanswered calls, the oldest dropped", path, len(unanswered))
        unanswered = unanswered[-MAX_CARRIED:]
    os.replace(newer, older)
    if unanswered:
        marked = (line if line.startswith(b'{"carried"') else b'{"carried":true,' + line[1:] for line in unanswered)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, b"".join(line + b"\n" for line in marked))
        finally:
            os.close(fd)


def _sent_lines(data: bytes, calls: set[bytes]) -> list[bytes]:
    """The ``sent`` lines of ``calls`` in ``data``, in the file's order (oldest first)."""
    lines = []
    for found in _EVENT_CALL.finditer(data):
        if found[1] == b"sent" and found[2] in calls:
            start = data.rfind(b"\n", 0, found.start()) + 1
            end = data.find(b"\n", start)
            lines.append(data[start : end if end >= 0 else len(data)])
    return lines


@dataclass(frozen=True)
class JournalEntry:
    """One call as the journal tells it: its ``sent`` line joined with its ``done`` line, if any."""

    call: str
    at: str
    tool: str
    via: str
    arguments: Any
    intent: str | None
    host: str | None
    outcome: str  # ok, error (the tool said so), failed, cancelled; in flight; unfinished (may have run)
    ms: float | None
    error: str | None


def journal_path(setting: bool | str, cache_root: Path) -> Path | None:
    """Where ``nexus.journal`` says to write: a path, the cache folder's ``journal.jsonl``, or nowhere."""
    if setting is False:
        return None
    if setting is True:
        return cache_root / JOURNAL_FILE
    return Path(setting).expanduser()


def read_journal(path: Path) -> list[JournalEntry]:
    """Every call in the journal (the rotated file first), oldest first. A call with no ``done`` line is
    ``in flight`` while the process that sent it runs, else ``unfinished``: that gateway stopped before
    the upstream answered, so the call may have run."""
    sent: dict[str, dict[str, Any]] = {}
    done: dict[str, dict[str, Any]] = {}
    for part in (path.with_name(path.name + ".1"), path):
        try:
            data = part.read_bytes()
        except FileNotFoundError:
            continue
        for raw in data.splitlines():
            try:
                line = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue  # a line cut short by a full disk: the rest of the journal still reads
            if isinstance(line, dict) and isinstance(line.get("call"), str):
                (sent if line.get("event") == "sent" else done)[line["call"]] = line
    entries = []
    for call_id, line in sent.items():
        end = done.get(call_id)
        if end is not None:
            outcome, ms, error = str(end.get("outcome")), end.get("ms"), end.get("error")
        else:
            outcome, ms, error = ("in flight" if _running(line.get("pid")) else "unfinished"), None, None
        entries.append(
            JournalEntry(
                call=call_id,
                at=str(line.get("at", "")),
                tool=str(line.get("tool", "")),
                via=str(line.get("via", "")),
                arguments=line.get("arguments"),
                intent=line.get("intent"),
                host=line.get("host"),
                outcome=outcome,
                ms=ms,
                error=error,
            )
        )
    entries.sort(key=lambda entry: entry.at)  # a call carried across a rotation sits among later ones
    return entries


async def follow(path: Path, poll_s: float = 0.25) -> AsyncIterator[dict[str, Any]]:
    """Each journal line written from now on, as it is written (``journal --follow``): what an agent does
    through the gateway, watched live. As ``tail -F`` does, the open file is read to its end before a
    rotated one is left for the new file, read from its start, so no line is skipped across a rotation;
    a line is held back until its newline has been written."""
    handle, pending = _open_at_end(path), b""
    try:
        while True:
            if handle is None:  # no journal yet: the first gateway call creates it, read it whole
                handle = _open_at_start(path)
            if handle is not None:
                *lines, pending = (pending + handle.read()).split(b"\n")
                for raw in lines:
                    try:
                        line = orjson.loads(raw)
                    except orjson.JSONDecodeError:
                        continue
                    if isinstance(line, dict) and not line.get("carried"):  # a rotation's copy, not news
                        yield line
                if _inode(path) != os.fstat(handle.fileno()).st_ino:  # rotated, and the old file read out
                    handle.close()
                    handle, pending = _open_at_start(path), b""
            await anyio.sleep(poll_s)
    finally:
        if handle is not None:
            handle.close()


def _open_at_end(path: Path) -> BinaryIO | None:
    handle = _open_at_start(path)
    if handle is not None:
        handle.seek(0, os.SEEK_END)
    return handle


def _open_at_start(path: Path) -> BinaryIO | None:
    try:
        return open(path, "rb")  # kept open across polls; ``follow`` closes it
    except FileNotFoundError:
        return None


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


def _running(pid: Any) -> bool:
    """Whether a gateway still runs as ``pid``. Where ``/proc`` shows command lines, a process that
    reuses the number of a gateway long gone is told apart by its own."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc here: trust the number
    return b"nexus" in command


def _result_text(result: dict[str, Any]) -> str:
    texts = [part.get("text", "") for part in result.get("content") or [] if isinstance(part, dict)]
    return " ".join(text for text in texts if text) or "the tool reported an error"
