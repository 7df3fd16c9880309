"""Gateway configuration, in Claude Desktop's own shape.

A config file is ``{"mcpServers": {name: server}, "nexus": {settings}}`` where a server is either
``{"command", "args", "env", "cwd"}`` (stdio) or ``{"url", "transport": "http"|"sse", "headers"}``.
Users can therefore point the gateway at the file they already have. Every problem is reported
as one :class:`ConfigError` that names the server and the field, never a traceback.

Other hosts write the same file with a few fields of their own, and those are honoured rather than
refused, so ``--from-claude-desktop`` fronts a Cline, Roo Code, Cursor, Windsurf, Gemini CLI or VS Code
file as well: ``timeout`` (seconds a call may take), ``autoApprove`` / ``alwaysAllow`` (tools the user
runs without confirming: the gateway's own ``confirm`` does not hold them back either),
``disabledTools`` (hidden), ``envFile`` (a dotenv file under ``env``), ``serverUrl`` / ``httpUrl`` (the
URL), ``transportType`` (the transport), ``watchPaths`` (ignored: the host restarts the server when
they change). VS Code's ``{"servers": …}`` is read like ``mcpServers``, with its ``${env:NAME}``,
``${workspaceFolder}`` and ``${userHome}``; its ``${input:…}`` prompts cannot be answered by a
gateway and are refused, naming the field.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import orjson
from dotenv import dotenv_values

from .confirmation import CONFIRM_MODES
from .exceptions import ConfigError
from .pins import PIN_MODES

DEFAULT_CALL_TIMEOUT = 60.0
# progress reports push a call's deadline on by call_timeout, up to this long in all (upstream.CallClock)
DEFAULT_MAX_CALL_TIMEOUT = 600.0
DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_MAX_BACKOFF = 30.0
DEFAULT_PING_INTERVAL = 30.0
DEFAULT_SEARCH_LIMIT = 8
# ir: the compressed signature (a long one, over ir.IR_TOKEN_BUDGET tokens, focused on the request);
# full: the whole JSON schema, spliced from its compiled KV block;
# auto: the signature first, the full schema when the signature leaves required arguments unresolved;
# ir-focused: the compressed signature with only the parameters the request can fill (ir.py).
SCHEMA_MODES = ("ir", "ir-focused", "full", "auto")

TransportKind = Literal["stdio", "http", "sse"]

_VAR = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_VSCODE_INPUT = re.compile(r"\$\{input:[^}]*\}")
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True)
class UpstreamConfig:
    """One upstream MCP server."""

    name: str
    transport: TransportKind
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    call_timeout: float | None = None  # ``timeout`` (Cline, Roo Code): this server's calls; None: nexus's
    always_allow: tuple[str, ...] = ()  # ``autoApprove`` / ``alwaysAllow``: tool names run unconfirmed
    disabled_tools: tuple[str, ...] = ()  # ``disabledTools`` (Roo Code): tool names no host may see

    def describe(self) -> str:
        """A short human description: the command line or the URL."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args]).strip()
        return self.url or ""


@dataclass(frozen=True)
class RoutingSettings:
    """The ``nexus.routing`` block: which models route intents, and how."""

    enabled: bool = True
    embedder: str | None = None  # an ONNX sentence-embedding folder; None: pinned bge-small
    pooling: str = "cls"
    query_prefix: str | None = None  # None: the embedder's default
    document_prefix: str = ""
    rerank: bool = False  # measured: the MS MARCO cross-encoder breaks more than it fixes (docs/routing.md)
    threads: int = 2  # the embedder's threads, and how many re-ranked pairs run side by side
    calibration: str | None = None  # a calibration JSON from `nexus-gateway calibrate`; None: defaults
    startup_wait: float = 20.0  # seconds serve waits for the first router build


