"""When a routed call must be confirmed by the host instead of run: the gateway's own choice of a tool
that may destroy data, or that changes something on a close call.

``call(intent)`` picks the tool itself, so the host's approval prompt (if it has one) shows only
"call", never "delete_repository". MCP gives servers a way to say which tools need care:
``destructiveHint`` ("may perform destructive updates"; clients are expected to confirm those). And the
router knows when it is unsure: a top-1 − top-2 margin below the calibrated τ. Measured on the odd half of
the GitHub dev queries against the 117 GitHub tools (docs/routing.md): of 36 routed writes 6 went to the
wrong tool, and 4 of those were close calls; of the 6 irrelevant requests that cleared the abstention
floor, all six would have written, two of them with ``delete_repository`` ("Delete the branch … on
GitHub"). A stop costs the host one more call; a wrong write can cost a repository.

Modes (``nexus.confirm``):

- ``"auto"`` (default): stop for a tool that declares ``destructiveHint: true``, and for a tool that may
  change something when the routing margin was below τ;
- ``"writes"``: stop for every tool that is not read-only;
- ``"never"``: run whatever the router picked (the behaviour before this module).

A stop answers with the tool, the arguments it would send and the close candidates; the host runs the
right one with ``call_tool``, which names the tool, so its own approval prompt can show it.
"""

from __future__ import annotations

from typing import Any

from .mood import WRITE, tool_mood

CONFIRM_MODES = ("auto", "writes", "never")


def destructive(annotations: dict[str, Any] | None) -> bool:
    """The server says the tool may destroy data (and does not also say it only reads). Only an explicit
    ``true`` counts: MCP's default for a tool that says nothing is "may be destructive", which would hold
    back every unannotated tool that writes; those fall under the close-call rule instead."""
    hints = annotations or {}
    return hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True


def may_write(name: str, annotations: dict[str, Any] | None) -> bool:
    """Not known to be read-only: ``readOnlyHint: false``, or no hint and a name whose verb changes
    something (``create_…``, ``delete_…``). A tool of unknown mood is left alone, as the router does."""
    return tool_mood(name, annotations) == WRITE


def confirmation_reason(
    mode: str, name: str, annotations: dict[str, Any] | None, margin: float, tau: float
) -> str | None:
    """Why this routed choice must be confirmed (``"destructive"``, ``"close_call"``, ``"writes"``),
    or None to run it."""
    if mode == "never":
        return None
    if destructive(annotations):
        return "destructive"
    if not may_write(name, annotations):
        return None
    if mode == "writes":
        return "writes"
    return "close_call" if margin < tau else None


def confirmation_message(reason: str, tool_id: str) -> str:
    why = {
        "destructive": "its server marks it as one that may delete or overwrite data",
        "close_call": "it changes something and other tools fit the request almost as well",
        "writes": "it changes something, and this gateway confirms every change it routes",
    }[reason]
    return (
        f"Not run: {tool_id} was chosen for this request, but {why}. If it is the right tool, run it with "
        f"call_tool and the arguments below; otherwise pick one of the candidates."
    )
