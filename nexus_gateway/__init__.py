"""Nexus Gateway: an MCP gateway that puts hundreds of upstream tools behind a small, fixed surface."""

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
from .gateway import Gateway
from .registry import Registry, ToolEntry

__version__ = "0.1.0"

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
