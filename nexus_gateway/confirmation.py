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

That answer goes to the host's model, which may run the call without asking anyone. When the host can
put a form in front of its user (MCP elicitation) and ``nexus.ask_user`` is on (the default), the
gateway asks the user instead: the tool, why it stops, the arguments it would send, and one box to
run it. Yes runs the call at once; no, or a dismissed form, answers ``declined`` with the candidates,
and nothing runs.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from .host_relay import HostLink
from .mood import WRITE, tool_mood

logger = logging.getLogger(__name__)

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


WHY = {
    "destructive": "its server marks it as one that may delete or overwrite data",
    "close_call": "it changes something and other tools fit the request almost as well",
    "writes": "it changes something, and this gateway confirms every change it routes",
}
RUN_FIELD = "run"
SHOWN_ARGUMENTS = 600  # characters of the arguments a form shows (a file's whole content would drown it)


def confirmation_message(reason: str, tool_id: str) -> str:
    why = WHY[reason]
    return (
        f"Not run: {tool_id} was chosen for this request, but {why}. If it is the right tool, run it with "
        f"call_tool and the arguments below; otherwise pick one of the candidates."
    )


def confirmation_form(reason: str, tool_id: str, intent: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The question and the one-box form a user confirms a routed call with."""
    shown = orjson.dumps(arguments).decode()
    if len(shown) > SHOWN_ARGUMENTS:
        shown = shown[:SHOWN_ARGUMENTS] + "…"
    message = f"For “{intent}” the gateway chose {tool_id}, but {WHY[reason]}. It would send {shown}. Run it?"
    schema = {
        "type": "object",
        "properties": {
            RUN_FIELD: {"type": "boolean", "title": f"Run {tool_id}", "default": True},
        },
        "required": [RUN_FIELD],
    }
    return message, schema


async def confirmed_by_user(
    host: HostLink | None, reason: str, tool_id: str, intent: str, arguments: dict[str, Any]
) -> bool | None:
    """Ask the host's user; None when the host cannot ask (the host's model gets the question instead)."""
    if host is None or not host.asks_forms():
        return None
    message, schema = confirmation_form(reason, tool_id, intent, arguments)
    try:
        answer = await host.ask_user(message, schema)
    except Exception as exc:  # the host failed to show the form: its model gets the question instead
        logger.warning("asking the user to confirm %s failed (%s: %s)", tool_id, type(exc).__name__, exc)
        return None
    return answer.action == "accept" and bool((answer.content or {}).get(RUN_FIELD))
