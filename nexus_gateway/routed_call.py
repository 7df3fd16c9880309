"""``call(intent)`` end to end: route the intent, let the judge pick among close candidates (when the
config turns it on), generate the arguments, forward, and remember the turn in the session's window.

The host-facing server and the CLI's ``ask`` both run this one path; they differ only in how they show
the outcome (an MCP result, or JSON on stdout and the trace on stderr).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from .affordance import argument_slots, query_slots
from .compound import ToolFields, change_clauses, clause_fields, clause_operation
from .confirmation import WHY, confirmation_message, confirmation_reason, confirmed_by_user
from .engine import ContextOverflow
from .gateway import Gateway
from .host_relay import HostLink
from .mood import judge_candidates
from .pasted import without_pasted
from .registry import ToolEntry
from .routing import JUDGE_CANDIDATES, Candidate, RouteResult
from .validation import BLANK_INTENT, require_words, validate_arguments

TRACE_KEY = "io.nexus-gateway/trace"
# A call that arrives while the local model is still loading (the first seconds after start: the sha256
# check, the load, the system prefix) waits for it this long rather than handing the host the work.
MODEL_WAIT_S = 60.0


@dataclass
class IntentOutcome:
    """Either the upstream result of the tool that ran (its ``_meta`` carries the trace under
    :data:`TRACE_KEY`), or a report of why nothing ran: ``status`` is ``routing_unavailable``,
    ``no_tools``, ``no_confident_match``, ``needs_arguments``, ``needs_confirmation``, ``declined`` (the
    user said no to a call the gateway asked them to confirm) or ``planned`` (a dry run), with candidates,
    the missing arguments, or the call the host should make itself (``confirmation.py``)."""

    forwarded: dict[str, Any] | None = None
    report: dict[str, Any] | None = None


def result_text(result: dict[str, Any]) -> Any:
    """What the session window keeps of a result: its structured content, else its text."""
    if isinstance(result.get("structuredContent"), dict):
        return result["structuredContent"]
    texts = [c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict) and c.get("type") == "text"]
    return "\n".join(texts)


def candidate_list(gateway: Gateway, candidates: list[Candidate]) -> list[dict[str, Any]]:
    """What a report shows of the router's candidates: each tool's id, signature and fused score."""
    return [
        {"tool": c.id, "signature": gateway.describe(c.id).signature, "score": round(c.score, 4)} for c in candidates
    ]


def _filled_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def no_tools_message(gateway: Gateway) -> str:
    """Why there is nothing to route to: each upstream's state, so the user fixes the config, not the intent."""
    states = [f"{s.name} {s.state.value}" + (f" ({s.error})" if s.error else "") for s in gateway.pool.statuses()]
    if not states:
        return "No upstream servers are configured: add some under mcpServers."
    return "No upstream tools are available: " + "; ".join(states) + "."


async def call_intent(
    gateway: Gateway,
    intent: str,
    arguments: dict[str, Any] | None,
    session: str,
    host: HostLink | None = None,
    dry_run: bool = False,
) -> IntentOutcome:
    """Route the intent; forward when arguments are given or generated, else ask for them. ``dry_run``
    stops before anything is confirmed or sent: the host sees the call the gateway would make. Counted
    for ``GET /metrics`` by how it ended (``forwarded`` or the report's status)."""
    require_words("call", "intent", intent, BLANK_INTENT)
    started, status = time.perf_counter(), "failed"
    try:
        outcome = await _call_intent(gateway, intent, arguments, session, host, dry_run)
        status = "forwarded" if outcome.report is None else str(outcome.report.get("status"))
        return outcome
    except anyio.get_cancelled_exc_class():
        status = "cancelled"
        raise
    finally:
        gateway.metrics.intent_ended(status, time.perf_counter() - started)