@dataclass(frozen=True)
class GatewaySettings:
    """The ``nexus`` block: how the gateway itself behaves."""

    call_timeout: float = DEFAULT_CALL_TIMEOUT
    max_call_timeout: float = DEFAULT_MAX_CALL_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    max_backoff: float = DEFAULT_MAX_BACKOFF
    ping_interval: float = DEFAULT_PING_INTERVAL
    search_limit: int = DEFAULT_SEARCH_LIMIT
    expose: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()  # tools no host may find or call: 'server__tool' globs or 'server/*'
    unprefixed: str | None = None
    cache_dir: str | None = None
    journal: bool | str = True  # the call journal: True: <cache_dir>/journal.jsonl; a path; False: none
    pin_tools: str = "warn"  # a tool whose definition changed since first seen: "warn", "hold" (hidden), "off"
    routing: RoutingSettings = field(default_factory=RoutingSettings)
    model: str | None = None  # GGUF path or known name for `call(intent)`; None: the pulled default
    model_threads: int = 2
    generate: bool = True  # generate arguments locally when `call` gets none
    # let the local LLM pick among close candidates (measured: docs/routing.md); None: as the routing
    # calibration decided (`calibrate --judge`), else off
    judge: bool | None = None
    # which routed choices the host must confirm with call_tool instead of the gateway running them:
    # "auto" (destructive tools, and writes on a close call), "writes", "never" (confirmation.py)
    confirm: str = "auto"
    ask_user: bool = True  # confirm through the host's user (MCP elicitation) when the host can ask them
    schema: str = "ir"  # what the LLM sees of a tool: "ir", "ir-focused", "full" (spliced blocks), "auto"
    # server → {argument: value} filled into any call of that server's tools that leaves the argument out
    # (mcp-server-git's ``repo_path``: a project sidecar serves one repository, which requests rarely name)
    defaults: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class GatewayConfig:
    """A whole, validated configuration."""

    upstreams: tuple[UpstreamConfig, ...]
    settings: GatewaySettings = field(default_factory=GatewaySettings)
    source: str = "<memory>"
    disabled: tuple[str, ...] = ()  # servers the file lists with ``"disabled": true`` (shown by ``status``)

    def upstream(self, name: str) -> UpstreamConfig:
        for upstream in self.upstreams:
            if upstream.name == name:
                return upstream
        raise ConfigError(f"no upstream named {name!r}")


def expand_vars(value: str, where: str, environ: dict[str, str] | os._Environ[str]) -> str:
    """Expand ``${VAR}``, ``${VAR:-default}`` and VS Code's ``${env:VAR}``; a missing variable is a config
    error, and so is a VS Code ``${input:…}`` prompt (nobody is there to answer it)."""
    if prompt := _VSCODE_INPUT.search(value):
        raise ConfigError(
            f"{where}: {prompt.group(0)} is a VS Code input prompt, which the gateway cannot show; "
            "put the value in an environment variable and write ${NAME}"
        )

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise ConfigError(f"{where}: environment variable {name} is not set")

    return _VAR.sub(substitute, value)


def load_config(path: str | Path, environ: dict[str, str] | None = None) -> GatewayConfig:
    """Read and validate a config file."""
    path = Path(path)
    try:
        raw = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise ConfigError(f"config file {str(path)!r} does not exist") from None
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"config file {str(path)!r} is not valid JSON: {exc}") from None
    return parse_config(raw, source=str(path), environ=environ)


def load_claude_desktop(path: str | Path, environ: dict[str, str] | None = None) -> GatewayConfig:
    """Front every server of an existing ``claude_desktop_config.json``, skipping the gateway itself."""
    config = load_config(path, environ)
    others = tuple(u for u in config.upstreams if not _is_self(u))
    return replace(config, upstreams=others)


def _is_self(upstream: UpstreamConfig) -> bool:
    words = [upstream.command or "", *upstream.args]
    return any("nexus-gateway" in w or "nexus_gateway" in w for w in words)


