"""Bootstrap intervals for medians, shared by the benchmarks (Wilson intervals: ``nexus_gateway.evaluation.wilson``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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
