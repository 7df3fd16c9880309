"""llama.cpp's per-sequence state blob, read and written as numpy arrays.

``llama_state_seq_get_data`` / ``llama_state_seq_set_data`` are the public way in and out of one
sequence's KV cells; the blob is what ``llama_kv_cache::state_write`` emits (llama.cpp as vendored by
llama-cpp-python 0.3.36, unified cache, no per-cell extension):

    u32 magic 0xaf143cd8, i32 seq_id (the sequence it was read from; ignored on load)
    u32 n_stream
    per stream: u32 cell_count, then when cell_count > 0
        cell_count × (i32 pos, u32 n_seq_id = 1, i32 seq_id)
        u32 v_trans, u32 n_layer
        per layer: i32 k_type, u64 k_row_bytes, cell_count K rows
        v_trans = 0: per layer: i32 v_type, u64 v_row_bytes, cell_count V rows
        v_trans = 1: per layer: i32 v_type, u32 v_elem_bytes, u32 n_embd_v, n_embd_v × cell_count elements

Cells come in cache order, not position order; :func:`parse` sorts them by position. Only F16 caches
are handled (``K_TYPE_F16``): a quantised cache cannot be re-rotated in place, and the splice declines it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

GGML_TYPE_F16 = 1
STATE_MAGIC = 0xAF143CD8


class StateFormatError(ValueError):
    """The blob is not in the layout this module knows (another llama.cpp, a quantised cache, M-RoPE)."""


@dataclass
class SequenceState:
    """One sequence's cells, ordered by position.

    ``k``: float16 [n_layer, n_cells, n_embd_k]; ``v``: float16 [n_layer, n_cells, n_embd_v] when
    ``v_trans`` is false, [n_layer, n_embd_v, n_cells] when true (llama.cpp's layout without flash
    attention, kept as is so a round trip is byte-exact).
    """

    positions: np.ndarray
    k: np.ndarray
    v: np.ndarray
    v_trans: bool

    @property
    def n_cells(self) -> int:
        return int(self.positions.shape[0])


class _Reader:
    def __init__(self, data: bytes | memoryview) -> None:
        self.data = memoryview(data)
        self.offset = 0

    def unpack(self, fmt: str) -> tuple[int, ...]:
        size = struct.calcsize(fmt)
        if self.offset + size > len(self.data):
            raise StateFormatError("the state blob ends early")
        values = struct.unpack_from(fmt, self.data, self.offset)
        self.offset += size
        return values

    def array(self, count: int, dtype: type) -> np.ndarray:
        size = count * np.dtype(dtype).itemsize
        if self.offset + size > len(self.data):
            raise StateFormatError("the state blob ends early")
        values: np.ndarray = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.offset)
        self.offset += size
        return values


def parse(blob: bytes | memoryview) -> SequenceState | None:
    """The cells of a one-sequence blob, or None when the sequence is empty."""
    reader = _Reader(blob)
    magic, _seq, n_stream = reader.unpack("<IiI")
    if magic != STATE_MAGIC:
        raise StateFormatError(f"not a llama.cpp sequence state (magic {magic:#x})")
    if n_stream != 1:
        raise StateFormatError(f"{n_stream} KV streams: the splice needs a unified cache (kv_unified)")
    (cells,) = reader.unpack("<I")
    if cells == 0:
        return None
    meta = reader.array(cells * 3, np.int32).reshape(cells, 3)
    if np.any(meta[:, 1] != 1):
        raise StateFormatError("a cell belongs to several sequences in a one-sequence blob")
    v_trans, n_layer = reader.unpack("<II")
    k_layers = []
    for _ in range(n_layer):
        k_type, row_bytes = reader.unpack("<iQ")
        if k_type != GGML_TYPE_F16:
            raise StateFormatError(f"K cache type {k_type} is not F16")
        k_layers.append(reader.array(cells * row_bytes // 2, np.float16).reshape(cells, row_bytes // 2))
    v_layers = []
    for _ in range(n_layer):
        if v_trans:
            v_type, elem_bytes, n_embd_v = reader.unpack("<iII")
            if v_type != GGML_TYPE_F16 or elem_bytes != 2:
                raise StateFormatError(f"V cache type {v_type} is not F16")
            v_layers.append(reader.array(n_embd_v * cells, np.float16).reshape(n_embd_v, cells))
        else:
            v_type, row_bytes = reader.unpack("<iQ")
            if v_type != GGML_TYPE_F16:
                raise StateFormatError(f"V cache type {v_type} is not F16")
            v_layers.append(reader.array(cells * row_bytes // 2, np.float16).reshape(cells, row_bytes // 2))
    if reader.offset != len(reader.data):
        raise StateFormatError("the state blob has trailing bytes (a per-cell extension: M-RoPE or PLE?)")
    order = np.argsort(meta[:, 0], kind="stable")
    k = np.stack(k_layers)[:, order]
    v = np.stack(v_layers)
    v = v[:, :, order] if v_trans else v[:, order]
    return SequenceState(meta[order, 0].copy(), np.ascontiguousarray(k), np.ascontiguousarray(v), bool(v_trans))


def build(seq: int, state: SequenceState) -> bytes:
    """A blob that ``llama_state_seq_set_data`` loads into sequence ``seq`` (it replaces that sequence)."""
    cells = state.n_cells
    n_layer = state.k.shape[0]
    meta = np.empty((cells, 3), dtype=np.int32)
    meta[:, 0] = state.positions
    meta[:, 1] = 1
    meta[:, 2] = seq
    parts = [struct.pack("<IiII", STATE_MAGIC, seq, 1, cells), meta.tobytes()]
    parts.append(struct.pack("<II", int(state.v_trans), n_layer))
    k_row = state.k.shape[2] * 2
    for layer in range(n_layer):
        parts.append(struct.pack("<iQ", GGML_TYPE_F16, k_row))
        parts.append(np.ascontiguousarray(state.k[layer], dtype=np.float16).tobytes())
    for layer in range(n_layer):
        if state.v_trans:
            parts.append(struct.pack("<iII", GGML_TYPE_F16, 2, state.v.shape[1]))
        else:
            parts.append(struct.pack("<iQ", GGML_TYPE_F16, state.v.shape[2] * 2))
        parts.append(np.ascontiguousarray(state.v[layer], dtype=np.float16).tobytes())
    return b"".join(parts)


ROPE_NORM = 0
ROPE_NEOX = 2


@dataclass(frozen=True)
class KvGeometry:
    """What a KV block depends on: the model (fingerprint, shapes, RoPE) and the context's cache layout.

    ``fingerprint`` hashes the GGUF's metadata and tensor layout (see ``LlamaEngine.geometry``); a block
    compiled under one geometry is spliced only under an equal one (``atb.check_compatible``).
    """

    fingerprint: bytes
    n_layer: int
    n_head_kv: int
    head_dim: int
    n_rot: int
    rope_type: int
    freq_base: float
    freq_scale: float
    yarn_ext_factor: float
    yarn_attn_factor: float
    yarn_beta_fast: float
    yarn_beta_slow: float
    yarn_orig_ctx: int
    k_type: int
    v_type: int
    v_trans: bool

    @property
    def n_embd_k(self) -> int:
        return self.n_head_kv * self.head_dim

    def why_not_spliceable(self) -> str | None:
        """None when our re-rotation can re-anchor this cache's keys, else the reason it cannot."""
        if self.rope_type not in (ROPE_NORM, ROPE_NEOX):
            return f"RoPE type {self.rope_type} (M-RoPE/vision) positions cannot be shifted by one rotation"
        if self.k_type != GGML_TYPE_F16 or self.v_type != GGML_TYPE_F16:
            return "the KV cache is quantised; only an F16 cache is re-rotated in place"
        if self.yarn_ext_factor > 0:
            return "YaRN RoPE scaling: a second rotation would apply its magnitude scale twice"
        return None
