"""Splice a compiled schema block into a live sequence instead of prefilling it.

A block is compiled once (:func:`compile_block`): the fixed system prefix is warm in the engine, the
tool's full-schema text is fed after it as its own batch, and the new cells' K/V rows are kept with the
anchor position ``m0 = len(prefix)``. A call that needs the schema at cursor ``n_past`` then:

1. re-rotates a copy of the block's keys by ``Δpos = n_past − m0`` (``rope.rerotate``: the block's own
   rows only; ``llama_memory_seq_add`` would make llama.cpp re-rotate every cell of the cache on the next
   decode),
2. loads them into a scratch sequence through llama.cpp's sequence-state API (``kv_state.build`` writes
   the blob for the target positions, in the live V layout) and shares those cells into the work
   sequence with ``seq_cp`` (a unified cache: no copy),
3. repairs the seam: the last ``⌈S · R/100⌉`` block tokens are dropped and decoded again, so they attend
   to what really precedes the block (:class:`RepairPolicy`).

At Δpos 0 after the same prefix the block's rows are exactly the rows a prefill would write (tested to
the bit), so no repair is needed. Deeper, the block's values were computed without the tokens now
between the anchor and the block; the repair budget grows with that depth.

:class:`SpliceCostModel` decides splice or prefill per call from measured rates, so a call is never
slower than prefilling; the decision and its reason go into the trace.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from . import kv_state, rope
from .atb import Block, BlockHeader, anchor_of, check_compatible, leading
from .engine import SCRATCH_SEQ, Cursor, EngineError, LlamaEngine
from .kv_state import SequenceState

# Splice only when predicted at least 10% cheaper: both predictions are noisy, and at equal cost the
# splice has nothing to offer (measured: a splice that repairs most of its block dipped to 0.97×).
PREFILL_MARGIN = 0.9


@dataclass(frozen=True)
class RepairPolicy:
    """Depth-adaptive suffix recompute: ``R(d) = R_base`` for ``d ≤ M``, else
    ``R_base + (d − M)/(M(K − 1)) · (100 − R_base)``, clamped to 100%.

    ``d`` is the splice depth measured from the compile anchor (``Δpos``), not from position 0: at Δpos 0
    the block is exact whatever the prefix length, and :meth:`tokens` returns 0 there.

    ``approximate`` allows splicing deeper than the anchor with a partial repair. It is off by default
    because no partial budget brought the next-token distribution back to a prefill's (KL 0.01–0.08 nats
    against a noise floor of 5 × 10⁻⁴, docs/kv-splice.md): the gateway trades no correctness for speed,
    so deeper than the anchor :meth:`Splicer.place` prefills.
    """

    r_base: float = 5.0
    m: int = 256
    k: float = 4.0
    approximate: bool = False

    def percent(self, depth: int) -> float:
        if depth <= self.m:
            return self.r_base
        return min(100.0, self.r_base + (depth - self.m) / (self.m * (self.k - 1)) * (100.0 - self.r_base))

    def tokens(self, depth: int, size: int) -> int:
        if depth == 0:
            return 0
        return min(size, math.ceil(size * self.percent(depth) / 100.0))


@dataclass
class SpliceCostModel:
    """Predicts both paths' cost from rates measured on this machine (exponential moving averages).

    ``prefill_ms_per_token`` comes from every prefill the engine does for a block's text or a repair;
    ``load_ms_per_mb`` from every splice's rotate + state load. Until both are measured, splice
    (the first few calls measure them).
    """

    prefill_ms_per_token: float | None = None
    load_ms_per_mb: float | None = None
    alpha: float = 0.3

    def observe_prefill(self, tokens: int, ms: float) -> None:
        if tokens >= 8:
            self.prefill_ms_per_token = self._mix(self.prefill_ms_per_token, ms / tokens)

    def observe_load(self, megabytes: float, ms: float) -> None:
        if megabytes > 0:
            self.load_ms_per_mb = self._mix(self.load_ms_per_mb, ms / megabytes)

    def _mix(self, old: float | None, new: float) -> float:
        return new if old is None else (1 - self.alpha) * old + self.alpha * new

    def predict(self, block: Block, repair_tokens: int) -> tuple[float | None, float | None]:
        """(splice ms, prefill ms), None where not measured yet."""
        if self.prefill_ms_per_token is None or self.load_ms_per_mb is None:
            return None, None
        prefill = self.prefill_ms_per_token * block.header.n_tokens
        splice = self.load_ms_per_mb * block.nbytes / 1e6 + self.prefill_ms_per_token * repair_tokens
        return splice, prefill


@dataclass
class SpliceReport:
    """What happened, for the call's trace."""

    path: str  # "splice" or "prefill"
    reason: str
    dpos: int = 0
    repaired: int = 0
    ms: float = 0.0
    predicted: dict[str, float | None] = field(default_factory=dict)

    def trace(self) -> dict[str, object]:
        out: dict[str, object] = {"path": self.path, "reason": self.reason, "ms": round(self.ms, 1)}
        if self.path == "splice":
            out.update(dpos=self.dpos, repaired_tokens=self.repaired)
        return out


