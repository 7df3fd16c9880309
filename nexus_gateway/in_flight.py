"""A count of work in flight, and a wait for none: what a graceful stop waits on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import anyio


class InFlight:
    """How many calls (or HTTP requests) are being answered; :meth:`idle` returns once none is."""

    def __init__(self) -> None:
        self.count = 0
        self._idle = anyio.Event()
        self._idle.set()

    @contextmanager
    def one(self) -> Iterator[None]:
        """Count the body as in flight."""
        self.count += 1
        if self._idle.is_set():
            self._idle = anyio.Event()
        try:
            yield
        finally:
            self.count -= 1
            if not self.count:
                self._idle.set()

    async def idle(self) -> None:
        while self.count:
            await self._idle.wait()
