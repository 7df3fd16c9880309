"""Statistics shared by the benchmarks: Wilson intervals for proportions, bootstrap for medians."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (well behaved near 0 and 1, unlike the normal one)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_median_ci(
    values: Sequence[float] | np.ndarray, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the median."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    medians = np.median(rng.choice(data, size=(resamples, data.size), replace=True), axis=1)
    low, high = np.percentile(medians, [2.5, 97.5])
    return (float(low), float(high))
