"""Nexus Gateway: an MCP gateway that puts hundreds of upstream tools behind a small, fixed surface."""

import importlib
from typing import TYPE_CHECKING, Any

from .config import GatewayConfig, GatewaySettings, UpstreamConfig, load_config, parse_config
from .exceptions import (
    ArgumentError,
    ConfigError,
    NexusError,
    RegistryError,
    ToolNotFound,
    UpstreamError,
    UpstreamProtocolError,
    UpstreamTimeout,
    UpstreamUnavailable,
)

if TYPE_CHECKING:
    from .gateway import Gateway
    from .registry import Registry, ToolEntry

__version__ = "0.1.0"

# Imported on first use: the gateway pulls in the MCP SDK (about two seconds here), which commands such
# as `models list`, `eval` and `--help` never need, and importing any submodule imports this package.
_LAZY = {"Gateway": ".gateway", "Registry": ".registry", "ToolEntry": ".registry"}


if not TYPE_CHECKING:  # type checkers see the imports above; a module __getattr__ would hide missing names

    def __getattr__(name: str) -> Any:
        if name in _LAZY:
            return getattr(importlib.import_module(_LAZY[name], __name__), name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ArgumentError",
    "ConfigError",
    "Gateway",
    "GatewayConfig",
    "GatewaySettings",
    "NexusError",
    "Registry",
    "RegistryError",
    "ToolEntry",
    "ToolNotFound",
    "UpstreamConfig",
    "UpstreamError",
    "UpstreamProtocolError",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "__version__",
    "load_config",
    "parse_config",
]
