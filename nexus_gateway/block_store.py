"""Compiled schema blocks of one engine and one system prefix: on disk, in memory, compiled on demand.

Files live beside the tool entries in the registry cache, under the schema's key and a tag naming what
the block depends on (model fingerprint, prefix anchor, V layout)::

    tools/<schema key>.<model>-<anchor>-<r|t>.atb

so an unchanged schema is never compiled twice, another model or prompt gets its own files, and a
corrupted file (checksum) is deleted and compiled again. The system prefix itself has a block too
(``system-prefix.<tag>.atb``, compiled at position 0), so a restart does not prefill it. Loaded blocks
live in the block arena (``block_arena.py``: page-aligned, LRU, safe across threads); a block evicted
from it is read from its file again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from .atb import Block, BlockCorrupt, BlockError, BlockHeader, anchor_of, read_block, write_block
from .block_arena import BlockArena, key_of
from .cache import RegistryCache
from .engine import Cursor, EngineError, LlamaEngine
from .kv_splice import RepairPolicy, Splicer, SpliceReport, block_of_sequence, compile_block

logger = logging.getLogger(__name__)


class SchemaBlocks:
    def __init__(
        self,
        engine: LlamaEngine,
        prefix: list[int],
        cache: RegistryCache,
        *,
        policy: RepairPolicy | None = None,
        arena_slots: int = 32,
        slot_bytes: int = 8 * 1024 * 1024,
    ) -> None:
        self.engine = engine
        self.prefix = list(prefix)
        self.anchor = anchor_of(self.prefix)
        self.cache = cache
        self.splicer = Splicer(engine, policy)
        self.arena = BlockArena(arena_slots, slot_bytes)
        self._slot_bytes = int(self.arena.stats()["slot_bytes"])  # rounded up to pages by the arena
        self._headers: dict[str, tuple[BlockHeader, np.ndarray]] = {}  # what the arena holds the K/V of
        geometry = engine.geometry()
        # cache_survey.py reads this name back to tell blocks of an earlier system prompt
        self.tag = f"{geometry.fingerprint.hex()[:12]}-{self.anchor.hex()[:8]}-{'t' if geometry.v_trans else 'r'}"

    def path(self, key: str) -> Path:
        return self.cache.root / "tools" / f"{key}.{self.tag}.atb"

    def get(self, key: str) -> Block | None:
        """The block of ``key`` if compiled (arena, then disk), else None. From the arena it comes as a
        private copy (``owned``: the splice may rotate its keys in place)."""
        known = self._headers.get(key)
        if known is not None:
            header, tokens = known
            g, n = header.geometry, header.n_tokens
            buffer = np.empty(2 * g.n_layer * n * g.n_embd_k, dtype=np.float16)
            if self.arena.get_into(key_of(key), buffer) == buffer.nbytes:
                half = buffer.size // 2
                k = buffer[:half].reshape(g.n_layer, n, g.n_embd_k)
                v_shape = (g.n_layer, g.n_embd_k, n) if g.v_trans else (g.n_layer, n, g.n_embd_k)
                return Block(header, tokens, k, buffer[half:].reshape(v_shape), owned=True)
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
        data = np.concatenate([np.asarray(block.k).ravel(), np.asarray(block.v).ravel()])
        if data.nbytes <= self._slot_bytes:  # larger blocks are read from their file
            self.arena.put(key_of(key), data)
            self._headers[key] = (block.header, np.array(block.tokens))

    def compile(self, key: str, tokens: list[int]) -> Block:
        block = compile_block(self.engine, self.prefix, tokens)
        self._save(key, block)
        return block

    def _save(self, key: str, block: Block) -> None:
        try:
            write_block(self.path(key), block)
        except OSError as exc:  # a read-only or full disk must never break serving
            logger.warning("block cache: cannot write %s: %s", self.path(key), exc)
        self._remember(key, block)

    def has(self, key: str) -> bool:
        """Whether ``key`` has a block (loaded, or on disk), without reading it: callers ask before they
        tokenize a schema, which for a whole registry costs more than the look-up."""
        return key in self._headers or self.path(key).exists()

    def compile_missing(
        self, items: Iterable[tuple[str, list[int]]], progress: Callable[[int, int], None] | None = None
    ) -> int:
        """Compile every ``(key, tokens)`` without a block yet; returns how many were compiled."""
        todo = [(key, tokens) for key, tokens in items if not self.has(key)]
        for done, (key, tokens) in enumerate(todo, 1):
            self.compile(key, tokens)
            if progress:
                progress(done, len(todo))
        return len(todo)

    def warm_prefix(self) -> SpliceReport:
        """Make the system prefix warm in the engine's arena from its own compiled block.

        The prefix is the longest text every turn shares (hundreds of tokens: seconds of prefill on two
        cores, the most of a one-shot ``ask``). Compiled at position 0 after nothing, its block is exact
        where it is spliced, at position 0, so the cells are the ones a prefill would compute, bit for
        bit. The first start prefills it and keeps the block; later starts load it."""
        key, nothing = "system-prefix", anchor_of([])  # the tag names the prefix
        block = self.get(key)
        with self.engine.lock:
            cursor = self.engine.cursor([], logits=False)  # an empty work sequence at position 0
            report = self.splicer.place(cursor, block, self.prefix, nothing)
            self.engine.arena.remember(self.prefix, cursor.seq)
            if block is None:
                try:
                    self._save(key, block_of_sequence(self.engine, cursor.seq, [], self.prefix))
                except (EngineError, ValueError) as exc:  # the prefix is warm all the same; the next start prefills
                    logger.warning("block cache: cannot keep the system prefix: %s", exc)
        return report

    def place(
        self, cursor: Cursor, key: str, tokens: list[int], then: list[int] | None = None, whole: list[int] | None = None
    ) -> SpliceReport:
        """Put the schema text (and ``then``) at the cursor: spliced when a compatible block exists and is
        cheaper, else prefilled in the same batches (``Splicer.place``; ``whole``: the text the block is
        compiled from, when ``tokens`` is its head)."""
        return self.splicer.place(cursor, self.get(key), tokens, self.anchor, then, whole)
