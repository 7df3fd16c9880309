"""Tool pinning: a tool definition the user has been running is not swapped under them unseen.

An MCP server can change a tool's description or schema at any time (``tools/list_changed``), and the
description is text the agent's model reads and obeys: a server that was harmless when it was set up
can later tell the model to do something else ("rug pull", a kind of tool poisoning). A gateway in
front of every server is where such a change can be caught. On first sight each tool's definition is
pinned (trust on first use); when a server later lists a tool whose description, schema or annotations
differ from the pin, the change is logged as a warning (``nexus.pin_tools: "warn"``, the default) or the
tool is also held back from every host until someone reviews it (``"hold"``): ``nexus-gateway pins``
shows what changed, ``nexus-gateway pins --accept SERVER [--tool NAME …]`` trusts the new definition, and a
running gateway applies the decision within a second (the config watcher looks at the file too).

Pins live in ``pins.json`` in the cache folder: per server and tool, the pinned definition and, for a
changed tool, the definition now served, so the review needs no connection. A tool that is new on a
server is pinned as it is first seen, as the server's first tools were.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .cache import canonical_json, read_json_object, updating, write_atomic

logger = logging.getLogger(__name__)

PINS_FILE = "pins.json"
PIN_MODES = ("warn", "hold", "off")
# what the model reads or relies on; a changed field is a changed tool
PINNED_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def fingerprint(tool: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json({k: tool.get(k) for k in PINNED_FIELDS})).hexdigest()


@dataclass(frozen=True)
class PinChange:
    """A tool served with another definition than the one pinned."""

    server: str
    tool: str
    pinned: dict[str, Any]
    current: dict[str, Any]
    current_fingerprint: str  # what a reviewer compares to tell a change seen before from a newer one

    def fields(self) -> list[str]:
        """Which fields differ (``description``, ``inputSchema``, …)."""
        return [k for k in PINNED_FIELDS if self.pinned.get(k) != self.current.get(k)]


class ToolPins:
    """The pins file; see the module docstring. Every method reads the file afresh: the command line
    and each running gateway share it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # the file as last read or written, and its stamp: a review that changes nothing re-reads nothing
        # (the file holds every pinned definition, 1.5 MB for 1,300 tools)
        self._pins: dict[str, Any] = {}
        self._stamp: tuple[int, int, int] | None = None

    def _current_stamp(self) -> tuple[int, int, int] | None:
        try:
            status = os.stat(self.path)
        except OSError:
            return None
        return status.st_mtime_ns, status.st_size, status.st_ino

    def changed_elsewhere(self) -> bool:
        """The file changed since this object last read or wrote it (another process decided)."""
        return self._current_stamp() != self._stamp

    def _read(self) -> dict[str, Any]:
        stamp = self._current_stamp()
        if stamp is None or stamp != self._stamp:
            self._pins, self._stamp = read_json_object(self.path), stamp
        return self._pins

    def _write(self, pins: dict[str, Any]) -> None:
        try:
            write_atomic(self.path, orjson.dumps(pins, option=orjson.OPT_SORT_KEYS))
        except OSError as exc:
            logger.warning("tool pins %s cannot be written: %s", self.path, exc)
            return
        self._pins, self._stamp = pins, self._current_stamp()

    def review(self, server: str, tools: Iterable[dict[str, Any]]) -> list[PinChange]:
        """Compare ``server``'s tools with their pins: pin the ones seen for the first time, note the
        current definition of the ones that changed, and return those."""
        with updating(self.path):  # other gateways and ``pins --accept`` write the same file
            return self._review(server, tools)

    def _review(self, server: str, tools: Iterable[dict[str, Any]]) -> list[PinChange]:
        pins = self._read()
        known: dict[str, Any] = pins.setdefault(server, {})
        changes, dirty = [], False
        for tool in tools:
            name, print_ = tool["name"], fingerprint(tool)
            pin = known.get(name)
            if pin is None:
                known[name] = {"fingerprint": print_, "tool": tool}
                dirty = True
            elif pin["fingerprint"] != print_:
                changes.append(PinChange(server, name, pin["tool"], tool, print_))
                if pin.get("pending", {}).get("fingerprint") != print_:
                    pin["pending"] = {"fingerprint": print_, "tool": tool}
                    dirty = True
            elif "pending" in pin:  # changed back to what was pinned
                del pin["pending"]
                dirty = True
        if dirty:
            self._write(pins)
        return changes

    def pending(self) -> list[PinChange]:
        """Every change waiting for a review, across servers."""
        return [
            PinChange(server, name, pin["tool"], pin["pending"]["tool"], pin["pending"]["fingerprint"])
            for server, tools in sorted(self._read().items())
            for name, pin in sorted(tools.items())
            if "pending" in pin
        ]

    def accept(self, server: str, names: Sequence[str] = ()) -> list[str]:
        """Trust the definitions now served for ``server``'s changed tools (``names``, or all of them);
        returns the tools accepted."""
        with updating(self.path):
            return self._accept(server, names)

    def _accept(self, server: str, names: Sequence[str]) -> list[str]:
        pins = self._read()
        accepted = []
        for name, pin in pins.get(server, {}).items():
            if "pending" in pin and (not names or name in names):
                pins[server][name] = pin["pending"]
                accepted.append(name)
        if accepted:
            self._write(pins)
        return sorted(accepted)