def parse_config(raw: Any, source: str = "<memory>", environ: dict[str, str] | None = None) -> GatewayConfig:
    """Validate a decoded config object."""
    base = Path(source).resolve().parent if source != "<memory>" else Path.cwd()  # the config's folder
    env = _with_vscode_variables(os.environ if environ is None else environ, base)
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the top level must be a JSON object")
    section = "mcpServers" if "mcpServers" in raw or "servers" not in raw else "servers"  # servers: VS Code
    if section not in raw:
        raise ConfigError(f'{source}: no mcpServers: the servers to front, as {{"mcpServers": {{name: server}}}}')
    servers = raw[section]
    if not isinstance(servers, dict):
        raise ConfigError(f"{source}: {section} must be an object of name → server")
    upstreams = tuple(
        _parse_upstream(name, spec, env, f"{section}.{name}", base)
        for name, spec in servers.items()
        if not _disabled(f"{section}.{name}", spec)
    )
    settings = _parse_settings(raw.get("nexus", {}), {u.name for u in upstreams}, env)
    disabled = tuple(name for name in servers if name not in {u.name for u in upstreams})
    return GatewayConfig(upstreams=upstreams, settings=settings, source=source, disabled=disabled)


def _with_vscode_variables(environ: dict[str, str] | os._Environ[str], folder: Path) -> dict[str, str]:
    """The environment plus VS Code's ``${workspaceFolder}`` (the folder holding ``.vscode/mcp.json``,
    else the config's own ``folder``) and ``${userHome}``, unless the environment already names them."""
    if folder.name == ".vscode":
        folder = folder.parent
    return {"workspaceFolder": str(folder), "userHome": str(Path.home()), **environ}


def _disabled(where: str, spec: Any) -> bool:
    """``"disabled": true`` (the field Cline, Cursor and others write to switch a server off): skipped."""
    flag = spec.get("disabled", False) if isinstance(spec, dict) else False
    if not isinstance(flag, bool):
        raise ConfigError(f"{where}.disabled: must be true or false, got {flag!r}")
    return flag


# Fields other hosts write into the same file (the module docstring says what each does here).
HOST_FIELDS = {
    "timeout",
    "autoApprove",
    "alwaysAllow",
    "disabledTools",
    "envFile",
    "serverUrl",
    "httpUrl",
    "transportType",
    "watchPaths",
}
URL_FIELDS = ("url", "serverUrl", "httpUrl")  # Windsurf: serverUrl; Gemini CLI: httpUrl (streamable HTTP)


def _parse_upstream(
    name: str, spec: Any, env: dict[str, str] | os._Environ[str], where: str, base: Path
) -> UpstreamConfig:
    if not _SERVER_NAME.match(name):
        raise ConfigError(f"{where}: server name must be 1-64 letters, digits, '_', '-' or '.'")
    if not isinstance(spec, dict):
        raise ConfigError(f"{where}: must be an object with 'command' or 'url'")
    known = {"command", "args", "env", "cwd", "url", "transport", "type", "headers", "disabled"} | HOST_FIELDS
    unknown = sorted(set(spec) - known)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown field (expected one of {sorted(known)})")

    def text(key: str) -> str | None:
        value = spec.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ConfigError(f"{where}.{key}: must be a string")
        return expand_vars(value, f"{where}.{key}", env)

    def mapping(key: str) -> dict[str, str] | None:
        value = spec.get(key)
        if value is None:
            return None
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ConfigError(f"{where}.{key}: must be an object of string values")
        return {k: expand_vars(v, f"{where}.{key}.{k}", env) for k, v in value.items()}

    def names(key: str) -> tuple[str, ...]:
        value = spec.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}.{key}: must be a list of tool names")
        return tuple(value)

    timeout = spec.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
        raise ConfigError(f"{where}.timeout: must be a positive number of seconds, got {timeout!r}")
    host_fields: dict[str, Any] = {
        "call_timeout": float(timeout) if timeout is not None else None,
        "always_allow": names("autoApprove") + names("alwaysAllow"),
        "disabled_tools": names("disabledTools"),
    }
    command = text("command")
    given_urls = [key for key in URL_FIELDS if spec.get(key) is not None]
    if len(given_urls) > 1:
        raise ConfigError(f"{where}: give one of {', '.join(given_urls)}, not both")
    url_key = given_urls[0] if given_urls else "url"
    url = text(url_key)
    if command and url:
        raise ConfigError(f"{where}: give either 'command' (stdio) or '{url_key}' (http/sse), not both")
    if command:
        args = spec.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"{where}.args: must be a list of strings")
        env_file = text("envFile")
        environment = {**_read_env_file(env_file, f"{where}.envFile", base), **(mapping("env") or {})}
        return UpstreamConfig(
            name=name,
            transport="stdio",
            command=command,
            args=tuple(expand_vars(a, f"{where}.args", env) for a in args),
            env=environment if env_file or "env" in spec else None,
            cwd=text("cwd"),
            **host_fields,
        )
    if url:
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}.{url_key}: must start with http:// or https://, got {url!r}")
        field_name = next((k for k in ("transport", "transportType", "type") if k in spec), "transport")
        kind = spec.get(field_name, "http")
        if kind in ("streamable-http", "streamableHttp", "streamable_http"):
            kind = "http"
        if kind not in ("http", "sse"):
            raise ConfigError(f"{where}.{field_name}: must be 'http' or 'sse', got {kind!r}")
        return UpstreamConfig(name=name, transport=kind, url=url, headers=mapping("headers") or {}, **host_fields)
    raise ConfigError(f"{where}: missing 'command' (stdio server) or 'url' (http/sse server)")


