"""Where calibrations live: beside the registry cache, keyed by the registry files and the embedder.

``calibration/<sha256 of the registry files' bytes + model tag>.json`` for each calibrated registry,
and ``calibration/latest.json`` for the gateway to pick up when the config names none.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

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
    cache: RegistryCache, paths: Sequence[str | Path], model_tag: str, calibration: Calibration
) -> Path:
    path = calibration_path(cache, paths, model_tag)
    document = {**calibration.to_json(), "model_tag": model_tag, "registries": [str(p) for p in paths]}
    cache.write_json(path, document)
    cache.write_json(cache.root / "calibration" / "latest.json", document)
    return path


def load_calibration(
    cache: RegistryCache, paths: Sequence[str | Path] | None = None, model_tag: str | None = None
) -> Calibration:
    """The registry's own calibration, else the latest one, else the defaults."""
    candidates = []
    if paths and model_tag:
        candidates.append(calibration_path(cache, paths, model_tag))
    candidates.append(cache.root / "calibration" / "latest.json")
    for path in candidates:
        document = cache.read_json(path)
        if isinstance(document, dict):
            return Calibration.from_json(document)
    return Calibration()
