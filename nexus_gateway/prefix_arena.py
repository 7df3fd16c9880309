"""The radix prefix arena: warm prompts kept in a fixed pool of sequence slots, reused by longest common
prefix.

Every prompt the engine prefills is remembered in one of ``slots`` llama.cpp sequences. The next prompt
starts from the slot sharing its longest exact-token prefix: those cells are shared into the work
sequence with ``seq_cp`` (a unified KV cache shares cells, nothing is recomputed) and only the rest is
prefilled. A session's next turn repeats the system prefix and the window of its earlier turns, so it
prefills little more than its new line and request. Like SGLang's radix cache, but flat: with 32 slots a
vectorised comparison against every slot costs microseconds, less than maintaining a tree.

Slot bookkeeping is preallocated (a ``[slots, n_ctx]`` token matrix, lengths, last-use ticks): the hot
path allocates no KV sequences and no Python lists. A prompt goes to the slot it extends when that slot
is a prefix of it, otherwise to the least recently used slot. When the KV cache runs out of cells the
engine asks :meth:`evict_lru` for room.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


class PrefixArena:
    def __init__(
        self,
        first_seq: int,
        slots: int,
        n_ctx: int,
        share: Callable[[int, int, int, int], None],
        drop: Callable[[int, int, int], None],
    ) -> None:
        self.first_seq = first_seq
        self.slots = slots
        self._tokens = np.full((slots, n_ctx), -1, dtype=np.int32)
        self._lengths = np.zeros(slots, dtype=np.int64)
        self._used = np.zeros(slots, dtype=np.int64)
        self._tick = 0
        self._share = share  # (source seq, target seq, start, end)
        self._drop = drop  # (seq, start, end)
        self.lookups = 0
        self.hit_tokens = 0
        self.total_tokens = 0

    def seq(self, slot: int) -> int:
        return self.first_seq + slot

    def longest_prefix(self, tokens: Sequence[int] | np.ndarray) -> tuple[int, int]:
        """(slot, length) of the longest common prefix of ``tokens`` with any slot; length 0 if none."""
        common = self._common_lengths(tokens)
        slot = int(common.argmax())
        return slot, int(common[slot])

    def _common_lengths(self, tokens: Sequence[int] | np.ndarray) -> np.ndarray:
        """Per slot, the length of its common prefix with ``tokens``."""
        query = np.asarray(tokens, dtype=np.int32)
        n = min(len(query), self._tokens.shape[1])
        if n == 0:
            return np.zeros(self.slots, dtype=np.int64)
        same = self._tokens[:, :n] == query[:n]
        # the first mismatch per slot (n where the whole query matches), capped by the slot's length
        common = np.where(same.all(axis=1), n, same.argmin(axis=1))
        return np.minimum(common, self._lengths)

    def attach(self, tokens: Sequence[int] | np.ndarray, work_seq: int) -> int:
        """Share the longest warm prefix of ``tokens`` into ``work_seq`` (emptied first); returns its length."""
        self._drop(work_seq, -1, -1)
        slot, length = self.longest_prefix(tokens)
        self.lookups += 1
        self.total_tokens += len(tokens)
        if length:
            self._share(self.seq(slot), work_seq, 0, length)
            self._touch(slot)
            self.hit_tokens += length
        return length

    def remember(self, tokens: Sequence[int] | np.ndarray, work_seq: int) -> None:
        """Keep the first ``len(tokens)`` cells of ``work_seq`` (which hold ``tokens``) warm in a slot."""
        query = np.asarray(tokens, dtype=np.int32)
        n = len(query)
        if n == 0 or n > self._tokens.shape[1]:
            return
        slot, length = self.longest_prefix(query)
        if length == n and self._lengths[slot] >= n:
            self._touch(slot)  # already warm
            return
        if not (length and length == self._lengths[slot]):
            slot = int(self._used.argmin())  # no slot that this prompt extends: the least recently used
            length = 0
        seq = self.seq(slot)
        self._drop(seq, length, -1)
        self._share(work_seq, seq, length, n)
        self._tokens[slot, length:n] = query[length:]
        self._lengths[slot] = n
        self._touch(slot)

    def forget_after(self, tokens: Sequence[int] | np.ndarray) -> None:
        """Cut every slot back to its common prefix with ``tokens``: what comes next is computed again, as
        on a first visit (for side-by-side benchmarks, whose second run of a prompt must not find it warm)."""
        for slot, keep in enumerate(self._common_lengths(tokens).tolist()):
            length = int(self._lengths[slot])
            if keep < length:
                self._drop(self.seq(slot), keep, -1)
                self._tokens[slot, keep:length] = -1
                self._lengths[slot] = keep

    def evict_lru(self, keep: int | None = None) -> bool:
        """Free the least recently used non-empty slot (not ``keep``); False when there is none."""
        order = np.argsort(self._used)
        for slot in order:
            if self._lengths[slot] and slot != keep:
                self._drop(self.seq(int(slot)), -1, -1)
                self._lengths[slot] = 0
                self._used[slot] = 0
                return True
        return False

    def _touch(self, slot: int) -> None:
        self._tick += 1
        self._used[slot] = self._tick

    @property
    def hit_rate(self) -> float:
        """Share of prompt tokens served warm since start."""
        return self.hit_tokens / self.total_tokens if self.total_tokens else 0.0
