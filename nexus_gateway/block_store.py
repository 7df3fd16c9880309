"""Compiled schema blocks of one engine and one system prefix: on disk, in memory, compiled on demand.

Files live beside the tool entries in the registry cache, under the schema's key and a tag naming what
the block depends on (model fingerprint, prefix anchor, V layout)::

    tools/<schema key>.<model>-<anchor>-<r|t>.atb

so an unchanged schema is never compiled twice, another model or prompt gets its own files, and a
corrupted file (checksum) is deleted and compiled again. Loaded blocks stay mapped in a bounded LRU.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path

from .atb import Block, BlockCorrupt, BlockError, anchor_of, read_block, write_block
from .cache import RegistryCache
from .engine import Cursor, LlamaEngine
from .kv_splice import RepairPolicy, Splicer, SpliceReport, compile_block

logger = logging.getLogger(__name__)


class SchemaBlocks:
    def __init__(
        self,
        engine: LlamaEngine,
        prefix: list[int],
        cache: RegistryCache,
        *,
        policy: RepairPolicy | None = None,
        memory_bytes: int = 256 * 1024 * 1024,
    ) -> None:
        self.engine = engine
        self.prefix = list(prefix)
        self.anchor = anchor_of(self.prefix)
        self.cache = cache
        self.splicer = Splicer(engine, policy)
        self.memory_bytes = memory_bytes
        self._loaded: OrderedDict[str, Block] = OrderedDict()
        self._lock = threading.Lock()
        geometry = engine.geometry()
        self.tag = f"{geometry.fingerprint.hex()[:12]}-{self.anchor.hex()[:8]}-{'t' if geometry.v_trans else 'r'}"

    def path(self, key: str) -> Path:
        return self.cache.root / "tools" / f"{key}.{self.tag}.atb"

    def get(self, key: str) -> Block | None:
        """The block of ``key`` if compiled (memory, then disk), else None."""
        with self._lock:
            block = self._loaded.get(key)
            if block is not None:
                self._loaded.move_to_end(key)
                return block
        path = self.path(key)
        if not path.exists():
            return None
        try:
            block = read_block(path)
        except BlockCorrupt as exc:
            logger.warning("block cache: %s; compiling it again", exc)
            path.unlink(missing_ok=True)
            return None
        except (BlockError, OSError) as exc:
            logger.warning("block cache: %s", exc)
            return None
        self._remember(key, block)
        return block

    def _remember(self, key: str, block: Block) -> None:
        with self._lock:
            self._loaded[key] = block
            total = sum(b.nbytes for b in self._loaded.values())
            while total > self.memory_bytes and len(self._loaded) > 1:
                _, evicted = self._loaded.popitem(last=False)
                total -= evicted.nbytes

    def compile(self, key: str, tokens: list[int]) -> Block:
        block = compile_block(self.engine, self.prefix, tokens)
        try:
            write_block(self.path(key), block)
        except OSError as exc:  # a read-only or full disk must never break serving
            logger.warning("block cache: cannot write %s: %s", self.path(key), exc)
        self._remember(key, block)
        return block

    def compile_missing(
        self, items: Iterable[tuple[str, list[int]]], progress: Callable[[int, int], None] | None = None
    ) -> int:
        """Compile every ``(key, tokens)`` without a block yet; returns how many were compiled."""
        todo = [(key, tokens) for key, tokens in items if self.get(key) is None]
        for done, (key, tokens) in enumerate(todo, 1):
            self.compile(key, tokens)
            if progress:
                progress(done, len(todo))
        return len(todo)

    def place(self, cursor: Cursor, key: str, tokens: list[int]) -> SpliceReport:
        """Put the schema text at the cursor: spliced when a compatible block exists and is cheaper."""
        return self.splicer.place(cursor, self.get(key), tokens, self.anchor)
