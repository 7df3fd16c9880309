"""Where loaded KV blocks live between splices: a fixed, page-aligned arena with LRU eviction.

The C arena (``nexus_gateway._arena``, native/arena.c) holds ``slots`` page-aligned slots in one
allocation, one mutex on its own 128-byte line (checked at compile time), copies in and out with the GIL
released; Python threads load, splice and evict concurrently and never see half a block. The fallback
here has the same semantics with a numpy buffer and a ``threading.Lock``; ``NEXUS_PURE_PYTHON=1``
forces it. Keys are 64-bit integers (:func:`key_of` hashes a schema key).
"""

from __future__ import annotations

import hashlib
import mmap
import os
import threading
from typing import Any

import numpy as np

try:  # pragma: no cover - depends on the build
    if os.environ.get("NEXUS_PURE_PYTHON"):
        raise ImportError("NEXUS_PURE_PYTHON is set")
    from . import _arena  # type: ignore[attr-defined]

    _NativeArena = _arena.Arena
except ImportError:
    _NativeArena = None


def key_of(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


class _PythonArena:
    """The fallback: same slots, same LRU, same answers."""

    def __init__(self, slots: int, slot_bytes: int) -> None:
        if slots <= 0 or slot_bytes <= 0:
            raise ValueError("slots and slot_bytes must be positive")
        page = mmap.PAGESIZE
        self.slots = slots
        self.slot_bytes = -(-slot_bytes // page) * page
        raw = np.empty(slots * self.slot_bytes + page, dtype=np.uint8)
        start = (-raw.ctypes.data) % page
        self._pages = raw[start : start + slots * self.slot_bytes]
        self._keys = [0] * slots
        self._used = [0] * slots
        self._sizes = [0] * slots
        self._lock = threading.Lock()
        self._tick = self.hits = self.misses = self.evictions = 0

    def _find(self, key: int) -> int:
        for i in range(self.slots):
            if self._used[i] and self._keys[i] == key:
                return i
        return -1

    def put(self, key: int, data: Any) -> int:
        view = np.frombuffer(data, dtype=np.uint8)
        if view.size > self.slot_bytes:
            raise ValueError(f"block of {view.size} bytes does not fit a {self.slot_bytes}-byte slot")
        with self._lock:
            slot = self._find(key)
            if slot < 0:
                free = [i for i in range(self.slots) if not self._used[i]]
                slot = free[0] if free else min(range(self.slots), key=self._used.__getitem__)
                self.evictions += 0 if free else 1
            start = slot * self.slot_bytes
            self._pages[start : start + view.size] = view
            self._keys[slot], self._sizes[slot] = key, view.size
            self._tick += 1
            self._used[slot] = self._tick
            return slot

    def get_into(self, key: int, out: Any) -> int:
        target = np.frombuffer(out, dtype=np.uint8)
        with self._lock:
            slot = self._find(key)
            if slot < 0:
                self.misses += 1
                return -1
            size = self._sizes[slot]
            if size > target.size:
                raise ValueError("output buffer smaller than the block")
            start = slot * self.slot_bytes
            target[:size] = self._pages[start : start + size]
            self._tick += 1
            self._used[slot] = self._tick
            self.hits += 1
            return size

    def evict(self, key: int) -> bool:
        with self._lock:
            slot = self._find(key)
            if slot < 0:
                return False
            self._used[slot] = 0
            self.evictions += 1
            return True

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "slots": self.slots,
                "slot_bytes": self.slot_bytes,
                "used": sum(1 for u in self._used if u),
                "hits": self.hits,
                "misses": self.misses,
                "evictions": self.evictions,
                "pages_address": int(self._pages.ctypes.data),
            }


def BlockArena(slots: int = 32, slot_bytes: int = 8 * 1024 * 1024, *, native: bool | None = None) -> Any:
    """An arena of ``slots`` × ``slot_bytes`` (rounded up to pages): native when built, else the fallback."""
    use_native = _NativeArena is not None if native is None else native
    if use_native:
        if _NativeArena is None:
            raise RuntimeError("the native arena is not built")
        return _NativeArena(slots, slot_bytes)
    return _PythonArena(slots, slot_bytes)


def backend() -> str:
    return "native" if _NativeArena is not None else "numpy"
