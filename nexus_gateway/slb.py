"""The semantic lookaside buffer (SLB): every tool vector, INT8, in one contiguous aligned matrix.

Each row is quantised symmetrically with its own scale (``row ≈ scale · int8``), the query too, so a
score is ``scale_row · scale_query · Σ q_i·r_i`` with the sum done in exact integer arithmetic. That
makes the C kernels (``nexus_gateway._slb``: AVX-512-VNNI, AVX2, NEON, scalar; chosen at run time)
and the numpy fallback agree to the bit on every score, hence on every ranking. ``NEXUS_PURE_PYTHON=1``
forces the fallback.

Rows are added and removed per upstream (``set_rows``/``remove``) without rebuilding the rest; the
matrix grows by doubling and keeps 64-byte alignment and a 64-byte row stride.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

try:  # pragma: no cover - depends on the build
    if os.environ.get("NEXUS_PURE_PYTHON"):
        raise ImportError("NEXUS_PURE_PYTHON is set")
    from . import _slb as _native  # type: ignore[attr-defined]
except ImportError:
    _native = None

ALIGN = 64


def backend() -> str:
    """Which scan runs: the native kernel's name (e.g. ``avx2``) or ``numpy``."""
    return str(_native.kernel()) if _native is not None else "numpy"


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row symmetric INT8 quantisation: returns (int8 rows, float32 scales)."""
    vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    peak = np.abs(vectors).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    return codes, scales


def _aligned_empty(rows: int, width: int) -> np.ndarray:
    raw = np.empty(rows * width + ALIGN, dtype=np.int8)
    offset = (-raw.ctypes.data) % ALIGN
    return raw[offset : offset + rows * width].reshape(rows, width)


def scan_numpy(matrix: np.ndarray, scales: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (indices, scores) by exact int32 dot products, ties broken by lower index."""
    dots = matrix.astype(np.int32) @ query.astype(np.int32)
    scores = dots.astype(np.float32) * scales
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    order = np.lexsort((top, -scores[top]))
    top = top[order]
    return top.astype(np.int64), scores[top]


class SemanticLookasideBuffer:
    """INT8 tool vectors with per-row scales, keyed by tool id."""

    def __init__(self, dimension: int, capacity: int = 256) -> None:
        self.dimension = dimension
        self.width = -(-dimension // ALIGN) * ALIGN  # row stride, padded with zeros
        self._matrix = _aligned_empty(max(capacity, 1), self.width)
        self._matrix[:] = 0
        self._scales = np.zeros(max(capacity, 1), dtype=np.float32)
        self.ids: list[str] = []
        self._row_of: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def matrix(self) -> np.ndarray:
        return self._matrix[: len(self.ids)]

    @property
    def scales(self) -> np.ndarray:
        return self._scales[: len(self.ids)]

    def _grow(self, rows: int) -> None:
        if rows <= len(self._scales):
            return
        capacity = max(rows, 2 * len(self._scales))
        matrix = _aligned_empty(capacity, self.width)
        matrix[:] = 0
        matrix[: len(self.ids)] = self.matrix
        scales = np.zeros(capacity, dtype=np.float32)
        scales[: len(self.ids)] = self.scales
        self._matrix, self._scales = matrix, scales

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Add or replace rows (float vectors are quantised here)."""
        if not len(ids):
            return
        codes, scales = quantize(vectors)
        new = [i for i in ids if i not in self._row_of]
        self._grow(len(self.ids) + len(new))
        for tool_id, row_codes, scale in zip(ids, codes, scales, strict=True):
            row = self._row_of.get(tool_id)
            if row is None:
                row = len(self.ids)
                self.ids.append(tool_id)
                self._row_of[tool_id] = row
            self._matrix[row, : self.dimension] = row_codes
            self._scales[row] = scale

    def remove(self, ids: Sequence[str]) -> None:
        """Remove rows by moving the last row into each hole (O(1) per row, order not kept)."""
        for tool_id in ids:
            row = self._row_of.pop(tool_id, None)
            if row is None:
                continue
            last = len(self.ids) - 1
            if row != last:
                moved = self.ids[last]
                self._matrix[row] = self._matrix[last]
                self._scales[row] = self._scales[last]
                self.ids[row] = moved
                self._row_of[moved] = row
            self.ids.pop()
            self._matrix[last] = 0

    def quantize_query(self, vector: np.ndarray) -> tuple[np.ndarray, float]:
        codes, scales = quantize(vector)
        padded = np.zeros(self.width, dtype=np.int8)
        padded[: self.dimension] = codes[0]
        return padded, float(scales[0])

    def search(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (row indices, approximate cosine scores) for a float query vector."""
        query, query_scale = self.quantize_query(vector)
        if _native is not None and len(self.ids):
            raw_rows, raw_scores = _native.topk(self.matrix, self.scales, query, int(k))
            rows = np.frombuffer(raw_rows, dtype=np.int64)
            scores = np.frombuffer(raw_scores, dtype=np.float32)
        else:
            rows, scores = scan_numpy(self.matrix, self.scales, query, k)
        return rows, scores * np.float32(query_scale)

    def scores(self, vector: np.ndarray) -> np.ndarray:
        """Every row's approximate cosine (used where a full score vector is fused with BM25)."""
        query, query_scale = self.quantize_query(vector)
        if _native is not None and len(self.ids):
            dots = np.frombuffer(_native.scan(self.matrix, self.scales, query), dtype=np.float32)
        else:
            dots = (self.matrix.astype(np.int32) @ query.astype(np.int32)).astype(np.float32) * self.scales
        return dots * np.float32(query_scale)
