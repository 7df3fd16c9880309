"""The set-up every routing experiment here starts from: the shipped router over shared registry files.

Load the registry files, embed their tools through the registry cache (so a second script never
embeds them again), take the calibration ``calibrate`` stored for exactly these files, and build the
evaluation whose ``router(registry)`` is the gateway's router over any subset. Each script in this
folder stays runnable alone (``python bench/experiments/<script>.py``): Python puts the script's own
folder first on ``sys.path``, so ``from shipped import shipped`` needs no package.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from nexus_gateway.cache import RegistryCache
from nexus_gateway.calibration import load_calibration
from nexus_gateway.embedder import Embedder
from nexus_gateway.evaluation import RoutingEvaluation, embed_tools, load_registries
from nexus_gateway.routing import Calibration
from nexus_gateway.vectors import VectorStore

S = Path(__file__).resolve().parents[3] / "shared" / "data"


@dataclass
class Shipped:
    """One set of registry files as the gateway would route over them."""

    paths: list[str]
    tools: list[Any]
    embedder: Embedder
    cache: RegistryCache
    vectors: np.ndarray
    calibration: Calibration
    evaluation: RoutingEvaluation

    def whole_router(self) -> Any:
        """The router over every tool of the files (no distractor protocol)."""
        return self.evaluation.router(list(range(len(self.tools))))


def shipped(
    files: list[str],
    embedder: Embedder | None = None,
    cache: RegistryCache | None = None,
    calibrated: bool = True,
    **overrides: Any,
) -> Shipped:
    """``files`` are names under ``shared/data/registries``; ``overrides`` replace calibration fields
    (``floor=-9.0`` to never abstain, a weight to try another value); ``calibrated=False`` starts from
    the defaults instead of the stored calibration."""
    paths = [str(S / "registries" / f) for f in files]
    tools = load_registries(paths)
    embedder = embedder or Embedder()
    cache = cache or RegistryCache()
    vectors = embed_tools(tools, embedder, VectorStore(cache, embedder.model_tag))
    calibration = load_calibration(cache, paths, embedder.model_tag) if calibrated else Calibration()
    calibration = replace(calibration, **overrides)
    evaluation = RoutingEvaluation(tools, embedder, vectors, calibration, None)
    return Shipped(paths, tools, embedder, cache, vectors, calibration, evaluation)