def compile_block(engine: LlamaEngine, prefix: list[int], tokens: list[int]) -> Block:
    """Prefill ``tokens`` after the warm ``prefix`` (their own batch, as a live prompt feeds them) and keep
    their K/V rows: a block anchored at ``m0 = len(prefix)``."""
    reason = engine.geometry().why_not_spliceable()
    if reason:
        raise EngineError(f"cannot compile blocks for this model: {reason}")
    with engine.lock:
        cursor = engine.cursor(prefix, logits=False)
        cursor.feed(tokens)
        try:
            return block_of_sequence(engine, cursor.seq, prefix, tokens)
        finally:
            engine.drop(cursor.seq)


def block_of_sequence(engine: LlamaEngine, seq: int, prefix: list[int], tokens: list[int]) -> Block:
    """The K/V rows of ``tokens`` in ``seq``, which holds ``prefix`` and then ``tokens``, as a block
    anchored at ``m0 = len(prefix)``."""
    geometry = engine.geometry()
    state = kv_state.parse(engine.state_get(seq))
    m0 = len(prefix)
    if state is None or not np.array_equal(state.positions[m0:], np.arange(m0, m0 + len(tokens))):
        raise EngineError("the work sequence does not hold the block where it was fed")
    if state.v.shape[1 if state.v_trans else 2] != geometry.n_embd_k:
        raise EngineError("V rows differ in width from K rows; blocks need n_embd_v == n_embd_k")
    v = state.v[:, :, m0:] if state.v_trans else state.v[:, m0:]
    header = BlockHeader(geometry, anchor_of(prefix), m0, len(tokens))
    return Block(header, np.asarray(tokens, dtype=np.int32), state.k[:, m0:].copy(), np.ascontiguousarray(v))


