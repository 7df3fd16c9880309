"""Re-anchor compiled keys: rotate a block's F16 key rows from the position they were compiled at to
the position they are spliced at.

RoPE rotates each pair of a head's dimensions by ``pos · θ_i``; angles add, so moving a key by
``delta`` positions is one more rotation by ``delta · θ_i`` with ``θ_i = scale · base^(-2i/n_rot)``.
NEOX models (Qwen2) pair ``i`` with ``i + n_rot/2``; NORM models (Llama) pair ``2i`` with ``2i + 1``.

The C kernel (``nexus_gateway._kv``) and the numpy fallback take the same float32 cos/sin tables and do
the same float32 operations, so they agree to the bit (tested). ``NEXUS_PURE_PYTHON=1`` forces numpy.
"""

from __future__ import annotations

import os

import numpy as np

from .kv_state import ROPE_NEOX, KvGeometry

try:  # pragma: no cover - depends on the build
    if os.environ.get("NEXUS_PURE_PYTHON"):
        raise ImportError("NEXUS_PURE_PYTHON is set")
    from . import _kv as _native  # type: ignore[attr-defined]
except ImportError:
    _native = None


def backend() -> str:
    return "native" if _native is not None else "numpy"


def tables(delta: int, geometry: KvGeometry) -> tuple[np.ndarray, np.ndarray]:
    """float32 cos and sin of ``delta · θ_i`` for the ``n_rot/2`` pairs.

    The angles follow ggml's own recurrence (float32, ``θ_{i+1} = θ_i · base^(-2/n_rot)``) so that our
    rotation matches llama.cpp's K-shift on all but a few elements in 10⁴ (those by one F16 ulp: ggml
    may fuse multiply-adds); closed-form float64 angles differed on 1 in 400.
    """
    step = np.float32(geometry.freq_base) ** np.float32(-2.0 / geometry.n_rot)
    theta = np.empty(geometry.n_rot // 2, dtype=np.float32)
    value = np.float32(delta)
    for i in range(theta.shape[0]):
        theta[i] = value
        value = np.float32(value * step)
    theta = (theta * np.float32(geometry.freq_scale)).astype(np.float64)
    return np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)


def _rerotate_numpy(heads: np.ndarray, cos: np.ndarray, sin: np.ndarray, n_rot: int, neox: bool) -> None:
    half = n_rot // 2
    a = np.arange(half) if neox else np.arange(half) * 2
    b = a + half if neox else a + 1
    x0 = heads[:, a].astype(np.float32)
    x1 = heads[:, b].astype(np.float32)
    heads[:, a] = ((x0 * cos) - (x1 * sin)).astype(np.float16)
    heads[:, b] = ((x0 * sin) + (x1 * cos)).astype(np.float16)


def rerotate(keys: np.ndarray, delta: int, geometry: KvGeometry, *, use_native: bool | None = None) -> None:
    """Rotate ``keys`` (float16 [..., n_head_kv · head_dim], C-contiguous) by ``delta`` positions, in place."""
    if delta == 0:
        return
    if keys.dtype != np.float16 or not keys.flags.c_contiguous:
        raise ValueError("keys must be a C-contiguous float16 array")
    cos, sin = tables(delta, geometry)
    neox = geometry.rope_type == ROPE_NEOX
    native = _native is not None if use_native is None else use_native
    if native:
        if _native is None:
            raise RuntimeError("the native kernel is not built")
        _native.rerotate(keys, cos.tobytes(), sin.tobytes(), geometry.head_dim, geometry.n_rot, neox)
    else:
        _rerotate_numpy(keys.reshape(-1, geometry.head_dim), cos, sin, geometry.n_rot, neox)