async def _call_intent(
    gateway: Gateway,
    intent: str,
    arguments: dict[str, Any] | None,
    session: str,
    host: HostLink | None,
    dry_run: bool,
) -> IntentOutcome:
    window = gateway.generation.window(session)
    # what the request asks, its pasted trace or log aside: every choice of tool reads this, and argument
    # generation the whole intent, where the pasted text may be an issue's body
    request = without_pasted(intent)
    carried = window.carried_slots(request)
    result = await gateway.route(request, given=argument_slots(arguments), carried=carried)
    if result is None:
        hits, _ = await gateway.search(request, 5)
        return IntentOutcome(
            report={
                "status": "routing_unavailable",
                "message": "Semantic routing is not available; pick one of these and use call_tool.",
                "candidates": [{"tool": h.entry.id, "signature": h.entry.signature} for h in hits],
            }
        )
    tau = gateway.routing.calibration.tau
    elided = window.rejoined_request(request, result.unsure(tau))
    if elided is not None:
        # the follow-up alone fits no tool surely, or cannot name one; with the requests before it, it may
        # fit their tool
        routed = await gateway.route(elided, given=argument_slots(arguments), carried=carried)
        joined = window.joined_route(request, routed, lambda tool_id: gateway.describe(tool_id).name)
        if joined is None:
            elided = None
        else:
            result = joined
    trace = result.trace()
    if carried:
        trace["carried"] = sorted(carried)
    if elided is not None:
        trace["routed_as"] = elided
    if request != intent:  # the host can see that the pasted lines did not choose the tool
        trace["pasted_lines"] = _filled_lines(intent) - _filled_lines(request)
    if not result.candidates:
        return IntentOutcome(report={"status": "no_tools", "message": no_tools_message(gateway), "trace": trace})
    if result.abstained or result.chosen is None:
        unmade = f"No tool here can {' or '.join(result.unmade)}. " if result.unmade else ""
        return IntentOutcome(
            report={
                "status": "no_confident_match",
                "message": f"{unmade}No tool fits this request confidently. The closest are below; use "
                "call_tool with one of them if it is right.",
                "candidates": candidate_list(gateway, result.candidates[:5]),
                "trace": trace,
            }
        )
    entry = gateway.describe(result.chosen)
    # the model both judges and generates: a call in the first seconds after start waits for it here,
    # before the judge, or the judge would be skipped while generation still got the model
    if arguments is None and not gateway.generation.ready and gateway.generation.error is None:
        with anyio.move_on_after(MODEL_WAIT_S):
            await gateway.generation.wait_settled()
    # a follow-up routed with the requests before it goes on with their tool; the judge would read it alone
    if arguments is None and elided is None and result.margin < gateway.judge_margin and gateway.generation.ready:
        close = judge_candidates(request, [gateway.describe(c.id) for c in result.candidates[:JUDGE_CANDIDATES]])
    else:
        close = []
    if len(close) > 1:
        try:
            entry, judge_ms = await gateway.generation.choose(close, request)
        except ContextOverflow as exc:  # the router's choice stands
            trace["judge"] = {"error": str(exc)}
        else:
            trace["judge"] = {"chosen": entry.id, "candidates": [e.id for e in close], "ms": round(judge_ms, 1)}
    left_over = await changes_left_over(
        lambda clause, slots: gateway.routing.route(clause, carried=slots),
        request,
        entry.id,
        entry.name,
        entry.input_schema,
        carried,
    )
    if left_over:
        trace["left_over"] = left_over
    note = left_over_note(entry.id, left_over)
    generation = None
    defaults = gateway.defaults(entry)
    missing: list[str] = []
    too_long = None
    if arguments is None and gateway.generation.ready:
        try:
            generation = await gateway.generation.generate(entry, intent, window, given=defaults.keys())
        except ContextOverflow as exc:  # a pasted document: the host can still fill the arguments in
            too_long = str(exc)
            trace["generation"] = {"error": too_long}
        else:
            trace["generation"] = generation.trace()
            missing = generation.missing
            if not missing:
                arguments = generation.arguments
    if arguments is None:
        ask_again = f"Call `call` again with the arguments for {entry.id}, or call_tool directly."
        if too_long:
            message = f"The local model cannot fill in the arguments ({too_long}). {ask_again}"
        elif not gateway.generation.ready:
            why = gateway.generation.error or f"the model is still loading after {MODEL_WAIT_S:.0f} s"
            message = f"Local argument generation is off ({why}). {ask_again}"
        elif missing:
            message = f"The request does not say {', '.join(missing)}. {ask_again}"
        else:
            message = ask_again
        return IntentOutcome(
            report={
                "status": "needs_arguments",
                "tool": entry.id,
                "signature": entry.signature,
                "inputSchema": entry.input_schema,
                "missing": missing,
                "arguments": gateway.with_defaults(entry, generation.arguments if generation else {}),
                "message": message + note,
                "trace": trace,
            }
        )
    arguments = gateway.with_defaults(entry, arguments)
    reason = confirmation_reason(gateway.settings.confirm, entry.name, entry.raw.get("annotations"), result.margin, tau)
    if gateway.always_allowed(entry):
        reason = None
    if dry_run:
        validate_arguments(entry.id, entry.input_schema, arguments)  # what the real call would refuse
        report = planned(gateway, entry, arguments, reason, result.candidates, trace)
        return IntentOutcome(report={**report, "message": report["message"] + note})
    user_says = None
    if reason is not None:
        trace["confirm"] = reason
        if gateway.settings.ask_user:
            user_says = await confirmed_by_user(host, reason, entry.id, intent, arguments)
            if user_says is not None:
                trace["confirmed_by_user"] = user_says
    if reason is not None and user_says is False:
        return IntentOutcome(
            report={
                "status": "declined",
                "tool": entry.id,
                "arguments": arguments,
                "candidates": candidate_list(gateway, result.candidates[:JUDGE_CANDIDATES]),
                "message": f"The user chose not to run {entry.id}; nothing ran. If another candidate is right, "
                "run it with call_tool.",
                "trace": trace,
            }
        )
    if reason is not None and user_says is None:
        window.hold(entry.id, entry.name, intent)
        return IntentOutcome(
            report={
                "status": "needs_confirmation",
                "reason": reason,
                "tool": entry.id,
                "signature": entry.signature,
                "arguments": arguments,
                "candidates": candidate_list(gateway, result.candidates[:JUDGE_CANDIDATES]),
                "message": confirmation_message(reason, entry.id) + note,
                "trace": trace,
            }
        )
    started = time.perf_counter()
    forwarded = await gateway.call(entry.id, arguments, host=host, via="call", intent=intent)
    trace["ms"]["forward"] = round((time.perf_counter() - started) * 1000, 2)
    trace["tool"] = entry.id
    trace["arguments"] = arguments
    window.add(intent, entry.name, arguments, result_text(forwarded))
    if note:  # the host's model reads the content, not the trace
        forwarded = {
            **forwarded,
            "content": [*(forwarded.get("content") or []), {"type": "text", "text": note.strip()}],
        }
    return traced(forwarded, trace)