def _read_env_file(path: str | None, where: str, base: Path) -> dict[str, str]:
    """The variables of a dotenv file (``envFile``: VS Code, Cursor), relative to the config's folder."""
    if path is None:
        return {}
    file = Path(path).expanduser()
    file = file if file.is_absolute() else base / file
    if not file.is_file():
        raise ConfigError(f"{where}: {str(file)!r} does not exist")
    return {key: value for key, value in dotenv_values(file).items() if value is not None}


def _parse_settings(raw: Any, upstream_names: set[str], env: dict[str, str] | os._Environ[str]) -> GatewaySettings:
    if not isinstance(raw, dict):
        raise ConfigError("nexus: must be an object")
    defaults = GatewaySettings()
    known = set(defaults.__dataclass_fields__)
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"nexus.{unknown[0]}: unknown setting (expected one of {sorted(known)})")

    def positive(key: str) -> float:
        value = raw.get(key, getattr(defaults, key))
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ConfigError(f"nexus.{key}: must be a positive number, got {value!r}")
        return float(value)

    expose, hide = raw.get("expose", []), raw.get("hide", [])
    for key, patterns in (("expose", expose), ("hide", hide)):
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise ConfigError(f"nexus.{key}: must be a list of 'server__tool' or 'server/*' patterns")
    unprefixed = raw.get("unprefixed")
    if unprefixed is not None and unprefixed not in upstream_names:
        raise ConfigError(f"nexus.unprefixed: {unprefixed!r} is not a server in mcpServers")
    limit = raw.get("search_limit", defaults.search_limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ConfigError(f"nexus.search_limit: must be a positive integer, got {limit!r}")
    cache_dir = raw.get("cache_dir")
    if cache_dir is not None and not isinstance(cache_dir, str):
        raise ConfigError("nexus.cache_dir: must be a string path")
    journal = raw.get("journal", defaults.journal)
    if not isinstance(journal, bool | str) or journal == "":
        raise ConfigError(f"nexus.journal: must be true, false or a file path, got {journal!r}")
    model = raw.get("model")
    if model is not None and not isinstance(model, str):
        raise ConfigError("nexus.model: must be a GGUF path or a model name (see `nexus-gateway models list`)")
    threads = raw.get("model_threads", defaults.model_threads)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ConfigError(f"nexus.model_threads: must be a positive integer, got {threads!r}")
    schema = raw.get("schema", defaults.schema)
    if schema not in SCHEMA_MODES:
        raise ConfigError(f"nexus.schema: must be one of {', '.join(SCHEMA_MODES)}, got {schema!r}")
    pin_tools = raw.get("pin_tools", defaults.pin_tools)
    if pin_tools not in PIN_MODES:
        raise ConfigError(f"nexus.pin_tools: must be one of {', '.join(PIN_MODES)}, got {pin_tools!r}")
    confirm = raw.get("confirm", defaults.confirm)
    if confirm not in CONFIRM_MODES:
        raise ConfigError(f"nexus.confirm: must be one of {', '.join(CONFIRM_MODES)}, got {confirm!r}")
    argument_defaults = _parse_defaults(raw.get("defaults", {}), upstream_names, env)
    generate, judge, ask_user = raw.get("generate", True), raw.get("judge"), raw.get("ask_user", True)
    for key, flag in (("generate", generate), ("ask_user", ask_user)):
        if not isinstance(flag, bool):
            raise ConfigError(f"nexus.{key}: must be true or false, got {flag!r}")
    if judge is not None and not isinstance(judge, bool):
        raise ConfigError(f"nexus.judge: must be true, false or null (as calibrated), got {judge!r}")
    return GatewaySettings(
        model=expand_vars(model, "nexus.model", env) if model else None,
        model_threads=threads,
        generate=generate,
        judge=judge,
        confirm=confirm,
        ask_user=ask_user,
        schema=schema,
        routing=_parse_routing(raw.get("routing", {})),
        call_timeout=positive("call_timeout"),
        max_call_timeout=positive("max_call_timeout"),
        connect_timeout=positive("connect_timeout"),
        max_backoff=positive("max_backoff"),
        ping_interval=positive("ping_interval"),
        search_limit=limit,
        expose=tuple(expose),
        hide=tuple(hide),
        unprefixed=unprefixed,
        cache_dir=expand_vars(cache_dir, "nexus.cache_dir", env) if cache_dir else None,
        journal=expand_vars(journal, "nexus.journal", env) if isinstance(journal, str) else journal,
        pin_tools=pin_tools,
        defaults=argument_defaults,
    )


def _parse_defaults(
    raw: Any, upstream_names: set[str], env: dict[str, str] | os._Environ[str]
) -> dict[str, dict[str, Any]]:
    """``nexus.defaults``: ``{server: {argument: value}}``; string values may use ``${VAR}``."""
    if not isinstance(raw, dict):
        raise ConfigError("nexus.defaults: must be an object of server → {argument: value}")
    parsed: dict[str, dict[str, Any]] = {}
    for server, values in raw.items():
        where = f"nexus.defaults.{server}"
        if server not in upstream_names:
            raise ConfigError(f"{where}: {server!r} is not a server in mcpServers")
        if not isinstance(values, dict):
            raise ConfigError(f"{where}: must be an object of argument → value")
        parsed[server] = {
            key: expand_vars(value, f"{where}.{key}", env) if isinstance(value, str) else value
            for key, value in values.items()
        }
    return parsed


def _parse_routing(raw: Any) -> RoutingSettings:
    if not isinstance(raw, dict):
        raise ConfigError("nexus.routing: must be an object")
    defaults = RoutingSettings()
    known = set(defaults.__dataclass_fields__)
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"nexus.routing.{unknown[0]}: unknown setting (expected one of {sorted(known)})")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        expected = type(getattr(defaults, key))
        if getattr(defaults, key) is None:
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"nexus.routing.{key}: must be a string")
        elif expected is float and isinstance(value, int | float) and not isinstance(value, bool):
            value = float(value)
        elif not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(f"nexus.routing.{key}: must be a {expected.__name__}, got {value!r}")
        values[key] = value
    if values.get("pooling", "cls") not in ("cls", "mean"):
        raise ConfigError("nexus.routing.pooling: must be 'cls' or 'mean'")
    return RoutingSettings(**values)