class Splicer:
    """Puts blocks into a cursor's sequence, or prefills them when that is cheaper or not possible."""

    def __init__(self, engine: LlamaEngine, policy: RepairPolicy | None = None) -> None:
        self.engine = engine
        self.policy = policy or RepairPolicy()
        self.costs = SpliceCostModel()

    def place(
        self,
        cursor: Cursor,
        block: Block | None,
        tokens: list[int],
        anchor: bytes,
        then: list[int] | None = None,
        whole: list[int] | None = None,
    ) -> SpliceReport:
        """Put ``tokens`` (the schema text) and ``then`` (what follows it) at the cursor: the schema spliced
        from ``block`` (which holds this text, or begins with it: ``whole``, the text its block is
        compiled from) when it is compatible and predicted cheaper, else prefilled. Either way the
        cursor ends after ``then``, with its logits.

        Every path feeds the same batches: the schema text in one, as its block was compiled, then
        ``then`` in another. Batches of other lengths round differently (float16 K/V, the last partial
        tile of a matrix product), and near-ties of greedy decoding tip: when the choice between the
        paths follows measured timings, the same request on a busy machine got other arguments
        (session 49). The same split gives the cells bit for bit, whichever path runs."""
        then = then or []
        started = time.perf_counter()
        geometry = self.engine.geometry()
        # the text a prefill computes: the block's whole text when ``tokens`` is its head and ``then`` follows
        whole = whole if whole and then and whole[: len(tokens)] == tokens else tokens
        reason = geometry.why_not_spliceable()
        if block is None:
            reason = reason or "no compiled block"
        elif not reason:
            try:
                check_compatible(block.header, geometry, anchor)
            except Exception as exc:
                reason = str(exc)
            if not reason and np.array_equal(block.tokens[: len(tokens)], tokens) and tokens:
                if then and len(tokens) < block.header.n_tokens:
                    whole = [int(t) for t in block.tokens]
                block = leading(block, len(tokens))  # the whole block, or the head that is this text
            elif not reason:
                reason = "the block holds other text"
        if reason or block is None:
            return self._prefill(cursor, tokens, whole, then, reason or "", started)
        dpos = cursor.position - block.header.m0
        if dpos < 0:
            return self._prefill(cursor, tokens, whole, then, "the cursor is before the block's anchor", started)
        if dpos > 0 and not self.policy.approximate:
            reason = f"Δpos {dpos} > 0: a partial repair is not exact"
            return self._prefill(cursor, tokens, whole, then, reason, started)
        repair = self.policy.tokens(dpos, len(tokens))
        if repair >= len(tokens):  # the repair would recompute the whole block: that is a prefill
            return self._prefill(cursor, tokens, whole, then, f"repair of the whole block at Δpos {dpos}", started)
        splice_ms, prefill_ms = self.costs.predict(block, repair)
        predicted = {"splice_ms": splice_ms, "prefill_ms": prefill_ms}
        if splice_ms is not None and prefill_ms is not None and splice_ms >= PREFILL_MARGIN * prefill_ms:
            report = self._prefill(cursor, tokens, whole, then, "prefill predicted cheaper", started)
            report.predicted = predicted
            return report
        self.splice(cursor, block, repair)
        if then:
            cursor.feed(then)
        return SpliceReport("splice", "block", dpos, repair, (time.perf_counter() - started) * 1000, predicted)

    def _prefill(
        self, cursor: Cursor, tokens: list[int], whole: list[int], then: list[int], reason: str, started: float
    ) -> SpliceReport:
        """Prefill ``tokens``, then ``then``, in the batches a splice leaves. ``whole``: the block's text
        that ``tokens`` begins, computed in full and cut back to ``tokens``, so that their cells are
        the block's head, bit for bit (a couple of tokens more to compute)."""
        if whole:
            logits = cursor.feed(whole)
            if len(whole) > len(tokens):
                cursor.rewind(len(whole) - len(tokens), logits)  # ``then`` follows at once and brings its own
        if then:
            cursor.feed(then)
        ms = (time.perf_counter() - started) * 1000
        self.costs.observe_prefill(len(whole) + len(then), ms)
        return SpliceReport("prefill", reason, ms=ms)

    def splice(
        self,
        cursor: Cursor,
        block: Block,
        repair: int,
        *,
        seam: int = 0,
        scattered: list[int] | None = None,
    ) -> None:
        """Load ``block`` at the cursor, re-anchored, then re-decode its last ``repair`` tokens.

        For the benchmark's comparisons: ``seam`` re-decodes the first tokens instead (where the block
        meets text it was not compiled after), ``scattered`` the given block-relative token indices."""
        engine = self.engine
        n_past = cursor.position
        size = block.header.n_tokens
        tokens = [int(t) for t in block.tokens]
        with engine.lock:
            started = time.perf_counter()
            keys = block.k if block.owned else np.array(block.k, dtype=np.float16, copy=True)
            rope.rerotate(keys, n_past - block.header.m0, engine.geometry())
            cells = np.arange(n_past, n_past + size, dtype=np.int32)
            state = SequenceState(cells, keys, np.asarray(block.v), block.header.geometry.v_trans)
            engine.state_set(SCRATCH_SEQ, kv_state.build(SCRATCH_SEQ, state))
            engine.share(SCRATCH_SEQ, cursor.seq, n_past, n_past + size)
            engine.drop(SCRATCH_SEQ)
            self.costs.observe_load(block.nbytes / 1e6, (time.perf_counter() - started) * 1000)
            cursor.position = n_past + size
            cursor.logits = None
            if seam:
                self._redecode(cursor.seq, n_past, list(range(seam)), tokens, contiguous=True)
            if scattered:
                self._redecode(cursor.seq, n_past, sorted(scattered), tokens, contiguous=False)
            if repair:
                cursor.position = n_past + size - repair
                engine.drop(cursor.seq, cursor.position)
                started = time.perf_counter()
                cursor.feed(tokens[size - repair :])
                self.costs.observe_prefill(repair, (time.perf_counter() - started) * 1000)

    def _redecode(self, seq: int, n_past: int, indices: list[int], tokens: list[int], contiguous: bool) -> None:
        """Recompute block tokens in the middle of ``seq``. llama.cpp wants a batch to continue its
        sequence, so they are decoded in the scratch sequence over a shared view of everything before
        them, then swapped in (one batch when contiguous, one token at a time otherwise)."""
        engine = self.engine
        groups = [indices] if contiguous else [[i] for i in indices]
        for group in groups:
            at = n_past + group[0]
            engine.drop(SCRATCH_SEQ)
            engine.share(seq, SCRATCH_SEQ, 0, at)
            engine.decode_at([tokens[i] for i in group], SCRATCH_SEQ, [n_past + i for i in group], want_logits=False)
            engine.drop(seq, at, n_past + group[-1] + 1)
            engine.share(SCRATCH_SEQ, seq, at, n_past + group[-1] + 1)
        engine.drop(SCRATCH_SEQ)
