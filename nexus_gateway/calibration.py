"""Where calibrations live: beside the registry cache, keyed by the registry files and the embedder.

``calibration/<sha256 of the registry files' bytes + model tag>.json`` for each calibrated registry. A
calibration belongs to its registry: nothing falls back to another registry's thresholds (a floor fitted
on BFCL abstains on the wrong things over GitHub). The gateway uses one only when the config names it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .cache import RegistryCache
from .routing import Calibration


def registry_fingerprint(paths: Sequence[str | Path], model_tag: str) -> str:
    digest = hashlib.sha256(model_tag.encode())
    for path in paths:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def calibration_path(cache: RegistryCache, paths: Sequence[str | Path], model_tag: str) -> Path:
    return cache.root / "calibration" / f"{registry_fingerprint(paths, model_tag)}.json"


def save_calibration(
    cache: RegistryCache,
    paths: Sequence[str | Path],
    model_tag: str,
    calibration: Calibration,
    evidence: dict[str, Any] | None = None,
) -> Path:
    """``evidence``: what a decision rests on, for whoever reads the file (the judge's fixes and breaks)."""
    path = calibration_path(cache, paths, model_tag)
    document = {
        **calibration.to_json(),
        **(evidence or {}),
        "model_tag": model_tag,
        "registries": [str(p) for p in paths],
    }
    cache.write_json(path, document)
    return path


def load_calibration(cache: RegistryCache, paths: Sequence[str | Path], model_tag: str) -> Calibration:
    """The registry's own calibration, else the defaults."""
    document = cache.read_json(calibration_path(cache, paths, model_tag))
    return Calibration.from_json(document) if isinstance(document, dict) else Calibration()
