"""The SLB: every native kernel and the numpy fallback give the same scores and rankings."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nexus_gateway import slb
from nexus_gateway.slb import SemanticLookasideBuffer, quantize, scan_numpy


def random_unit(rows: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_native_extension_is_built() -> None:
    """pip install builds the C core; CI must not silently test only the fallback."""
    import os

    if os.environ.get("NEXUS_PURE_PYTHON"):
        assert slb.backend() == "numpy"
    else:
        assert slb.backend() in ("vnni", "avx2", "neon", "serial")


@pytest.mark.parametrize(("rows", "dim"), [(1, 384), (7, 384), (250, 384), (1317, 384), (9, 96), (9, 100)])
def test_every_kernel_matches_numpy(rows: int, dim: int) -> None:
    """Row counts around the kernels' blocks of four and 256; widths the blocked kernels decline."""
    from nexus_gateway import _slb as native  # type: ignore[attr-defined]  # the build must have produced it

    codes, scales = quantize(random_unit(rows, dim))
    query = quantize(random_unit(1, dim, seed=1))[0][0]
    assert_every_kernel_matches_numpy(native, codes, scales, query, 10)


def assert_every_kernel_matches_numpy(native: Any, codes: Any, scales: Any, query: Any, k: int) -> None:
    """Each kernel this CPU runs: the full scores and the top-k rows exactly numpy's."""
    reference_scores = (codes.astype(np.int32) @ query.astype(np.int32)).astype(np.float32) * scales
    reference_rows, _ = scan_numpy(codes, scales, query, k)
    original = native.kernel()
    try:
        for kernel in native.available_kernels():
            native.set_kernel(kernel)
            scores = np.frombuffer(native.scan(codes, scales, query), dtype=np.float32)
            assert np.array_equal(scores, reference_scores), kernel
            top_rows, _ = native.topk(codes, scales, query, k)
            assert np.array_equal(np.frombuffer(top_rows, dtype=np.int64), reference_rows), kernel
    finally:
        native.set_kernel(original)


def test_concurrent_scans_agree_with_a_serial_one() -> None:
    """A large scan runs without the GIL; four threads at once must neither crash nor mix results
    (an earlier version built its result objects before taking the GIL back)."""
    from concurrent.futures import ThreadPoolExecutor

    from nexus_gateway import _slb as native  # type: ignore[attr-defined]

    codes, scales = quantize(random_unit(4000))
    queries = [quantize(random_unit(1, seed=seed))[0][0] for seed in range(8)]
    serial = [native.topk(codes, scales, query, 10) for query in queries]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(50):
            assert list(pool.map(lambda query: native.topk(codes, scales, query, 10), queries)) == serial


def test_a_scan_split_over_threads_selects_what_one_thread_does() -> None:
    """A large top-k runs over several threads, each with its own heap; ties that straddle the split
    and any thread count must give the one-thread (and numpy) answer."""
    from nexus_gateway import _slb as native  # type: ignore[attr-defined]

    codes, scales = quantize(random_unit(12_000))
    codes[5_990:6_010] = codes[17]  # equal scores on both sides of a two-way split
    scales[5_990:6_010] = scales[17]
    query = codes[17].copy()
    reference_rows, reference_scores = scan_numpy(codes, scales, query, 25)
    assert native.threads_for(1_000, 384) == 1 and native.threads_for(100_000, 384) >= 1
    try:
        for threads in (1, 2, 3, 4):
            native.set_threads(threads)
            rows, scores = native.topk(codes, scales, query, 25)
            assert np.array_equal(np.frombuffer(rows, dtype=np.int64), reference_rows), threads
            assert np.array_equal(np.frombuffer(scores, dtype=np.float32), reference_scores), threads
        with pytest.raises(ValueError, match="threads must be 0"):
            native.set_threads(9)
    finally:
        native.set_threads(0)


def test_a_matrix_that_streams_from_memory_scans_the_same_with_or_without_prefetching() -> None:
    """From 16 MB the kernels prefetch rows ahead of the ones they read, into the next thread's range
    and past the matrix's end; the scores and the top-k must stay numpy's, every kernel, both ways."""
    from nexus_gateway import _slb as native  # type: ignore[attr-defined]

    codes, scales = quantize(random_unit(44_000))  # 16.9 MB at 384 dimensions
    query = quantize(random_unit(1, seed=3))[0][0]
    try:
        for prefetch in (True, False):
            native.set_prefetch(prefetch)
            assert_every_kernel_matches_numpy(native, codes, scales, query, 32)
    finally:
        native.set_prefetch(True)


def test_ties_go_to_the_lower_row_in_both_paths() -> None:
    codes = np.ones((6, 64), dtype=np.int8)
    scales = np.ones(6, dtype=np.float32)
    query = np.ones(64, dtype=np.int8)
    assert scan_numpy(codes, scales, query, 3)[0].tolist() == [0, 1, 2]
    if slb._native is not None:
        assert np.frombuffer(slb._native.topk(codes, scales, query, 3)[0], dtype=np.int64).tolist() == [0, 1, 2]


def test_buffer_is_aligned_and_incremental() -> None:
    vectors = random_unit(300)
    buffer = SemanticLookasideBuffer(384, capacity=4)
    buffer.add([f"t{i}" for i in range(300)], vectors)
    assert buffer.matrix.ctypes.data % 64 == 0 and buffer.matrix.strides[0] % 64 == 0
    rows, scores = buffer.search(vectors[123], 3)
    assert buffer.ids[rows[0]] == "t123" and scores[0] > 0.98
    buffer.remove(["t123", "t5"])
    assert len(buffer) == 298 and "t123" not in buffer.ids
    rows, _ = buffer.search(vectors[123], 3)
    assert "t123" not in [buffer.ids[r] for r in rows]
    buffer.add(["t299"], vectors[7:8])  # replace in place
    rows, _ = buffer.search(vectors[7], 2)
    assert {buffer.ids[r] for r in rows} == {"t7", "t299"}
    # The full score vector agrees with top-k.
    full = buffer.scores(vectors[42])
    assert buffer.ids[int(np.argmax(full))] == "t42"
