"""Edits of the configuration file reach a running gateway without a restart.

A sidecar serving a project, or the gateway chained in Claude Desktop with ``--from-claude-desktop``,
should pick up an upstream added to (or removed from) its file without dropping the host's session.
The file is polled (a stat a second: editors save by replacing the file, which file-change
notifications report unevenly across platforms) and read again on ``SIGHUP`` too. A file that no
longer parses is reported on stderr and the running configuration kept: an edit half-way through never
takes the gateway down. The tool pins file is watched the same way in ``pin_tools: hold`` mode, so a
review's decision releases held tools at once.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path

import anyio

from .config import GatewayConfig
from .exceptions import ConfigError
from .gateway import Gateway

logger = logging.getLogger(__name__)

POLL_SECONDS = 1.0


def file_stamp(path: Path) -> tuple[int, int] | None:
    """What changes when the file does (modification time and size); None while it is missing."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


async def watch_config(
    path: Path, read: Callable[[], GatewayConfig], gateway: Gateway, poll: float = POLL_SECONDS
) -> None:
    """Until cancelled: when ``path`` changes or the process gets ``SIGHUP``, ``read()`` the
    configuration again and apply it to ``gateway``."""
    hangup = anyio.Event()
    async with anyio.create_task_group() as group:
        if hasattr(signal, "SIGHUP"):
            group.start_soon(_on_hangup, lambda: hangup.set())
        seen = file_stamp(path)
        pins = gateway.pins if gateway.settings.pin_tools == "hold" else None
        while True:
            with anyio.move_on_after(poll):
                await hangup.wait()
            forced, hangup = hangup.is_set(), anyio.Event()
            if pins is not None and pins.changed_elsewhere():  # `nexus-gateway pins --accept` released tools
                gateway.review_pins()
            stamp = file_stamp(path)
            if stamp == seen and not forced:
                continue
            seen = stamp
            if stamp is None:
                logger.warning("config %s: the file is gone; still serving the configuration read before", path)
                continue
            reload(gateway, read)


def reload(gateway: Gateway, read: Callable[[], GatewayConfig]) -> None:
    """Read the configuration again and apply it; a bad one is reported and changes nothing."""
    try:
        config = read()
    except ConfigError as exc:
        logger.error("%s; still serving the configuration read before", exc)
        return
    change = gateway.reload(config)
    logger.info("config %s reloaded: %s", config.source, change.describe())


async def _on_hangup(notify: Callable[[], None]) -> None:
    try:
        with anyio.open_signal_receiver(signal.SIGHUP) as signals:
            async for _ in signals:
                notify()
    except (NotImplementedError, ValueError, RuntimeError):  # no signals here (not the main thread, Windows)
        return
