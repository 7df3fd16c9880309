"""Statistics shared by the benchmarks: the package's own (one implementation, tested with it)."""

from nexus_gateway.evaluation import bootstrap_median_ci, wilson

__all__ = ["bootstrap_median_ci", "wilson"]