async def changes_left_over(
    route: Callable[[str, frozenset[str]], Awaitable[RouteResult | None]],
    intent: str,
    tool_id: str,
    tool_name: str,
    schema: dict[str, Any] | None,
    carried: frozenset[str] = frozenset(),
) -> list[str]:
    """The change clauses of a request for several changes that the chosen tool does not make. "Merge PR 5
    and delete the branch" runs ``merge_pull_request``, which deletes nothing; said nowhere, the host
    would take the branch for gone. A clause that sets fields is made when the tool has a parameter for
    them (``compound.ToolFields.sets``); an operation ("delete the branch") when the tool's name or a
    parameter's name or option says it, or the clause routed alone (``route(clause, carried)``) goes to
    the tool. The tool's fields are read from its schema only then (every call comes through here, few
    ask two changes), and a route costs one per such operation clause."""
    clauses = change_clauses(intent)
    if not clauses:
        return []
    tool = ToolFields.of_tool(tool_name, schema)
    slots = query_slots(intent) | carried
    left = []
    for clause in clauses:
        operation = clause_operation(clause)
        if operation is None:
            fields = clause_fields(clause)
            if fields and not tool.sets(fields):
                left.append(clause)
        elif not tool.does(operation):
            routed = await route(clause, slots)
            if routed is not None and routed.chosen != tool_id:
                left.append(clause)
    return left


def left_over_note(tool_id: str, clauses: list[str]) -> str:
    """What the host is told of the changes a call leaves undone (empty when there are none)."""
    if not clauses:
        return ""
    asked = "; ".join(f'"{clause.rstrip(".!")}"' for clause in clauses)
    one = len(clauses) == 1
    return (
        f" The request also asks for {asked}, which {tool_id} does not do: this call leaves "
        f"{'it' if one else 'them'} undone. Call again for {'it' if one else 'each'}."
    )


def planned(
    gateway: Gateway,
    entry: ToolEntry,
    arguments: dict[str, Any],
    reason: str | None,
    candidates: list[Candidate],
    trace: dict[str, Any],
) -> dict[str, Any]:
    """The report of a dry run: the call that would be made, and whether it would stop to be confirmed."""
    held = f" Run for real, it would first be confirmed: {WHY[reason]}." if reason else ""
    return {
        "status": "planned",
        "tool": entry.id,
        "signature": entry.signature,
        "arguments": arguments,
        "confirm": reason,
        "candidates": candidate_list(gateway, candidates[:JUDGE_CANDIDATES]),
        "message": f"Dry run: nothing ran. Run it with call_tool, or call again without dry_run.{held}",
        "trace": trace,
    }


def traced(forwarded: dict[str, Any], trace: dict[str, Any]) -> IntentOutcome:
    """The upstream result as the outcome of a routed call: its ``_meta`` carries the trace."""
    return IntentOutcome(forwarded={**forwarded, "_meta": {**(forwarded.get("_meta") or {}), TRACE_KEY: trace}})
