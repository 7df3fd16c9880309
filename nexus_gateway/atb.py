"""The ``.atb`` file: one tool schema compiled to KV rows, read back by ``mmap``.

Layout (little-endian; docs/atb-format.md has the full table)::

    0       128-byte header (HEADER below)
    2 MiB   token ids, int32 [n_tokens]
    4 MiB…  K, float16 [n_layer, n_tokens, n_head_kv·head_dim]          (next 2 MiB boundary)
    …       V, float16 [n_layer, n_tokens, n_embd_v] (rows) or [n_layer, n_embd_v, n_tokens] (v_trans)

Sections start on 2 MiB boundaries so a mapping can use huge pages and a section never shares a page
with another; the gaps are holes in a sparse file, not bytes on disk. The checksum (CRC-32 of the
header with the checksum field zeroed, then the three sections) catches truncation and corruption;
a file that fails it is deleted by the caller and compiled again.

A block depends on the model (``fingerprint``), its RoPE, the cache types and V layout of the context
that compiled it, and on the text before it (``anchor``: a hash of the prefix tokens it was compiled
after, at position ``m0``). :func:`check_compatible` compares all of it with the live engine before a
splice; any difference is a :class:`BlockMismatch` naming the field, and the caller prefills instead.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
import zlib
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from .kv_state import KvGeometry

MAGIC = b"NATB"
VERSION = 1
HEADER_SIZE = 128
SECTION_ALIGN = 2 * 1024 * 1024
# magic, version, header size, model fingerprint, anchor, n_layer, n_head_kv, head_dim, n_rot,
# rope type, freq base, freq scale, YaRN ext/attn/beta fast/beta slow, YaRN original context,
# m0, n_tokens, k type, v type, v_trans, pad, tokens/K/V offsets, checksum, reserved
HEADER = struct.Struct("<4sHH16s16sIIIIiffffffIIIBBBxIIIQ8x")
assert HEADER.size == HEADER_SIZE


class BlockError(Exception):
    """Base of block problems; the caller prefills instead of splicing."""


class BlockCorrupt(BlockError):
    """Truncated or altered file (checksum, size or magic): delete and recompile."""


class BlockMismatch(BlockError):
    """A sound block compiled under another model, RoPE, cache layout or prefix."""


def anchor_of(prefix_tokens: list[int]) -> bytes:
    """What a block's values depend on besides the model: the exact tokens before it."""
    return hashlib.blake2b(np.asarray(prefix_tokens, dtype=np.int32).tobytes(), digest_size=16).digest()


@dataclass(frozen=True)
class BlockHeader:
    geometry: KvGeometry
    anchor: bytes
    m0: int
    n_tokens: int


@dataclass
class Block:
    """A loaded block: ``k``/``v`` are views of the mapping (read-only) or of arrays compiled in memory."""

    header: BlockHeader
    tokens: np.ndarray
    k: np.ndarray
    v: np.ndarray
    owned: bool = False  # a private copy (from the arena): the splice may rotate its keys in place

    @property
    def nbytes(self) -> int:
        return int(self.k.nbytes + self.v.nbytes)


