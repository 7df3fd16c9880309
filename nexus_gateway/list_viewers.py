"""Which host connections to tell when a list they were given changes (``notifications/*/list_changed``).

A host lists tools, resources and prompts once, usually right after it connects and before a slow
upstream (an ``npx`` download) has: whatever that upstream brings would stay missing from the host's
lists for the whole session. Each kind of list keeps the host connections that asked for it, and what
each was given where that is cheap to know (the exposed tools), so only a host whose list really
changed is told.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable

from mcp.server.session import ServerSession

logger = logging.getLogger(__name__)

KINDS = ("tools", "resources", "prompts")
MAX_VIEWERS = 256  # host connections remembered per kind (the most recent)


class ListViewers:
    """The host connections that listed one kind of thing. The SDK tells no handler when a host
    connection ends, so the oldest of too many are forgotten (a long-running HTTP sidecar sees many
    short-lived hosts), and one whose connection fails is dropped."""

    def __init__(self, kind: str, limit: int = MAX_VIEWERS) -> None:
        if kind not in KINDS:
            raise ValueError(f"no list of {kind!r}")
        self.kind = kind
        self.limit = limit
        self.seen: dict[str, tuple[ServerSession, Hashable]] = {}

    def saw(self, host: str, session: ServerSession, given: Hashable = None) -> None:
        """``host`` was just given the list (``given``: what it held, when that is compared later)."""
        self.seen.pop(host, None)
        self.seen[host] = (session, given)
        while len(self.seen) > self.limit:
            del self.seen[next(iter(self.seen))]

    async def changed(self, current: Hashable = None) -> int:
        """Tell each host to list again: those given something other than ``current``, or every one when
        ``current`` is None (a change the gateway cannot see the content of). Returns how many were told."""
        told = 0
        for host, (session, given) in list(self.seen.items()):
            if current is not None and given == current:
                continue
            self.seen[host] = (session, current)
            try:
                await self._send(session)
            except Exception as exc:  # that host is gone
                logger.debug("%s/list_changed to a closed host connection: %s", self.kind, exc)
                self.seen.pop(host, None)
            else:
                told += 1
        return told

    async def _send(self, session: ServerSession) -> None:
        if self.kind == "tools":
            await session.send_tool_list_changed()
        elif self.kind == "resources":
            await session.send_resource_list_changed()
        else:
            await session.send_prompt_list_changed()