def _align(offset: int) -> int:
    return -(-offset // SECTION_ALIGN) * SECTION_ALIGN


def _layout(header: BlockHeader) -> tuple[int, int, int, int, int]:
    g, n = header.geometry, header.n_tokens
    k_bytes = g.n_layer * n * g.n_embd_k * 2
    v_bytes = k_bytes  # n_embd_v == n_embd_k for every model the splice supports (checked on compile)
    tokens_at = SECTION_ALIGN
    k_at = _align(tokens_at + 4 * n)
    v_at = _align(k_at + k_bytes)
    return tokens_at, k_at, v_at, k_bytes, v_bytes


# The header holds the geometry's fields in KvGeometry's order, split around the anchor and m0/n_tokens:
# fingerprint | anchor | n_layer … yarn_orig_ctx (12) | m0, n_tokens | k_type, v_type, v_trans.
_MIDDLE = slice(1, 13)
_CACHE = slice(13, 16)


def _pack(header: BlockHeader, checksum: int) -> bytes:
    g = astuple(header.geometry)
    tokens_at, k_at, v_at, _, _ = _layout(header)
    k_type, v_type, v_trans = g[_CACHE]
    return HEADER.pack(
        MAGIC,
        VERSION,
        HEADER_SIZE,
        g[0],
        header.anchor,
        *g[_MIDDLE],
        header.m0,
        header.n_tokens,
        k_type,
        v_type,
        int(v_trans),
        tokens_at,
        k_at,
        v_at,
        checksum,
    )


def _checksum(header: BlockHeader, tokens: bytes | memoryview, k: bytes | memoryview, v: bytes | memoryview) -> int:
    crc = zlib.crc32(_pack(header, 0))
    for section in (tokens, k, v):
        crc = zlib.crc32(section, crc)
    return crc


def write_block(path: Path, block: Block) -> None:
    """Write atomically (temporary file, then rename): a crash never leaves half a block under the name."""
    header = block.header
    tokens = np.ascontiguousarray(block.tokens, dtype=np.int32).tobytes()
    k = np.ascontiguousarray(block.k, dtype=np.float16).tobytes()
    v = np.ascontiguousarray(block.v, dtype=np.float16).tobytes()
    tokens_at, k_at, v_at, k_bytes, v_bytes = _layout(header)
    if len(k) != k_bytes or len(v) != v_bytes:
        raise ValueError("K/V arrays do not match the header's shape")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as out:
        out.write(_pack(header, _checksum(header, tokens, k, v)))
        for offset, data in ((tokens_at, tokens), (k_at, k), (v_at, v)):
            out.seek(offset)
            out.write(data)
    os.replace(temporary, path)


def _header_from(raw: tuple[Any, ...]) -> tuple[BlockHeader, int]:
    fingerprint, anchor, middle = raw[3], raw[4], raw[5:17]
    m0, n_tokens, k_type, v_type, v_trans = raw[17:22]
    values: tuple[Any, ...] = (fingerprint, *middle, k_type, v_type, bool(v_trans))
    geometry = KvGeometry(*values)
    return BlockHeader(geometry, anchor, m0, n_tokens), raw[25]


def read_block(path: Path) -> Block:
    """Map the file, check magic, version, size and checksum; the arrays are read-only views of the map."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < HEADER_SIZE:
            raise BlockCorrupt(f"{path.name}: {size} bytes, shorter than the header")
        mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    raw = HEADER.unpack_from(mapping, 0)
    if raw[0] != MAGIC or raw[2] != HEADER_SIZE:
        raise BlockCorrupt(f"{path.name}: not an .atb file")
    if raw[1] != VERSION:
        raise BlockMismatch(f"{path.name}: .atb version {raw[1]}, this build reads {VERSION}")
    header, checksum = _header_from(raw)
    tokens_at, k_at, v_at, k_bytes, v_bytes = _layout(header)
    if size < v_at + v_bytes:
        raise BlockCorrupt(f"{path.name}: truncated ({size} of {v_at + v_bytes} bytes)")
    view = memoryview(mapping)
    tokens = view[tokens_at : tokens_at + 4 * header.n_tokens]
    k = view[k_at : k_at + k_bytes]
    v = view[v_at : v_at + v_bytes]
    if _checksum(header, tokens, k, v) != checksum:
        raise BlockCorrupt(f"{path.name}: checksum mismatch")
    g, n = header.geometry, header.n_tokens
    v_shape = (g.n_layer, g.n_embd_k, n) if g.v_trans else (g.n_layer, n, g.n_embd_k)
    return Block(
        header,
        np.frombuffer(tokens, dtype=np.int32),
        np.frombuffer(k, dtype=np.float16).reshape(g.n_layer, n, g.n_embd_k),
        np.frombuffer(v, dtype=np.float16).reshape(v_shape),
    )


def check_compatible(header: BlockHeader, live: KvGeometry, anchor: bytes) -> None:
    """Raise :class:`BlockMismatch` naming the first field where the block and the live context differ."""
    for field in fields(KvGeometry):
        ours, theirs = getattr(header.geometry, field.name), getattr(live, field.name)
        same = np.float32(ours) == np.float32(theirs) if isinstance(ours, float) else ours == theirs
        if not same:
            if field.name == "fingerprint":
                raise BlockMismatch(f"block compiled for another model ({ours.hex()[:12]} vs live {theirs.hex()[:12]})")
            raise BlockMismatch(f"block compiled for another {field.name} ({ours!r} vs live {theirs!r})")
    if header.anchor != anchor:
        raise BlockMismatch("block compiled after another prefix (the system prompt changed)")
